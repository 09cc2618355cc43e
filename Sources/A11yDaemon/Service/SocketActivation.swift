import Foundation

/// systemd socket activation (sd_listen_fds(3)) without libsystemd.
enum SocketActivation {
    /// The first inherited descriptor, always 3.
    static let firstDescriptor: CInt = 3

    /// The listening socket systemd passed us, if it passed one to this very process; else the path to bind.
    static func listener(environment: [String: String], fallbackPath: String) throws -> SocketServer.Listener {
        guard let pid = environment["LISTEN_PID"], let count = environment["LISTEN_FDS"] else {
            return .path(fallbackPath)
        }
        // LISTEN_PID guards against inheriting a parent's variables that were meant for it.
        guard Int32(pid) == getpid() else { return .path(fallbackPath) }
        guard let fds = Int(count), fds >= 1 else {
            throw DaemonError(.badSocketActivation, "LISTEN_FDS=\(count) names no socket")
        }
        if fds > 1 {
            throw DaemonError(.badSocketActivation, "systemd passed \(fds) sockets; a11yd listens on exactly one")
        }
        return .inherited(descriptor: firstDescriptor, path: fallbackPath)
    }

    /// So that children (none today) do not think the sockets are theirs.
    static func forgetInheritedEnvironment() {
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
    }
}

/// Tells systemd about start-up and shutdown over `$NOTIFY_SOCKET` (sd_notify(3)), if it is set.
struct ServiceNotifier: Sendable {
    let socketPath: String?

    init(environment: [String: String]) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func notify(_ state: String) {
        guard let socketPath else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socketPath.utf8)
        // An '@' prefix names an abstract socket: a leading NUL byte.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        _ = state.withCString { message in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, message, strlen(message), 0, $0, length)
                }
            }
        }
    }
}
