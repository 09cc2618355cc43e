// SPDX-License-Identifier: GPL-3.0-or-later
import Logging
import Synchronization

/// The records a `Logger` made, kept for a test to read: `RecordedLog().logger(label:)` gives a
/// logger whose every record (at `level` and above) lands here.
public final class RecordedLog: Sendable {
    public struct Record: Sendable, Equatable, CustomStringConvertible {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]

        public init(level: Logger.Level, message: String, metadata: [String: String]) {
            self.level = level
            self.message = message
            self.metadata = metadata
        }

        public var description: String {
            let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return ([level.rawValue, message] + fields).joined(separator: " ")
        }
    }

    private let records = Mutex<[Record]>([])

    public init() {}

    /// Every record so far, oldest first.
    public var all: [Record] { records.withLock { $0 } }

    public func logger(label: String = "test", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ record: Record) {
        records.withLock { $0.append(record) }
    }

    private struct Handler: LogHandler {
        let log: RecordedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            log.append(Record(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
