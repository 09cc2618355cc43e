import Foundation
import TOMLKit

extension DaemonConfiguration {
    /// The file read when none is named: `$XDG_CONFIG_HOME/a11yd/a11yd.toml`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        return configHome + "/a11yd/a11yd.toml"
    }

    /// Reads a file. A missing file at the default path is not an error (defaults apply); a
    /// missing file that was named explicitly is.
    public static func load(path: String, mustExist: Bool) throws(ConfigurationError) -> DaemonConfiguration {
        guard FileManager.default.fileExists(atPath: path) else {
            if mustExist { throw ConfigurationError.unreadable(path: path, "no such file") }
            return DaemonConfiguration()
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError.unreadable(path: path, "cannot read the file as UTF-8 text")
        }
        return try parse(text, path: path)
    }

    /// Parses TOML, refusing unknown keys and out-of-range values so that a typo never goes unnoticed.
    public static func parse(_ text: String, path: String = "<config>") throws(ConfigurationError) -> DaemonConfiguration {
        do {
            return try parseTable(text, path: path)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError.malformed(path: path, "\(error)")
        }
    }

    private static func parseTable(_ text: String, path: String) throws -> DaemonConfiguration {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError.malformed(path: path, "\(error.description) (line \(error.source.begin.line))")
        } catch {
            throw ConfigurationError.malformed(path: path, "\(error)")
        }
        let reader = TableReader(path: path)
        var configuration = DaemonConfiguration()
        try reader.section(table, "voice", known: ["language", "rate", "pitch", "volume"]) { voice in
            if let language = try reader.string(voice, "voice", "language") {
                configuration.voice.language = language.isEmpty ? nil : language
            }
            if let rate = try reader.int(voice, "voice", "rate", in: 80...450) { configuration.voice.rate = rate }
            if let pitch = try reader.int(voice, "voice", "pitch", in: 0...100) { configuration.voice.pitch = pitch }
            if let volume = try reader.int(voice, "voice", "volume", in: 0...200) { configuration.voice.volume = volume }
        }
        try reader.section(table, "queue", known: ["limit"]) { queue in
            if let limit = try reader.int(queue, "queue", "limit", in: 1...10_000) { configuration.queueLimit = limit }
        }
        try reader.section(table, "earcon", known: ["screen_changed"]) { earcon in
            if let on = try reader.bool(earcon, "earcon", "screen_changed") { configuration.earcon = on }
        }
        try reader.section(table, "audio", known: ["server"]) { audio in
            if let server = try reader.string(audio, "audio", "server") {
                configuration.audioServer = server.isEmpty ? nil : server
            }
        }
        try reader.section(table, "daemon", known: ["socket", "autospawn", "idle_exit_seconds", "allowed_uids"]) { daemon in
            if let socket = try reader.string(daemon, "daemon", "socket") {
                configuration.socketPath = socket.isEmpty ? nil : socket
            }
            if let on = try reader.bool(daemon, "daemon", "autospawn") { configuration.autospawn = on }
            if let seconds = try reader.int(daemon, "daemon", "idle_exit_seconds", in: 0...86_400) {
                configuration.idleExitSeconds = seconds
            }
            if let uids = daemon["allowed_uids"] {
                guard let array = uids.array, let numbers = Optional(array.compactMap(\.int)), numbers.count == array.count,
                    let allowed = Optional(numbers.compactMap(UInt32.init(exactly:))), allowed.count == numbers.count
                else {
                    throw ConfigurationError.invalidValue(path: path, "'daemon.allowed_uids' must be a list of user ids, e.g. [1001]")
                }
                configuration.allowedUIDs = allowed
            }
        }
        try reader.section(table, "ssip", known: ["enabled", "socket"]) { ssip in
            if let on = try reader.bool(ssip, "ssip", "enabled") { configuration.ssipEnabled = on }
            if let socket = try reader.string(ssip, "ssip", "socket") {
                configuration.ssipSocketPath = socket.isEmpty ? nil : socket
            }
        }
        let unknown = table.keys.filter { !["voice", "queue", "earcon", "audio", "daemon", "ssip"].contains($0) }
        if let first = unknown.first {
            throw ConfigurationError.unknownName(path: path, "unknown section '\(first)'")
        }
        return configuration
    }
}

/// Typed reads with errors that name the key.
private struct TableReader {
    let path: String

    func section(
        _ table: TOMLTable, _ name: String, known: Set<String>, _ body: (TOMLTable) throws -> Void
    ) throws {
        guard let value = table[name] else { return }
        guard let section = value.table else {
            throw ConfigurationError.invalidValue(path: path, "'\(name)' must be a table ([\(name)])")
        }
        if let unknown = section.keys.first(where: { !known.contains($0) }) {
            throw ConfigurationError.unknownName(path: path, "unknown key '\(name).\(unknown)'")
        }
        try body(section)
    }

    func string(_ table: TOMLTable, _ section: String, _ key: String) throws(ConfigurationError) -> String? {
        guard let value = table[key] else { return nil }
        guard let string = value.string else {
            throw ConfigurationError.invalidValue(path: path, "'\(section).\(key)' must be a string")
        }
        return string
    }

    func int(_ table: TOMLTable, _ section: String, _ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value = table[key] else { return nil }
        guard let number = value.int else {
            throw ConfigurationError.invalidValue(path: path, "'\(section).\(key)' must be an integer")
        }
        guard range.contains(number) else {
            throw ConfigurationError.invalidValue(path: path, "'\(section).\(key)' must be within \(range.lowerBound)...\(range.upperBound), got \(number)")
        }
        return number
    }

    func bool(_ table: TOMLTable, _ section: String, _ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let bool = value.bool else {
            throw ConfigurationError.invalidValue(path: path, "'\(section).\(key)' must be true or false")
        }
        return bool
    }
}
