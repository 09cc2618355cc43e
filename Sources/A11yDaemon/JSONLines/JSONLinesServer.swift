import A11yCore
import A11yProtocol
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The JSON Lines front end: a Unix socket, one connection per client, over the speech API.
///
/// It stops accepting on a graceful shutdown. Speech shuts down before it (the daemon lists it
/// after the front ends), so when the event stream ends every `finished` has been routed; then
/// connections are closed once their last lines are written.
public final class JSONLinesServer: Service, Sendable {
    public enum Listener: Sendable {
        /// Bind a new socket at this path (removed again at exit).
        case path(String)
        /// A listening socket handed over by systemd (never unlinked by us).
        case inherited(descriptor: CInt, path: String?)
    }

    private typealias Connection = NIOAsyncChannel<LineBatch, ServerMessage>

    private let listener: Listener
    private let peers: PeerPolicy
    private let speech: any SpeechControl
    private let events: AsyncStream<ClientEvent>
    private let router: ConnectionRouter
    private let logger: Logger
    private let onReady: @Sendable () -> Void

    /// Only clients of `allowedUIDs`, the daemon's own user and root are served. A client that
    /// leaves `cutOffAfter` messages unread is disconnected.
    public init(
        listener: Listener, allowedUIDs: [UInt32] = [], cutOffAfter: Int = 4096, speech: any SpeechControl,
        logger: Logger, onReady: @escaping @Sendable () -> Void = {}
    ) {
        self.router = ConnectionRouter(
            limits: .init(shedProgressAfter: cutOffAfter / 16, cutOffAfter: cutOffAfter), logger: logger)
        self.listener = listener
        self.peers = PeerPolicy(allowedUIDs: allowedUIDs)
        self.speech = speech
        // Subscribed now, before any client can post, so that no event is missed.
        self.events = speech.events()
        self.logger = logger
        self.onReady = onReady
    }

    /// Clients connected now (for idle exit).
    public var connectionCount: Int {
        get async { await router.connectionCount }
    }

    public func run() async throws {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let peers = peers
        let logger = logger
        let initializer: @Sendable (any Channel) -> EventLoopFuture<AcceptedConnection> = { channel in
            // Whatever the socket's mode, another user's client is not served.
            peers.admit(channel) { peer in
                logger.warning("refused a client of another user", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
            }.flatMapThrowing {
                try channel.pipeline.syncOperations.addHandlers(
                    ByteToMessageHandler(LineFrameDecoder()),
                    MessageToByteHandler(JSONLineEncoder<ServerMessage>()))
                // Half-closure: finishing our writer flushes what is queued and then sends EOF, so
                // a client knows the daemon is done with it (shutdown, or its items all finished).
                return AcceptedConnection(try Connection(
                    wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true)))
            }
        }
        let server: NIOAsyncChannel<AcceptedConnection, Never>
        var ownedPath: String?
        switch listener {
        case .path(let path):
            try SocketFile.prepare(path: path)
            // Owner-only from the first instant: no window where another user could connect.
            let previous = umask(0o077)
            defer { umask(previous) }
            server = try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: initializer)
            chmod(path, 0o600)  // rw for the owner, as documented; umask 077 already kept others out
            ownedPath = path
            logger.info("listening", metadata: ["socket": "\(path)"])
        case .inherited(let descriptor, let path):
            server = try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
            logger.info("listening on the socket systemd passed", metadata: ["fd": "\(descriptor)", "socket": "\(path ?? "?")"])
        }
        defer {
            if let ownedPath { unlink(ownedPath) }
        }
        onReady()

        try await withThrowingDiscardingTaskGroup { connections in
            // The front door: accepting, and routing events, both end before connections are closed.
            try await withThrowingDiscardingTaskGroup { frontDoor in
                frontDoor.addTask {
                    // Ends once speech has shut down, after its last `finished`.
                    for await delivery in self.events { await self.router.route(delivery) }
                }
                try await withGracefulShutdownHandler {
                    try await server.executeThenClose { accepted in
                        for try await connection in accepted {
                            connections.addTask { await self.serve(connection.channel) }
                        }
                    }
                } onGracefulShutdown: {
                    server.channel.close(promise: nil)
                }
            }
            await router.closeAll()
        }
        logger.info("socket closed")
    }

    private func serve(_ channel: Connection) async {
        let client = ClientID.next()
        let outbox = await router.register(client) { [channel = channel.channel] in channel.close(promise: nil) }
        let connection = JSONLinesConnection(client: client, speech: speech, router: router, outbox: outbox)
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        // The writer: every message for this client, in order, until the router closes it.
                        do {
                            try await outbox.drain { try await outbound.write($0) }
                            outbound.finish()
                        } catch {
                            await self.router.remove(client)
                        }
                    }
                    do {
                        for try await batch in inbound { await connection.handle(batch) }
                    } catch {
                        logger.debug("connection read ended", metadata: ["client": "\(client)", "error": "\(error)"])
                    }
                    await router.stoppedReading(client)
                }
            }
        } catch {
            logger.debug("connection ended", metadata: ["client": "\(client)", "error": "\(error)"])
        }
        await router.remove(client)
    }
}

/// A connection as the accept loop hands it over.
///
/// NIO traps when an `NIOAsyncChannel` is dropped with its writer unfinished, and a connection
/// accepted just as the server closes can be dropped that way, never yielded to the loop (seen
/// with a client that connected as SIGTERM arrived). This finishes the writer in that case; for a
/// served connection `executeThenClose` already finished it and finishing again does nothing.
final class AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<LineBatch, ServerMessage>

    init(_ channel: NIOAsyncChannel<LineBatch, ServerMessage>) {
        self.channel = channel
    }

    deinit {
        channel.outbound.finish()
        channel.channel.close(promise: nil)
    }
}

/// The socket's folder and a stale file left by a daemon that died.
enum SocketFile {
    static func prepare(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        guard FileManager.default.fileExists(atPath: path) else { return }
        if SocketProbe.accepts(path: path) {
            throw DaemonError.alreadyRunning("another a11yd is already listening on \(path)")
        }
        // Nobody answers: a leftover from a daemon that died. Safe to replace.
        unlink(path)
    }
}
