import Glibc
import Logging

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
        // Straight to fd 2, the whole line in one write(2) when the kernel takes it at once.
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
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
