// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon listens for JSON Lines and clients connect, decided the same way on both sides
/// (the flag, the environment, then the configuration file's `daemon.socket`).
public enum SocketLocation {
    /// `explicit` (a flag), else `$A11YD_SOCKET`, else the configured path, else
    /// `$XDG_RUNTIME_DIR/a11yd/socket` (or `/tmp/a11yd-UID/socket` when there is no runtime dir).
    public static func resolve(
        explicit: String? = nil, configured: String? = nil, environment: [String: String]
    ) -> String {
        resolve(explicit: explicit, configured: configured, environment: { environment[$0] })
    }

    /// The same, reading each variable through `environment` (a11ysay: `Environment.variable`).
    public static func resolve(
        explicit: String? = nil, configured: String? = nil, environment: (String) -> String?
    ) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment("A11YD_SOCKET"), !fromEnvironment.isEmpty { return fromEnvironment }
        if let configured, !configured.isEmpty { return configured }
        if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty { return runtime + "/a11yd/socket" }
        return "/tmp/a11yd-\(getuid())/socket"
    }
}
