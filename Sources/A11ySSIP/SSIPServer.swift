import A11yCore
import A11yFrontEnd
import Logging
import NIOCore
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
    public struct Configuration: Sendable {
        /// Longest line accepted; a longer one is answered `500` (a command) or refuses its message.
        public var maximumLineLength = 256 * 1024
        /// Most bytes of one SPEAK body.
        public var maximumMessageBytes = 1024 * 1024
        /// What may wait for a client that does not read: index marks are dropped past the first
        /// limit, and a client that takes nothing for the stall limit is cut off (`Outbox`).
        public var outboxLimits = Outbox<SSIPReply>.Limits()
        /// How long a queued message's first events wait after its `225`, unless the client's next
        /// command comes first: python3-speechd drops events it gets before it has registered the
        /// message's callbacks (`SSIPRouter.endAnswer`).
        public var eventsHeldAfterQueued: Duration = .milliseconds(30)
        /// What `GET LANGUAGE` says before a client sets one: speech-dispatcher's built-in default.
        public var defaultLanguage = "en-US"
        /// The priority of a client's messages until it sets one (`SET self PRIORITY`):
        /// speech-dispatcher's built-in default, `message` (config `ssip.default_priority`).
        public var defaultPriority = MessagePriority.message

        public init() {}
    }

    private typealias Connection = NIOAsyncChannel<SSIPFrame, SSIPReply>

    private let frontEnd: SocketFrontEnd<SSIPFrame, SSIPReply>
    private let speech: any SpeechControl
    private let configuration: Configuration
    private let events: AsyncStream<ClientEvent>
    private let router: SSIPRouter
    private let logger: Logger

    /// Only clients of `allowedUIDs`, the daemon's own user and root are served. Its connections are
    /// counted in `connectionCount`.
    public init(
        listener: SocketListener, allowedUIDs: [UInt32] = [], connectionCount: ConnectionCount = ConnectionCount(),
        speech: any SpeechControl, configuration: Configuration = .init(), logger: Logger
    ) {
        self.frontEnd = SocketFrontEnd(
            listener: listener, peers: PeerPolicy(allowedUIDs: allowedUIDs), connectionCount: connectionCount,
            logPrefix: "SSIP ", logger: logger)
        self.speech = speech
        self.configuration = configuration
        // Subscribed now, before any client can speak, so that no event is missed.
        self.events = speech.events()
        self.router = SSIPRouter(limits: configuration.outboxLimits, eventsHeldAfterQueued: configuration.eventsHeldAfterQueued)
        self.logger = logger
    }

    /// Where every SSIP client looks first: `$XDG_RUNTIME_DIR/speech-dispatcher/speechd.sock`
    /// (nil without `XDG_RUNTIME_DIR`).
    public static func defaultPath(environment: [String: String]) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        return runtime + "/speech-dispatcher/speechd.sock"
    }

    public func run() async throws {
        let maximumLineLength = configuration.maximumLineLength
        let logger = logger
        try await frontEnd.run(
            pipeline: { pipeline in
                try pipeline.addHandlers(
                    ByteToMessageHandler(SSIPLineDecoder(maximumLength: maximumLineLength)), MessageToByteHandler(SSIPReplyEncoder()))
            },
            whenTaken: { path in
                logger.notice(
                    "another speech server already listens on the SSIP socket; a11yd leaves it alone and serves JSON only",
                    metadata: ["socket": "\(path)"])
                try? await gracefulShutdown()
            },
            events: { for await delivery in self.events { await self.router.route(delivery) } },
            serve: { await self.serve($0) },
            closeAll: { await self.router.closeAll() })
    }

    private func serve(_ channel: Connection) async {
        let client = ClientID.next()
        let outbox = await router.register(client)
        let connection = SSIPConnection(client: client, speech: speech, router: router)
        var session = SSIPSession(
            client: client, defaultLanguage: configuration.defaultLanguage, defaultPriority: configuration.defaultPriority,
            limits: .init(maximumMessageBytes: configuration.maximumMessageBytes))
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        // The writer: every reply and event, in order, until the router closes the
                        // outbox (QUIT, the client gone, a client not reading, shutdown).
                        do {
                            try await outbox.drain { try await outbound.write($0) }
                        } catch {
                            if let stalled = error as? Outbox<SSIPReply>.Stalled {
                                self.logger.warning("SSIP client cut off: \(stalled)", metadata: ["client": "\(client)"])
                            }
                            // Nothing more can be written to it: close now, which ends the reader.
                            channel.channel.close(promise: nil)
                            throw error
                        }
                        outbound.finish()
                        // The conversation is over: stop reading too (EndsReadingWhenOutputCloses
                        // ends the reader below once what was queued is written).
                        throw ConnectionEnded()
                    }
                    do {
                        for try await frame in inbound {
                            // Backpressure: no more commands are read while this client's answers wait unread.
                            await outbox.waitForRoom()
                            guard await connection.handle(frame, session: &session) else { break }
                        }
                    } catch {
                        logger.debug("SSIP read ended", metadata: ["client": "\(client)", "error": "\(error)"])
                    }
                    // A message half sent is dropped; those queued are still spoken, but what
                    // the client's own pause held ends: nobody is left to resume it.
                    session.end()
                    await router.close(client)
                    await speech.clientLeft(client)
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
