// SPDX-License-Identifier: GPL-3.0-or-later
import A11yFrontEnd
import A11ySystem
import Glibc
import SystemPackage

/// systemd socket activation (sd_listen_fds(3)) without libsystemd.
///
/// a11yd takes up to two listening sockets, told apart by the name `FileDescriptorName=` gave them
/// (`LISTEN_FDNAMES`): `ssip` is speech-dispatcher's protocol (a11yd-ssip.socket); any other name
/// is the JSON Lines socket (a11yd.socket).
enum SocketActivation {
    /// The first inherited descriptor, always 3.
    static let firstDescriptor = FileDescriptor(rawValue: 3)
    /// The `FileDescriptorName=` of the SSIP socket unit.
    static let ssipName = "ssip"

    /// What systemd passed to this very process, by protocol.
    struct Inherited {
        var jsonLines: (descriptor: FileDescriptor, path: String?)?
        var ssip: (descriptor: FileDescriptor, path: String?)?
    }

    /// The sockets systemd passed to this process, if any (nil: not socket-activated).
    static func inherited(environment: [String: String]) throws -> Inherited? {
        guard let pid = environment["LISTEN_PID"], let count = environment["LISTEN_FDS"] else { return nil }
        // LISTEN_PID guards against inheriting a parent's variables that were meant for it.
        guard Int32(pid) == getpid() else { return nil }
        guard let fds = Int(count), fds >= 1 else {
            throw DaemonError.badSocketActivation("LISTEN_FDS=\(count) names no socket")
        }
        let names = environment["LISTEN_FDNAMES"].map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        var inherited = Inherited()
        for index in 0..<fds {
            let descriptor = FileDescriptor(rawValue: firstDescriptor.rawValue + CInt(clamping: index))
            try checkListeningStreamSocket(descriptor)
            // sd_listen_fds(3) does the same: the socket is ours, not for anything we might run.
            _ = fcntl(descriptor.rawValue, F_SETFD, FD_CLOEXEC)
            let socket = (descriptor: descriptor, path: boundPath(descriptor))
            let name = index < names.count ? names[index] : ""
            if name == ssipName {
                guard inherited.ssip == nil else {
                    throw DaemonError.badSocketActivation("systemd passed two sockets named '\(ssipName)'")
                }
                inherited.ssip = socket
            } else {
                guard inherited.jsonLines == nil else {
                    throw DaemonError.badSocketActivation(
                        "systemd passed \(fds) sockets; a11yd listens on one JSON Lines socket and one named '\(ssipName)' (FileDescriptorName=)")
                }
                inherited.jsonLines = socket
            }
        }
        return inherited
    }

    /// The JSON Lines listener: the inherited one, else the path to bind.
    static func jsonLinesListener(_ inherited: Inherited?, fallbackPath: String) -> SocketListener {
        guard let socket = inherited?.jsonLines else { return .path(fallbackPath) }
        return .inherited(descriptor: socket.descriptor, path: socket.path ?? fallbackPath)
    }

    /// The path the inherited socket is bound to (for the log), if it has one.
    static func boundPath(_ descriptor: FileDescriptor) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor.rawValue, $0, &length) }
        }
        guard result == 0 else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return path.isEmpty ? nil : path
    }

    /// Refuses fd 3 unless it is a listening AF_UNIX stream socket (a misconfigured unit, say
    /// `ListenDatagram=` or `Accept=yes`, would otherwise fail in confusing ways later).
    static func checkListeningStreamSocket(_ descriptor: FileDescriptor) throws {
        func option(_ name: CInt) -> CInt? {
            var value: CInt = 0
            var length = socklen_t(MemoryLayout<CInt>.size)
            return getsockopt(descriptor.rawValue, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard let domain = option(SO_DOMAIN), let type = option(SO_TYPE), let listening = option(SO_ACCEPTCONN) else {
            throw DaemonError.badSocketActivation("LISTEN_FDS is set but fd \(descriptor.rawValue) is not a socket")
        }
        guard domain == AF_UNIX, type == CInt(SOCK_STREAM.rawValue), listening != 0 else {
            throw DaemonError.badSocketActivation(
                "fd \(descriptor.rawValue) must be a listening AF_UNIX stream socket (ListenStream=, Accept=no); got domain \(domain) type \(type) listening \(listening != 0)")
        }
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
        guard let socketPath, let address = UnixSocketAddress(path: socketPath) else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = state.withCString { message in
            address.withSockaddr { sendto(descriptor, message, strlen(message), 0, $0, $1) }
        }
    }
}
