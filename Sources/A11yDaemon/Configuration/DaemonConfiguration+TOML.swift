import A11yConfiguration
import A11yCore
import A11ySystem

extension DaemonConfiguration {
    /// The file read when none is named: `$XDG_CONFIG_HOME/a11yd/a11yd.toml` (`ConfigurationFile`,
    /// where a11ysay looks too).
    public static func defaultPath(environment: [String: String]) -> String {
        ConfigurationFile.defaultPath(environment: environment)
    }

    /// Reads a file. A missing file at the default path is not an error (defaults apply); a
    /// missing file that was named explicitly is. Only a regular file of at most
    /// `TOMLReader.maxInputBytes` is read (`ConfigurationFile.text(at:)`).
    public static func load(path: String, mustExist: Bool) throws(ConfigurationError) -> DaemonConfiguration {
        let text: String?
        do {
            text = try ConfigurationFile.text(at: path)
        } catch {
            throw ConfigurationError.unreadable(path: path, error.reason)
        }
        guard let text else {
            if mustExist { throw ConfigurationError.unreadable(path: path, "no such file") }
            return DaemonConfiguration()
        }
        return try parse(text, path: path)
    }

    /// Parses TOML, refusing unknown keys and out-of-range values so that a typo never goes unnoticed.
    public static func parse(_ text: String, path: String = "<config>") throws(ConfigurationError) -> DaemonConfiguration {
        let table: TOMLTable
        do {
            table = try TOMLReader.read(text)
        } catch {
            throw ConfigurationError.malformed(path: path, error.located)
        }
        let reader = TableReader(path: path)
        var configuration = DaemonConfiguration()
        try reader.section(table, "voice", known: ["language", "rate", "pitch", "volume"]) { (voice) throws(ConfigurationError) in
            if let language = try reader.string(voice, "voice", "language") {
                configuration.voice.language = language.isEmpty ? nil : language
            }
            if let rate = try reader.int(voice, "voice", "rate", in: 80...450) { configuration.voice.rate = rate }
            if let pitch = try reader.int(voice, "voice", "pitch", in: 0...100) { configuration.voice.pitch = pitch }
            if let volume = try reader.int(voice, "voice", "volume", in: 0...200) { configuration.voice.volume = volume }
        }
        if let voices = table["voices"] {
            guard let section = voices.table else {
                throw ConfigurationError.invalidValue(path: path, "'voices' must be a table ([voices]) of language = \"voice\"")
            }
            for language in section.keys {
                guard let voice = section[language]?.string, !voice.isEmpty else {
                    throw ConfigurationError.invalidValue(
                        path: path, "'voices.\(language)' must be a voice identifier, e.g. \"piper:en_US-joe-medium\" (a11ysay --list-voices)")
                }
                configuration.voices.append(.init(language: language, voice: voice))
            }
        }
        try reader.section(table, "piper", known: ["idle_unload_seconds"]) { (piper) throws(ConfigurationError) in
            if let seconds = try reader.int(piper, "piper", "idle_unload_seconds", in: 0...86_400) { configuration.piperIdleSeconds = seconds }
        }
        try reader.section(table, "queue", known: ["max_bytes", "limit"]) { (queue) throws(ConfigurationError) in
            if let bytes = try reader.int(queue, "queue", "max_bytes", in: (1 << 20)...(1 << 30)) { configuration.queueMaxBytes = bytes }
            // The count the queue was once bounded by: still read, so that files written then
            // keep working, and ignored (a real client's burst exceeded it).
            _ = try reader.int(queue, "queue", "limit", in: 1...10_000)
        }
        try reader.section(table, "earcon", known: ["screen_changed"]) { (earcon) throws(ConfigurationError) in
            if let on = try reader.bool(earcon, "earcon", "screen_changed") { configuration.earcon = on }
        }
        try reader.section(table, "audio", known: ["server", "duck", "duck_db"]) { (audio) throws(ConfigurationError) in
            if let server = try reader.string(audio, "audio", "server") {
                configuration.audioServer = server.isEmpty ? nil : server
            }
            if let name = try reader.string(audio, "audio", "duck") {
                guard let duck = Duck(rawValue: name) else {
                    throw ConfigurationError.invalidValue(path: path, "'audio.duck' must be \"off\" or \"speaking\", got \"\(name)\"")
                }
                configuration.duck = duck
            }
            if let decibels = try reader.int(audio, "audio", "duck_db", in: 1...60) { configuration.duckDecibels = decibels }
        }
        try reader.section(table, "daemon", known: ["socket", "autospawn", "idle_exit_seconds", "allowed_uids"]) { (daemon) throws(ConfigurationError) in
            if let socket = try reader.string(daemon, "daemon", "socket") {
                configuration.socketPath = socket.isEmpty ? nil : socket
            }
            if let on = try reader.bool(daemon, "daemon", "autospawn") { configuration.autospawn = on }
            if let seconds = try reader.int(daemon, "daemon", "idle_exit_seconds", in: 0...86_400) {
                configuration.idleExitSeconds = seconds
            }
            if let uids = daemon["allowed_uids"] {
                guard let array = uids.array, let numbers = Optional(array.compactMap(\.integer)), numbers.count == array.count,
                    let allowed = Optional(numbers.compactMap(UInt32.init(exactly:))), allowed.count == numbers.count
                else {
                    throw ConfigurationError.invalidValue(path: path, "'daemon.allowed_uids' must be a list of user ids, e.g. [1001]")
                }
                configuration.allowedUIDs = allowed
            }
        }
        try reader.section(table, "ssip", known: ["enabled", "socket", "default_priority"]) { (ssip) throws(ConfigurationError) in
            if let name = try reader.string(ssip, "ssip", "default_priority") {
                guard let priority = MessagePriority(rawValue: name) else {
                    throw ConfigurationError.invalidValue(
                        path: path, "'ssip.default_priority' must be one of important, message, text, notification, progress")
                }
                configuration.ssipDefaultPriority = priority
            }
            if let on = try reader.bool(ssip, "ssip", "enabled") { configuration.ssipEnabled = on }
            if let socket = try reader.string(ssip, "ssip", "socket") {
                configuration.ssipSocketPath = socket.isEmpty ? nil : socket
            }
        }
        let unknown = table.keys.filter { !["voice", "voices", "piper", "queue", "earcon", "audio", "daemon", "ssip"].contains($0) }
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
        _ table: TOMLTable, _ name: String, known: Set<String>, _ body: (TOMLTable) throws(ConfigurationError) -> Void
    ) throws(ConfigurationError) {
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
        guard let number = value.integer else {
            throw ConfigurationError.invalidValue(path: path, "'\(section).\(key)' must be an integer")
        }
        guard range.contains(number) else {
            throw ConfigurationError.invalidValue(path: path, "'\(section).\(key)' must be within \(range.lowerBound)...\(range.upperBound), got \(number)")
        }
        return number
    }

    func bool(_ table: TOMLTable, _ section: String, _ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let bool = value.boolean else {
            throw ConfigurationError.invalidValue(path: path, "'\(section).\(key)' must be true or false")
        }
        return bool
    }
}

extension TextFile.Failure {
    /// Why the configuration file cannot be used, as a sentence's end.
    fileprivate var reason: String {
        switch self {
        case .unreadable(let why): why
        case .notARegularFile: "not a regular file"
        case .largerThan(let limit): "larger than \(limit) bytes"
        case .notUTF8: "cannot read the file as UTF-8 text"
        }
    }
}
