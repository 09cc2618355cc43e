// SPDX-License-Identifier: GPL-3.0-or-later
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a Unix-socket connection, as the kernel says (`SO_PEERCRED`).
public struct PeerCredentials: Sendable, Equatable {
    // Laid out as Linux's `struct ucred`, which getsockopt fills in.
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    /// The peer of an accepted connection, read on its event loop.
    public static func of(_ channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerRefused(reason: "not a socket channel"))
        }
        return provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
    }
}

/// Which users a daemon serves: its own, root (who could read the daemon's memory anyway, so
/// refusing it protects nothing), and those the configuration lists.
public struct PeerPolicy: Sendable {
    public let ownUID: UInt32
    public let allowedUIDs: Set<UInt32>

    public init(allowedUIDs: [UInt32], ownUID: UInt32 = getuid()) {
        self.ownUID = ownUID
        self.allowedUIDs = Set(allowedUIDs)
    }

    public func admits(_ peer: PeerCredentials) -> Bool {
        peer.uid == ownUID || peer.uid == 0 || allowedUIDs.contains(peer.uid)
    }
}

/// A connection closed before it was served, and why.
public struct PeerRefused: Error, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension PeerPolicy {
    /// For a child channel initializer: the connection's peer, refused (logged by `onRefusal`,
    /// closed) unless admitted. A child whose initializer fails is not closed for us.
    public func admit(_ channel: any Channel, onRefusal: @escaping @Sendable (PeerCredentials) -> Void) -> EventLoopFuture<Void> {
        PeerCredentials.of(channel).flatMapThrowing { peer in
            guard self.admits(peer) else {
                onRefusal(peer)
                channel.close(promise: nil)
                throw PeerRefused(reason: "uid \(peer.uid) is not allowed")
            }
        }
    }
}
