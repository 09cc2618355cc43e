import A11ySystem
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Where a front end listens.
public enum SocketListener: Sendable, Equatable {
    /// Bind a new socket at this path, owner-only (removed again at exit).
    case path(String)
    /// A listening socket handed over by systemd (never unlinked by us).
    case inherited(descriptor: CInt, path: String?)
}

/// What every Unix-socket front end does the same way: bind its socket owner-only (or adopt the one
/// systemd passed), admit only allowed users, accept connections until a graceful shutdown, route
/// speech's events while it runs, and close connections once both have ended.
///
/// Speech shuts down before the front ends (the daemon lists it last), so when the event stream ends
/// every `finished` has been routed; only then are connections closed, once their last lines are
/// written. The front end brings its framing, its connections and its router.
public struct SocketFrontEnd<Inbound: Sendable, Outbound: Sendable>: Sendable {
    public typealias Connection = NIOAsyncChannel<Inbound, Outbound>

    public let listener: SocketListener
    public let peers: PeerPolicy
    /// Counts this front end's connections (with the other front ends', for idle exit).
    public let connectionCount: ConnectionCount
    /// Before "listening" and "socket closed" in the log ("" or "SSIP ").
    public let logPrefix: String
    public let logger: Logger

    public init(
        listener: SocketListener, peers: PeerPolicy, connectionCount: ConnectionCount = ConnectionCount(), logPrefix: String = "",
        logger: Logger
    ) {
        self.listener = listener
        self.peers = peers
        self.connectionCount = connectionCount
        self.logPrefix = logPrefix
        self.logger = logger
    }

    /// Runs until a graceful shutdown (or cancellation).
    /// - Parameters:
    ///   - pipeline: adds the framing handlers to a new connection's pipeline.
    ///   - whenTaken: something live already answers at the path: throw, or return to serve nothing.
    ///   - events: routes speech's events; ends when speech has shut down.
    ///   - serve: one connection, until it ends.
    ///   - closeAll: every connection's outbox is finished (what is queued is still written).
    public func run(
        pipeline: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void,
        whenTaken: (String) async throws -> Void,
        events: @escaping @Sendable () async -> Void,
        serve: @escaping @Sendable (Connection) async -> Void,
        closeAll: @escaping @Sendable () async -> Void,
        onReady: @Sendable () -> Void = {}
    ) async throws {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let peers = peers
        let logger = logger
        let initializer: @Sendable (any Channel) -> EventLoopFuture<AcceptedConnection<Inbound, Outbound>> = { channel in
            // Whatever the socket's mode, another user's client is not served.
            peers.admit(channel) { peer in
                logger.warning("refused a client of another user", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
            }.flatMapThrowing {
                try channel.pipeline.syncOperations.addHandler(EndsReadingWhenOutputCloses())
                try pipeline(channel.pipeline.syncOperations)
                // Half-closure: finishing our writer flushes what is queued and then sends EOF.
                return AcceptedConnection(try Connection(
                    wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true)))
            }
        }
        let server: NIOAsyncChannel<AcceptedConnection<Inbound, Outbound>, Never>
        var ownedPath: String?
        switch listener {
        case .path(let path):
            guard try SocketFile.prepare(path: path) else {
                try await whenTaken(path)
                return
            }
            // Bound under a private name, made 0600, then linked to its path: the path never shows
            // another mode, no process-wide umask is touched (both front ends bind at once), and
            // a daemon that lost a start-up race finds the path taken rather than replacing it.
            let staging = try SocketFile.stagingPath(for: path)
            unlink(staging)
            server = try await bootstrap.bind(unixDomainSocketPath: staging, childChannelInitializer: initializer)
            chmod(staging, 0o600)
            let linked = link(staging, path) == 0 ? 0 : errno
            unlink(staging)
            if linked != 0 {
                try? await server.channel.close()
                if linked == EEXIST {
                    try await whenTaken(path)
                    return
                }
                throw SocketFileError(path: path, errno: linked)
            }
            ownedPath = path
            logger.info("\(logPrefix)listening", metadata: ["socket": "\(path)"])
        case .inherited(let descriptor, let path):
            server = try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
            logger.info("\(logPrefix)listening on the socket systemd passed", metadata: ["fd": "\(descriptor)", "socket": "\(path ?? "?")"])
        }
        defer {
            if let ownedPath { unlink(ownedPath) }
        }
        onReady()

        let connectionCount = connectionCount
        try await withThrowingDiscardingTaskGroup { connections in
            // The front door: accepting, and routing events, both end before connections are closed.
            try await withThrowingDiscardingTaskGroup { frontDoor in
                frontDoor.addTask { await events() }
                try await withGracefulShutdownHandler {
                    try await server.executeThenClose { accepted in
                        for try await connection in accepted {
                            connectionCount.opened()
                            connections.addTask {
                                await serve(connection.channel)
                                connectionCount.closed()
                            }
                        }
                    }
                } onGracefulShutdown: {
                    server.channel.close(promise: nil)
                }
            }
            await closeAll()
        }
        logger.info("\(logPrefix)socket closed")
    }
}

/// A connection as the accept loop hands it over.
///
/// NIO traps when an `NIOAsyncChannel` is dropped with its writer unfinished, and a connection
/// accepted just as the server closes can be dropped that way, never yielded to the loop (seen
/// with a client that connected as SIGTERM arrived). This finishes the writer in that case; for a
/// served connection `executeThenClose` already finished it and finishing again does nothing.
public final class AcceptedConnection<Inbound: Sendable, Outbound: Sendable>: Sendable {
    public let channel: NIOAsyncChannel<Inbound, Outbound>

    init(_ channel: NIOAsyncChannel<Inbound, Outbound>) {
        self.channel = channel
    }

    deinit {
        channel.outbound.finish()
        channel.channel.close(promise: nil)
    }
}

/// The socket's folder, and what is already at its path.
public enum SocketFile {
    /// Makes the missing folders (0700) and clears a stale socket file. Returns false when a live
    /// server answers at `path`: its socket is left alone.
    public static func prepare(path: String) throws -> Bool {
        try Directory.make(Path.parent(of: path), mode: 0o700)
        var status = stat()
        guard lstat(path, &status) == 0 else { return true }
        if SocketProbe.accepts(path: path) { return false }
        // Nobody answers: a leftover of a server that died. Safe to replace.
        unlink(path)
        return true
    }

    /// A name beside `path`, of this process, under which the socket is bound before it is linked
    /// to `path`.
    public static func stagingPath(for path: String) throws -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? "socket"
        let staging = Path.parent(of: path) + "/.\(name).\(getpid())"
        guard UnixSocketAddress(path: staging) != nil else {
            throw SocketFileError(path: path, errno: ENAMETOOLONG)
        }
        return staging
    }
}

/// The socket could not be put at its path.
public struct SocketFileError: Error, CustomStringConvertible {
    public var path: String
    public var errno: Int32

    public var description: String {
        "cannot create the socket \(path): " + String(cString: strerror(errno))
    }
}
