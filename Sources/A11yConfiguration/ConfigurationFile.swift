// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem

/// a11yd's configuration file, found and read the same way by both executables: a11yd reads every
/// key of it (`DaemonConfiguration`), a11ysay the few it needs (`ClientSettings`), both through
/// `TOMLReader`, so that a value written in any TOML form means the same to both.
public enum ConfigurationFile {
    /// `$XDG_CONFIG_HOME/a11yd/a11yd.toml`, else `~/.config/a11yd/a11yd.toml`.
    public static func defaultPath(environment: [String: String]) -> String {
        defaultPath(environment: { environment[$0] })
    }

    /// The same, reading each variable through `environment` (a11ysay: `Environment.variable`).
    public static func defaultPath(environment: (String) -> String?) -> String {
        HomeFolder.configuration(environment: environment) + "/a11yd/a11yd.toml"
    }

    /// The file's text, or nil when there is no such file. Only a regular file of at most
    /// `TOMLReader.maxInputBytes` is read: a FIFO there would block the reader, a device never end.
    public static func text(at path: String) throws(TextFile.Failure) -> String? {
        try TextFile.read(path, limit: TOMLReader.maxInputBytes)
    }
}
