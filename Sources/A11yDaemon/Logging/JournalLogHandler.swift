// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import Logging
import SystemPackage

/// Logs one line per message to stderr in a form journald reads well: a `<N>` priority prefix
/// (sd-daemon(3)) and no timestamp when stderr is the journal (it stamps lines itself), a
/// timestamp and a level word otherwise.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let toJournal: Bool

    public init(label: String, environment: [String: String]) {
        self.label = label
        // systemd sets JOURNAL_STREAM to the device:inode of the journal stream it gave us.
        self.toJournal = environment["JOURNAL_STREAM"].map { !$0.isEmpty } ?? false
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text = "\(event.message)" + (fields.isEmpty ? "" : " " + fields)
        let line: String
        if toJournal {
            line = "<\(Self.syslogPriority(event.level))>\(text)\n"
        } else {
            let stamp = LogTimestamp.now()
            line = "\(stamp) \(event.level) \(label): \(text)\n"
        }
        // Straight to fd 2, the whole line in one write(2) when the kernel takes it at once (writeAll
        // writes the rest of a short write, and retries on EINTR). A log line that cannot be written
        // has nowhere to be reported.
        _ = try? FileDescriptor.standardError.writeAll(line.utf8)
    }

    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
