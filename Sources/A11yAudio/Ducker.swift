// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import CPulse
import Logging
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// What ducking does: how far other streams are lowered while speech is audible, and where the
/// streams lowered are remembered (so that a11yd restores them after a crash).
public struct Ducking: Sendable, Equatable {
    /// dB by which every other playback stream on a11yd's sink is lowered while it speaks; nil: never.
    public var lowerBy: Double?
    /// The streams lowered and their volumes before, kept while they are lowered; read at each
    /// connection to restore what a previous a11yd (crashed, killed) left lowered. nil: not kept.
    public var stateFile: String?

    public init(lowerBy: Double? = nil, stateFile: String? = nil) {
        self.lowerBy = lowerBy
        self.stateFile = stateFile
    }

    public static let off = Ducking()
}

/// Lowers the other playback streams (sink inputs) on a11yd's sink while speech is audible and
/// restores them after, through libpulse's introspection API. A stream that appears while speech
/// is audible is lowered too (sink-input events). Every stream lowered is written to the state
/// file first, and removed from it once restored, so that no exit path leaves one lowered for
/// good: on each connection, a stream still at the volume a11yd gave it, with the same identity,
/// gets its volume back.
///
/// Used only with the mainloop lock held (by `PulseOutput`, or by libpulse callbacks).
final class Ducker {
    /// One stream lowered: its index, what identifies it (an index is reused after a server
    /// restart), the volume it had and the volume a11yd gave it, per channel.
    struct Lowered: Equatable {
        var index: UInt32
        var identity: String
        var original: [UInt32]
        var lowered: [UInt32]
    }

    /// How long speech must stay inaudible before the others get their volume back: longer than
    /// the few milliseconds the stream is corked between two items, so the music does not jump up
    /// and down between them, and well under the 100 ms a listener would notice.
    static let releaseDelayUsec: UInt64 = 40_000

    private let settings: Ducking
    private let logger: Logger
    private let mainloop: ThreadedMainloop
    private var releaseTimer: OpaquePointer?
    private var context: OpaquePointer?
    /// a11yd's own stream and the sink it plays to, while speech is audible.
    private var speaking: (stream: UInt32, sink: UInt32)?
    private var lowered: [UInt32: Lowered] = [:]
    /// Introspection requests whose callbacks reach `self`: cancelled in `disconnect()`.
    private var operations: [OpaquePointer] = []

    init(settings: Ducking, mainloop: ThreadedMainloop, logger: Logger) {
        self.settings = settings
        self.mainloop = mainloop
        self.logger = logger
        lowered = Self.read(settings.stateFile)
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    private static func from(_ userdata: UnsafeMutableRawPointer?) -> Ducker? {
        userdata.map { Unmanaged<Ducker>.fromOpaque($0).takeUnretainedValue() }
    }

    // MARK: Driven by PulseOutput

    /// A new context is ready: restore what an earlier connection (or process) left lowered. The
    /// streams appearing are told by `sinkInput`.
    func connected(_ context: OpaquePointer) {
        disconnect()
        self.context = context
        recover()
    }

    /// The context is gone (callbacks and requests end with it). What was lowered stays in the
    /// state file and in memory, to be restored at the next connection.
    func disconnect() {
        for operation in operations {
            pa_operation_cancel(operation)
            pa_operation_unref(operation)
        }
        operations = []
        cancelRelease()
        context = nil
        speaking = nil
    }

    /// Speech became audible on `stream` (playing to `sink`), or stopped being audible (`nil`).
    func setSpeaking(_ now: (stream: UInt32, sink: UInt32)?) {
        guard settings.lowerBy != nil, let context else { return }
        let was = speaking
        speaking = now
        if now != nil { cancelRelease() }
        if let now, was == nil || was!.sink != now.sink {
            track(pa_context_get_sink_input_info_list(context, { _, info, eol, userdata in
                guard eol == 0, let info else { return }
                Ducker.from(userdata)?.consider(info.pointee)
            }, userdata))
        } else if now == nil, was != nil {
            armRelease()
        }
    }

    /// Gives every stream lowered its volume back (speech ended, or a11yd is closing).
    func restoreAll() {
        cancelRelease()
        for entry in lowered.values { restore(entry) }
    }

    private func armRelease() {
        guard releaseTimer == nil else { return }
        releaseTimer = mainloop.timer(afterUsec: Self.releaseDelayUsec, userdata: userdata) { _, _, _, userdata in
            guard let ducker = Ducker.from(userdata) else { return }
            // Still inaudible: give the volumes back (restoreAll frees the timer).
            if ducker.speaking == nil { ducker.restoreAll() } else { ducker.cancelRelease() }
        }
    }

    private func cancelRelease() { mainloop.cancel(&releaseTimer) }

    /// Whether requests are still in flight (for a closing output that waits for its restores to
    /// reach the server); forgets those that completed.
    func hasPendingOperations() -> Bool {
        operations.removeAll { operation in
            guard pa_operation_get_state(operation) != PA_OPERATION_RUNNING else { return false }
            pa_operation_unref(operation)
            return true
        }
        return !operations.isEmpty
    }

    // MARK: libpulse's answers

    /// A stream on the server appeared, changed or went (the connection follows them all).
    func sinkInput(_ index: UInt32, _ change: ServerConnection.SinkInputChange) {
        if change == .removed {
            if lowered.removeValue(forKey: index) != nil { save() }
        } else if change == .new, settings.lowerBy != nil, speaking != nil, let context {
            track(pa_context_get_sink_input_info(context, index, { _, info, eol, userdata in
                guard eol == 0, let info else { return }
                Ducker.from(userdata)?.consider(info.pointee)
            }, userdata))
        }
    }

    /// Whether `info` is a stream of the connection `context` (a stream a module made has no client;
    /// `UInt32.max` is libpulse's PA_INVALID_INDEX, which Swift does not import).
    private static func isOwn(_ info: pa_sink_input_info, _ context: OpaquePointer) -> Bool {
        let own = pa_context_get_index(context)
        return own != UInt32.max && info.client == own
    }

    /// Lowers `info` if it is another stream on the sink a11yd speaks to: not one of a11yd's own
    /// (its connection plays on two).
    private func consider(_ info: pa_sink_input_info) {
        guard let speaking, let lowerBy = settings.lowerBy, let context,
            info.index != speaking.stream, !Self.isOwn(info, context), info.sink == speaking.sink,
            lowered[info.index] == nil,
            info.has_volume != 0, info.volume_writable != 0
        else { return }
        let original = Self.values(info.volume)
        var volume = info.volume
        var quieter = info.volume
        pa_sw_cvolume_multiply_scalar(&quieter, &volume, pa_sw_volume_from_dB(-lowerBy))
        let entry = Lowered(
            index: info.index, identity: Self.identity(info), original: original, lowered: Self.values(quieter))
        // Remembered before it is lowered: a crash in between leaves a record, never a lowered stream without one.
        lowered[info.index] = entry
        save()
        if let operation = pa_context_set_sink_input_volume(context, info.index, &quieter, nil, nil) {
            track(operation)
        }
        logger.debug("ducked a stream", metadata: ["sink-input": "\(info.index)", "identity": "\(entry.identity)"])
    }

    private func restore(_ entry: Lowered) {
        guard let context, var volume = Self.cvolume(entry.original) else {
            lowered[entry.index] = nil
            save()
            return
        }
        if let operation = pa_context_set_sink_input_volume(context, entry.index, &volume, nil, nil) {
            track(operation)
        }
        lowered[entry.index] = nil
        save()
    }

    /// Lists the sink inputs once and restores each entry whose stream is still the one lowered, at
    /// the volume it was given; the others (the stream is gone, or someone set its volume since)
    /// are forgotten once the listing is complete.
    private func recover() {
        guard let context, !lowered.isEmpty else { return }
        track(pa_context_get_sink_input_info_list(context, { _, info, eol, userdata in
            guard let ducker = Ducker.from(userdata) else { return }
            if eol == 0, let info {
                ducker.recover(info.pointee)
            } else {
                ducker.recoveryEnded(complete: eol > 0)
            }
        }, userdata))
    }

    private func recover(_ info: pa_sink_input_info) {
        guard let entry = lowered[info.index], Self.identity(info) == entry.identity,
            Self.values(info.volume) == entry.lowered
        else { return }
        logger.info("restoring a stream a11yd had lowered", metadata: ["sink-input": "\(info.index)"])
        restore(entry)
    }

    private func recoveryEnded(complete: Bool) {
        // Whatever is left was not found as it was left: not a11yd's to restore any more.
        guard complete, speaking == nil, !lowered.isEmpty else { return }
        lowered = [:]
        save()
    }

    private func track(_ operation: OpaquePointer?) {
        guard let operation else { return }
        _ = hasPendingOperations()  // prunes the completed ones
        operations.append(operation)
    }

    // MARK: Values

    static func values(_ volume: pa_cvolume) -> [UInt32] {
        let count = min(Int(volume.channels), Int(PA_CHANNELS_MAX))
        return withUnsafeBytes(of: volume.values) { raw in Array(raw.bindMemory(to: UInt32.self).prefix(count)) }
    }

    static func cvolume(_ values: [UInt32]) -> pa_cvolume? {
        guard (1...Int(PA_CHANNELS_MAX)).contains(values.count) else { return nil }
        var volume = pa_cvolume()
        volume.channels = UInt8(values.count)
        withUnsafeMutableBytes(of: &volume.values) { raw in
            for (i, value) in values.enumerated() {
                raw.storeBytes(of: min(value, PA_VOLUME_MAX), toByteOffset: i * MemoryLayout<UInt32>.stride, as: UInt32.self)
            }
        }
        return pa_cvolume_valid(&volume) != 0 ? volume : nil
    }

    /// What tells this stream from another that gets its index later: its owner's process and
    /// name, and its own name (tabs and newlines removed, for the state file).
    static func identity(_ info: pa_sink_input_info) -> String {
        func property(_ key: String) -> String {
            guard let list = info.proplist, let value = pa_proplist_gets(list, key) else { return "" }
            return String(decoding: Array(String(cString: value).utf8.prefix(200)), as: UTF8.self)
        }
        let name = info.name.map { String(cString: $0) } ?? ""
        return [property(PA_PROP_APPLICATION_PROCESS_ID), property(PA_PROP_APPLICATION_NAME), name]
            .joined(separator: "|")
            .map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }
            .reduce(into: "") { $0.append($1) }
    }

    // MARK: The state file: one line per stream, "index TAB identity TAB original TAB lowered",
    // volumes as comma-separated channel values.

    private func save() {
        guard let path = settings.stateFile else { return }
        if lowered.isEmpty {
            unlink(path)
            return
        }
        let text = lowered.values.sorted { $0.index < $1.index }.map { entry in
            "\(entry.index)\t\(entry.identity)\t\(entry.original.map(String.init).joined(separator: ","))\t\(entry.lowered.map(String.init).joined(separator: ","))\n"
        }.joined()
        do {
            try Self.writeAtomically(text, to: path)
        } catch {
            logger.warning("cannot write the ducking state file", metadata: ["path": "\(path)", "errno": "\(error.rawValue)"])
        }
    }

    static func read(_ path: String?) -> [UInt32: Lowered] {
        guard let path, let text = try? TextFile.read(path, limit: 1 << 20) else { return [:] }
        var entries: [UInt32: Lowered] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 4, let index = UInt32(fields[0]) else { continue }
            let original = fields[2].split(separator: ",").compactMap { UInt32($0) }
            let lowered = fields[3].split(separator: ",").compactMap { UInt32($0) }
            guard !original.isEmpty, original.count == lowered.count else { continue }
            entries[index] = Lowered(index: index, identity: String(fields[1]), original: original, lowered: lowered)
        }
        return entries
    }

    /// Writes `text` to a temporary file beside `path` and renames it over `path` (owner-only).
    static func writeAtomically(_ text: String, to path: String) throws(Errno) {
        try? Directory.make(FilePath(path).removingLastComponent().string, mode: 0o700)
        let temporary = path + ".new"
        let descriptor = try SystemCall.typed {
            try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: .ownerReadWrite)
        }
        do {
            try SystemCall.typed { _ = try descriptor.writeAll(text.utf8) }
        } catch {
            try? descriptor.close()
            unlink(temporary)
            throw error
        }
        try? descriptor.close()
        guard rename(temporary, path) == 0 else { throw SystemCall.lastError }
    }
}
