#if canImport(Glibc)
import Glibc
#endif

/// A blocking connect to see whether a Unix socket accepts, and why not.
public enum SocketProbe {
    /// 0 when `path` accepts a connection (closed at once), else the errno of connect(2).
    public static func connectError(path: String) -> Int32 {
        guard let address = UnixSocketAddress(path: path) else { return ENAMETOOLONG }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        let result = address.withSockaddr { connect(descriptor, $0, $1) }
        return result == 0 ? 0 : errno
    }

    /// Whether something listens and accepts on `path`.
    public static func accepts(path: String) -> Bool { connectError(path: path) == 0 }
}
