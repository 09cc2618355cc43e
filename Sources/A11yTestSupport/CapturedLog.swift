// SPDX-License-Identifier: GPL-3.0-or-later
import Logging
import Synchronization

/// A `Logger` whose messages are kept for a test to read (every level), rather than written.
public final class CapturedLog: Sendable {
    public struct Entry: Sendable, Equatable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]

        public init(level: Logger.Level, message: String, metadata: [String: String]) {
            self.level = level
            self.message = message
            self.metadata = metadata
        }
    }

    private let entries = Mutex<[Entry]>([])

    public init() {}

    public var all: [Entry] { entries.withLock { $0 } }

    /// A logger writing here.
    public func logger(label: String = "a11yd.test") -> Logger {
        Logger(label: label) { _ in Handler(log: self) }
    }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Entry(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
