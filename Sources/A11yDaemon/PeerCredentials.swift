import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a Unix-socket connection, as the kernel says (`SO_PEERCRED`).
struct PeerCredentials: Sendable, Equatable {
    // Laid out as Linux's `struct ucred`, which getsockopt fills in.
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    /// The peer of an accepted connection, read on its event loop.
    static func of(_ channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerRefused(reason: "not a socket channel"))
        }
        return provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
    }
}

/// Which users a daemon serves: its own, root (who could read the daemon's memory anyway, so
/// refusing it protects nothing), and those the configuration lists.
struct PeerPolicy: Sendable {
    let ownUID: UInt32
    let allowedUIDs: Set<UInt32>

    init(allowedUIDs: [UInt32], ownUID: UInt32 = getuid()) {
        self.ownUID = ownUID
        self.allowedUIDs = Set(allowedUIDs)
    }

    func admits(_ peer: PeerCredentials) -> Bool {
        peer.uid == ownUID || peer.uid == 0 || allowedUIDs.contains(peer.uid)
    }
}

/// A connection closed before it was served, and why.
struct PeerRefused: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
