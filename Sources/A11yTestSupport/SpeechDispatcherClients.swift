// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The environment for speech-dispatcher's own clients (spd-say, python3-speechd) aimed at `socket`:
/// they can never start a real speech-dispatcher (`SPEECHD_CMD=/bin/false`, `DisableAutoSpawn` in
/// their configuration in `home`), and they use Debian's programs and a locale that exists.
public func speechDispatcherClientEnvironment(
    socket: String, home: String, runtime: String? = nil, base: [String: String] = [:]
) throws -> [String: String] {
    let config = home + "/.config"
    try FileManager.default.createDirectory(atPath: config + "/speech-dispatcher", withIntermediateDirectories: true)
    try "DisableAutoSpawn\n".write(toFile: config + "/speech-dispatcher/speechd.conf", atomically: true, encoding: .utf8)
    var environment = base
    environment["SPEECHD_ADDRESS"] = "unix_socket:" + socket
    environment["SPEECHD_CMD"] = "/bin/false"
    environment["HOME"] = home
    environment["XDG_CONFIG_HOME"] = config
    environment["XDG_RUNTIME_DIR"] = runtime ?? base["XDG_RUNTIME_DIR"] ?? home
    environment["PATH"] = "/usr/bin:/bin"
    // spd-say gives up when setlocale fails (fr_FR, say, is not installed here).
    environment["LANG"] = "C.UTF-8"
    return environment
}
