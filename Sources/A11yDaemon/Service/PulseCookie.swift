// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Glibc
import SystemPackage

/// libpulse's cookie, which every client presents to the server: at its first connection libpulse
/// makes one (`$XDG_CONFIG_HOME/pulse/cookie`, else `~/.config/pulse/cookie`: 256 random bytes,
/// owner-only) when none is there, and writes "Failed to load cookie file" on stderr, raw, at every
/// attempt when it cannot. Under Landlock a11yd cannot make it then, so it is made before, as
/// libpulse would make it.
enum PulseCookie {
    static let size = 256

    /// Where libpulse looks for the cookie when none is named, in its order: the first that exists
    /// is read; the first is where it makes one.
    static func candidates(environment: [String: String]) -> [String] {
        [
            HomeFolder.configuration(environment: { environment[$0] }) + "/pulse/cookie",
            HomeFolder.current(environment: environment) + "/.pulse-cookie",
        ]
    }

    /// Makes the cookie where libpulse would, unless one is named (`PULSE_COOKIE`) or already there.
    /// Returns the path made, nil when nothing was made (or nothing could be: libpulse then says so).
    @discardableResult
    static func prepare(environment: [String: String]) -> String? {
        if let named = environment["PULSE_COOKIE"], !named.isEmpty { return nil }
        let paths = candidates(environment: environment)
        guard let path = paths.first, !paths.contains(where: { access($0, F_OK) == 0 }) else { return nil }
        guard (try? Directory.make(FilePath(path).folder.string, mode: 0o700)) != nil else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        guard let file = try? FileDescriptor.open(
            FilePath(path), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec], permissions: [.ownerReadWrite])
        else { return nil }
        let written = try? file.closeAfter { try file.writeAll(bytes) }
        guard written == size else {
            unlink(path)
            return nil
        }
        return path
    }
}
