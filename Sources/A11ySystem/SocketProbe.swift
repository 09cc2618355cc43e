// SPDX-License-Identifier: GPL-3.0-or-later
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A blocking connect to see whether a Unix socket accepts, and why not.
public enum SocketProbe {
    /// Nil when `path` accepts a connection (closed at once), else why not: connect(2)'s errno.
    public static func connectError(path: String) -> Errno? {
        guard let address = UnixSocketAddress(path: path) else { return .fileNameTooLong }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return SystemCall.lastError }
        defer { close(descriptor) }
        let result = address.withSockaddr { connect(descriptor, $0, $1) }
        return result == 0 ? nil : SystemCall.lastError
    }

    /// Whether something listens and accepts on `path`.
    public static func accepts(path: String) -> Bool { connectError(path: path) == nil }
}
