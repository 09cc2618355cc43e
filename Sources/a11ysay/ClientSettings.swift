// SPDX-License-Identifier: GPL-3.0-or-later
import A11yConfiguration

/// The keys of a11yd's configuration file that a11ysay honours, `daemon.socket` and
/// `daemon.autospawn`, read through the keys a11yd reads them with (`ClientKeys`, rows of
/// `DaemonConfiguration.keys`; `ConfigurationFile`, `TOMLReader`): in any form
/// TOML allows (a literal string, a dotted key, a quoted name), and only from a regular file.
/// A file a11ysay cannot use (not a regular file, not TOML, a value of the wrong type) counts as
/// the defaults: a11yd, which reads every key, says what is wrong with it.
struct ClientSettings {
    var path: String
    var socket: String?
    var autospawn: Bool?

    static func load(environment: (String) -> String?) -> ClientSettings {
        let path = ConfigurationFile.defaultPath(environment: environment)
        guard let text = try? ConfigurationFile.text(at: path), let table = try? TOMLReader.read(text) else {
            return ClientSettings(path: path)
        }
        return ClientSettings(path: path, table: table)
    }

    init(path: String, table: TOMLTable = TOMLTable()) {
        self.path = path
        socket = (try? ClientKeys.socket.value(in: table)) ?? nil
        autospawn = try? ClientKeys.autospawn.value(in: table)
    }
}
