// SPDX-License-Identifier: GPL-3.0-or-later
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A connect to see whether a Unix socket accepts, and why not.
public enum SocketProbe {
    /// Nil when `path` accepts a connection (closed at once), else why not: connect(2)'s errno.
    /// Not `blocking`, a listener whose queue is full answers `.resourceTemporarilyUnavailable`
    /// at once instead of holding the caller until it accepts.
    public static func connectError(path: String, blocking: Bool = true) -> Errno? {
        guard let address = UnixSocketAddress(path: path) else { return .fileNameTooLong }
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (blocking ? 0 : Int32(SOCK_NONBLOCK.rawValue))
        let descriptor = socket(AF_UNIX, flags, 0)
        guard descriptor >= 0 else { return SystemCall.lastError }
        defer { close(descriptor) }
        let result = address.withSockaddr { connect(descriptor, $0, $1) }
        return result == 0 ? nil : SystemCall.lastError
    }

    /// Whether something listens and accepts on `path`.
    public static func accepts(path: String) -> Bool { connectError(path: path) == nil }
}
