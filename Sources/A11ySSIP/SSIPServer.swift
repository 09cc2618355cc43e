import A11yCore
import A11yProtocol
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// The SSIP front end: speech-dispatcher's socket, one session per connection, over the speech API.
///
/// If something already answers on the path (a running speech-dispatcher) it says so in the log and
/// serves nothing, waiting for shutdown; it never unlinks a live socket. Like the JSON front end it
/// stops accepting on a graceful shutdown, and closes connections once speech's event stream has
/// ended (after the last `finished`) and their last replies are written.
public final class SSIPServer: Service, Sendable {
    public enum Listener: Sendable, Equatable {
        /// Bind a new socket at this path (removed again at exit).
        case path(String)
        /// A listening socket handed over by systemd (never unlinked by us).
        case inherited(descriptor: CInt, path: String?)
    }

    public struct Configuration: Sendable {
        /// Longest line accepted; a longer one is answered `500` (a command) or refuses its message.
        public var maximumLineLength = 256 * 1024
        /// Most bytes of one SPEAK body.
        public var maximumMessageBytes = 1024 * 1024
        /// Most replies and events waiting for a client that does not read; past it, it is cut off.
        public var outboxLimit = 4096
        /// What `GET LANGUAGE` says before a client sets one.
        public var defaultLanguage = "en"

        public init() {}
    }

    private typealias Connection = NIOAsyncChannel<SSIPFrame, SSIPReply>

    private let listener: Listener
    private let peers: PeerPolicy
    private let speech: any SpeechControl
    private let configuration: Configuration
    private let events: AsyncStream<ClientEvent>
    private let router: SSIPRouter
    private let logger: Logger

    /// Only clients of `allowedUIDs`, the daemon's own user and root are served.
    public init(
        listener: Listener, allowedUIDs: [UInt32] = [], speech: any SpeechControl, configuration: Configuration = .init(),
        logger: Logger
    ) {
        self.listener = listener
        self.peers = PeerPolicy(allowedUIDs: allowedUIDs)
        self.speech = speech
        self.configuration = configuration
        // Subscribed now, before any client can speak, so that no event is missed.
        self.events = speech.events()
        self.router = SSIPRouter(outboxLimit: configuration.outboxLimit)
        self.logger = logger
    }

    /// Where every SSIP client looks first: `$XDG_RUNTIME_DIR/speech-dispatcher/speechd.sock`
    /// (nil without `XDG_RUNTIME_DIR`).
    public static func defaultPath(environment: [String: String]) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        return runtime + "/speech-dispatcher/speechd.sock"
    }

    /// Clients connected now (for idle exit).
    public var connectionCount: Int {
        get async { await router.connectionCount }
    }

    public func run() async throws {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let maximumLineLength = configuration.maximumLineLength
        let peers = peers
        let logger = logger
        let initializer: @Sendable (any Channel) -> EventLoopFuture<AcceptedSSIPConnection> = { channel in
            peers.admit(channel) { peer in
                logger.warning("refused an SSIP client of another user", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
            }.flatMapThrowing {
                try channel.pipeline.syncOperations.addHandlers(
                    ByteToMessageHandler(SSIPLineDecoder(maximumLength: maximumLineLength)),
                    MessageToByteHandler(SSIPReplyEncoder()))
                return AcceptedSSIPConnection(try Connection(
                    wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true)))
            }
        }
        let server: NIOAsyncChannel<AcceptedSSIPConnection, Never>
        var ownedPath: String?
        switch listener {
        case .path(let path):
            guard try SSIPSocketFile.prepare(path: path) else {
                logger.notice(
                    "another speech server already listens on the SSIP socket; a11yd leaves it alone and serves JSON only",
                    metadata: ["socket": "\(path)"])
                try? await gracefulShutdown()
                return
            }
            // Owner-only from the first instant.
            let previous = umask(0o077)
            defer { umask(previous) }
            server = try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: initializer)
            ownedPath = path
            logger.info("SSIP listening", metadata: ["socket": "\(path)"])
        case .inherited(let descriptor, let path):
            server = try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
            logger.info("SSIP listening on the socket systemd passed", metadata: ["fd": "\(descriptor)", "socket": "\(path ?? "?")"])
        }
        defer {
            if let ownedPath { unlink(ownedPath) }
        }

        try await withThrowingDiscardingTaskGroup { connections in
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
        logger.info("SSIP socket closed")
    }

    private func serve(_ channel: Connection) async {
        let client = ClientID.next()
        let outbox = await router.register(client)
        let connection = SSIPConnection(client: client, speech: speech, router: router)
        var session = SSIPSession(
            client: client, defaultLanguage: configuration.defaultLanguage,
            limits: .init(maximumMessageBytes: configuration.maximumMessageBytes))
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        // The writer: every reply and event, in order, until the router closes the
                        // outbox (QUIT, the client gone, a client not reading, shutdown).
                        for await reply in outbox { try await outbound.write(reply) }
                        outbound.finish()
                        // The conversation is over: stop reading too.
                        throw ConnectionEnded()
                    }
                    do {
                        for try await frame in inbound {
                            guard await connection.handle(frame, session: &session) else { break }
                        }
                    } catch {
                        logger.debug("SSIP read ended", metadata: ["client": "\(client)", "error": "\(error)"])
                    }
                    // A message half sent is dropped; those queued are still spoken.
                    session.end()
                    await router.close(client)
                }
            }
        } catch is ConnectionEnded {
        } catch {
            logger.debug("SSIP connection ended", metadata: ["client": "\(client)", "error": "\(error)"])
        }
        await router.close(client)
    }

    private struct ConnectionEnded: Error {}
}

/// A connection as the accept loop hands it over: finishes its writer if it is dropped unserved
/// (NIO traps on an `NIOAsyncChannel` dropped with its writer open, which happens to a connection
/// accepted just as the server closes). Finishing a served one again does nothing.
final class AcceptedSSIPConnection: Sendable {
    let channel: NIOAsyncChannel<SSIPFrame, SSIPReply>

    init(_ channel: NIOAsyncChannel<SSIPFrame, SSIPReply>) {
        self.channel = channel
    }

    deinit {
        channel.outbound.finish()
        channel.channel.close(promise: nil)
    }
}

/// The socket's folder, and what is already at the path.
enum SSIPSocketFile {
    /// Makes the folder (0700) and clears a stale socket file. Returns false when a live server
    /// answers at `path`: its socket is left alone.
    static func prepare(path: String) throws -> Bool {
        try makeFolders(for: path)
        var status = stat()
        guard lstat(path, &status) == 0 else { return true }
        if SocketProbe.accepts(path: path) { return false }
        // Nobody answers: a leftover of a server that died. Safe to replace.
        unlink(path)
        return true
    }

    private static func makeFolders(for path: String) throws {
        var folder = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true).dropLast() {
            folder += "/" + component
            if mkdir(folder, 0o700) != 0, errno != EEXIST {
                throw SSIPServerError.cannotCreateFolder(folder, errno: errno)
            }
        }
    }
}

/// Why the SSIP front end could not start.
public struct SSIPServerError: Error, CustomStringConvertible {
    private enum Code { case cannotCreateFolder }

    private let code: Code
    public let description: String

    static func cannotCreateFolder(_ folder: String, errno: Int32) -> SSIPServerError {
        SSIPServerError(code: .cannotCreateFolder, description: "cannot create \(folder) for the SSIP socket: \(String(cString: strerror(errno)))")
    }
}
