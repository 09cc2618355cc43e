// SPDX-License-Identifier: GPL-3.0-or-later
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
            throw ConfigurationError.unreadable(path: path, error.description)
        }
        guard let text else {
            if mustExist { throw ConfigurationError.unreadable(path: path, "no such file") }
            return DaemonConfiguration()
        }
        return try parse(text, path: path)
    }

    /// Parses TOML, refusing unknown keys and out-of-range values so that a typo never goes unnoticed:
    /// every key as its row in `keys` reads it, section by section in the table's order.
    public static func parse(_ text: String, path: String = "<config>") throws(ConfigurationError) -> DaemonConfiguration {
        let table: TOMLTable
        do {
            table = try TOMLReader.read(text)
        } catch {
            throw ConfigurationError.malformed(path: path, error.located)
        }
        var configuration = DaemonConfiguration()
        for section in sections {
            guard let value = table[section] else { continue }
            let keys = Self.keys.filter { $0.section == section }
            // A section of named keys must be a table of them; a section that is itself the value
            // ([voices]) says what it must be when read.
            let names = Set(keys.compactMap(\.name))
            if !names.isEmpty {
                guard let entries = value.table else {
                    throw ConfigurationError.invalidValue(path: path, "'\(section)' must be a table ([\(section)])")
                }
                if let unknown = entries.keys.first(where: { !names.contains($0) }) {
                    throw ConfigurationError.unknownName(path: path, "unknown key '\(section).\(unknown)'")
                }
            }
            for key in keys {
                do {
                    try key.read(table, &configuration)
                } catch {
                    throw ConfigurationError.invalidValue(path: path, error.description)
                }
            }
        }
        if let unknown = table.keys.first(where: { !sections.contains($0) }) {
            throw ConfigurationError.unknownName(path: path, "unknown section '\(unknown)'")
        }
        return configuration
    }
}
