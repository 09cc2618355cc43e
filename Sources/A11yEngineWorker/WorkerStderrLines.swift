// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Logging

/// What an engine worker writes on its stderr, made into messages for a11yd's log: pure, fed the
/// bytes as they are read and the time (`WorkerStderrReader` reads the pipe and logs what it
/// returns), so that a worker, or a library in it (onnxruntime's colour-coded warnings), never
/// writes into a11yd's log itself.
///
/// - Terminal escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL or ESC \`, any other
///   `ESC x`), control characters (C0 but tab, DEL, C1), Unicode's bidirectional controls and line
///   separators are removed; bytes that are not UTF-8 become U+FFFD. A line ends at LF or CR.
/// - A line keeps at most `lineBytes` bytes and then says how many more it had; those are counted,
///   not kept, so memory is bounded whatever the worker writes.
/// - The level comes from the line (`level(of:)`); a Python traceback is one message, its lines
///   joined by " | ", at most `tracebackLines` of them and `tracebackBytes` in all.
/// - At most `linesPerWindow` messages and `bytesPerWindow` bytes of them per `window`; past that,
///   lines are counted and dropped, and a note says how many once the window is over.
struct WorkerStderrLines {
    /// One message for the log.
    struct Record: Equatable, Sendable {
        var level: Logger.Level
        var message: String
    }

    struct Limits: Sendable {
        var lineBytes = 1024
        var tracebackLines = 30
        var tracebackBytes = 4096
        var window: Duration = .seconds(10)
        var linesPerWindow = 40
        var bytesPerWindow = 16 * 1024
        /// How long a traceback waits for its last line before it is logged as it stands.
        var tracebackWait: Duration = .milliseconds(500)
    }

    let limits: Limits

    /// Where the byte stream stands in an escape sequence.
    private enum Escape {
        case none
        /// After ESC.
        case escape
        /// After ESC and intermediate bytes (`ESC ( B`): the next byte ends it.
        case intermediate
        /// After `ESC [`: parameter and intermediate bytes until a final byte.
        case csi
        /// After `ESC ]`: anything until BEL or `ESC \`.
        case osc
        /// ESC inside an OSC string.
        case oscEscape
    }

    private var escape = Escape.none
    /// The line being read, at most `limits.lineBytes`.
    private var line: [UInt8] = []
    /// Bytes of the line past `limits.lineBytes`.
    private var cut = 0

    /// A traceback being gathered: its lines so far, their bytes, the lines left out, and when it
    /// began.
    private struct Traceback {
        var lines: [String]
        var bytes: Int
        var leftOut: Int
        var began: ContinuousClock.Instant
    }

    private var traceback: Traceback?

    private var windowStart: ContinuousClock.Instant?
    private var linesInWindow = 0
    private var bytesInWindow = 0
    /// Lines dropped in the current window, said when it is over.
    private var dropped = 0

    init(limits: Limits = Limits()) {
        self.limits = limits
        line.reserveCapacity(limits.lineBytes)
    }

    /// The messages `bytes`, just read, complete.
    mutating func read(_ bytes: some Sequence<UInt8>, now: ContinuousClock.Instant) -> [Record] {
        var records = closeWindowIfOver(now: now)
        for byte in bytes where take(byte) {
            endLine(now: now, into: &records)
        }
        return records
    }

    /// Nothing was read until `now`: a traceback whose last line has not come within
    /// `limits.tracebackWait`, and the note of a window's drops once it is over.
    mutating func tick(now: ContinuousClock.Instant) -> [Record] {
        var records = closeWindowIfOver(now: now)
        if let pending = traceback, now - pending.began >= limits.tracebackWait {
            flushTraceback(now: now, into: &records)
        }
        return records
    }

    /// When `tick` has something to do, if ever: the reader waits for bytes at most until then.
    var nextTick: ContinuousClock.Instant? {
        let tracebackDue = traceback.map { $0.began + limits.tracebackWait }
        let windowDue = dropped > 0 ? windowStart.map { $0 + limits.window } : nil
        return [tracebackDue, windowDue].compactMap { $0 }.min()
    }

    /// The pipe closed: the last line even without its end, a traceback as it stands, and how many
    /// lines were dropped (whether or not the window is over).
    mutating func finish(now: ContinuousClock.Instant) -> [Record] {
        var records = closeWindowIfOver(now: now)
        escape = .none
        if !line.isEmpty || cut > 0 { endLine(now: now, into: &records) }
        if traceback != nil { flushTraceback(now: now, into: &records) }
        if dropped > 0 {
            records.append(dropNote())
            dropped = 0
        }
        return records
    }

    // MARK: Bytes

    /// Takes one byte: true when it ends a line, false when it was kept or skipped.
    private mutating func take(_ byte: UInt8) -> Bool {
        switch escape {
        case .none:
            break
        case .escape:
            switch byte {
            case UInt8(ascii: "["): escape = .csi
            case UInt8(ascii: "]"): escape = .osc
            case 0x20...0x2F: escape = .intermediate
            case 0x0A, 0x0D: escape = .none; return true
            default: escape = .none
            }
            return false
        case .intermediate:
            if !(0x20...0x2F).contains(byte) { escape = .none }
            if byte == 0x0A || byte == 0x0D { return true }
            return false
        case .csi:
            switch byte {
            case 0x20...0x3F: return false
            case 0x40...0x7E: escape = .none; return false
            default: escape = .none  // not a CSI after all: the byte is read as any other
            }
        case .osc:
            switch byte {
            case 0x07: escape = .none
            case 0x1B: escape = .oscEscape
            case 0x0A, 0x0D: escape = .none; return true
            default: break
            }
            return false
        case .oscEscape:
            escape = .none
            if byte != UInt8(ascii: "\\") { break }
            return false
        }
        switch byte {
        case 0x0A, 0x0D:
            return true
        case 0x1B:
            escape = .escape
        case 0x09:
            keep(UInt8(ascii: " "))
        case 0x00...0x1F, 0x7F:
            break
        default:
            keep(byte)
        }
        return false
    }

    private mutating func keep(_ byte: UInt8) {
        if line.count < limits.lineBytes {
            line.append(byte)
        } else if cut < Int.max {
            cut += 1
        }
    }

    // MARK: Lines

    /// The line read so far is whole: to the traceback being gathered, or a message of its own.
    private mutating func endLine(now: ContinuousClock.Instant, into records: inout [Record]) {
        var cutBytes = cut
        var bytes = line[...]
        cut = 0
        // A line cut in the middle of a character ends before it.
        if cutBytes > 0 {
            bytes = Self.wholeCharacters(bytes)
            cutBytes += line.count - bytes.count
        }
        var text = Self.clean(String(decoding: bytes, as: UTF8.self))
        line.removeAll(keepingCapacity: true)
        if cutBytes > 0 { text += "… (cut: \(cutBytes) more bytes)" }
        let indented = text.first == " "
        let trimmed = text.trimmed
        guard !trimmed.isEmpty else { return }
        if traceback != nil {
            gather(trimmed)
            // The exception's line, not indented, ends the traceback.
            if !indented { flushTraceback(now: now, into: &records) }
            return
        }
        if trimmed.hasPrefix("Traceback (most recent call last)") {
            traceback = Traceback(lines: [], bytes: 0, leftOut: 0, began: now)
            gather(trimmed)
            return
        }
        let (level, message) = Self.level(of: trimmed)
        admit(Record(level: level, message: message), now: now, into: &records)
    }

    private mutating func gather(_ text: String) {
        guard var pending = traceback else { return }
        let separator = pending.lines.isEmpty ? 0 : 3
        if pending.lines.count < limits.tracebackLines, pending.bytes + separator + text.utf8.count <= limits.tracebackBytes {
            pending.lines.append(text)
            pending.bytes += separator + text.utf8.count
        } else if pending.leftOut < Int.max {
            pending.leftOut += 1
        }
        traceback = pending
    }

    private mutating func flushTraceback(now: ContinuousClock.Instant, into records: inout [Record]) {
        guard let pending = traceback else { return }
        traceback = nil
        var message = pending.lines.joined(separator: " | ")
        if pending.leftOut > 0 { message += " | … (\(pending.leftOut) more lines)" }
        admit(Record(level: .error, message: message), now: now, into: &records)
    }

    /// Logged if the window has room for it, else counted as dropped.
    private mutating func admit(_ record: Record, now: ContinuousClock.Instant, into records: inout [Record]) {
        records += closeWindowIfOver(now: now)
        if windowStart == nil { windowStart = now }
        let bytes = record.message.utf8.count
        guard dropped == 0, linesInWindow < limits.linesPerWindow, bytesInWindow + bytes <= limits.bytesPerWindow else {
            if dropped < Int.max { dropped += 1 }
            return
        }
        linesInWindow += 1
        bytesInWindow += bytes
        records.append(record)
    }

    /// The note of the window's drops once it is over, and a new window.
    private mutating func closeWindowIfOver(now: ContinuousClock.Instant) -> [Record] {
        guard let start = windowStart, now - start >= limits.window else { return [] }
        windowStart = nil
        linesInWindow = 0
        bytesInWindow = 0
        guard dropped > 0 else { return [] }
        defer { dropped = 0 }
        return [dropNote()]
    }

    private func dropNote() -> Record {
        Record(
            level: .warning,
            message: "\(dropped) more \(dropped == 1 ? "message" : "messages") dropped (at most \(limits.linesPerWindow) and \(limits.bytesPerWindow) bytes in \(limits.window))")
    }

    // MARK: Text

    /// The level a line says it has, and its text without a prefix the log says otherwise:
    /// - onnxruntime's `[W:onnxruntime:…]` (its severity letter V, I, W, E, F; after its timestamp);
    /// - the Piper worker's own `a11yd-piper: ` lines: a problem it reports, a warning;
    /// - a worker's or the launcher's `a11yd engine worker: `: why it cannot serve, an error;
    /// - Python's `Fatal Python error`, critical; a warning (`…Warning: `), a warning; an
    ///   exception's line (`…Error: `), an error;
    /// - anything else: a notice.
    static func level(of text: String) -> (Logger.Level, String) {
        if let severity = onnxruntimeSeverity(text) { return (severity, text) }
        for (prefix, level) in [("a11yd-piper: ", Logger.Level.warning), ("a11yd engine worker: ", .error)] where text.hasPrefix(prefix) {
            return (level, text.dropFirst(prefix.count).trimmed)
        }
        if text.hasPrefix("Fatal Python error") { return (.critical, text) }
        if text.contains("Warning: ") { return (.warning, text) }
        if text.contains("Error: ") || text.contains("Exception: ") { return (.error, text) }
        return (.notice, text)
    }

    /// `[X:` with X one of onnxruntime's severity letters, within the line's first 48 characters
    /// (its timestamp comes first), followed by a name (`onnxruntime`, `Default`…).
    static func onnxruntimeSeverity(_ text: String) -> Logger.Level? {
        let head = Array(text.utf8.prefix(48))
        guard head.count >= 4 else { return nil }
        for index in 0..<(head.count - 3) where head[index] == UInt8(ascii: "[") && head[index + 2] == UInt8(ascii: ":") {
            let name = head[index + 3]
            guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(name) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(name) else { continue }
            switch head[index + 1] {
            case UInt8(ascii: "V"): return .debug
            case UInt8(ascii: "I"): return .info
            case UInt8(ascii: "W"): return .warning
            case UInt8(ascii: "E"): return .error
            case UInt8(ascii: "F"): return .critical
            default: continue
            }
        }
        return nil
    }

    /// Without C1 controls (what survives of them as UTF-8), bidirectional controls, which would
    /// reorder what a reader of the log sees, and line and paragraph separators.
    static func clean(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: continue
            case 0x2028, 0x2029: scalars.append(" ")
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// `bytes` without an incomplete UTF-8 sequence at its end.
    static func wholeCharacters(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        // The last lead byte, at most 3 bytes back, and how long its sequence should be.
        var index = bytes.endIndex
        var back = 0
        while index > bytes.startIndex, back < 4 {
            index -= 1
            back += 1
            let byte = bytes[index]
            guard byte & 0xC0 == 0x80 else {
                let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                return back >= length ? bytes : bytes[bytes.startIndex..<index]
            }
        }
        return bytes
    }
}
