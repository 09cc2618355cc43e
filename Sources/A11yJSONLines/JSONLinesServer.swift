import A11yCore
import A11yFrontEnd
import A11yProtocol
import Logging
import NIOCore
import ServiceLifecycle

/// The JSON Lines front end: a Unix socket, one connection per client, over the speech API.
///
/// It stops accepting on a graceful shutdown. Speech shuts down before it (the daemon lists it
/// after the front ends), so when the event stream ends every `finished` has been routed; then
/// connections are closed once their last lines are written.
public final class JSONLinesServer: Service, Sendable {
    public struct Configuration: Sendable {
        /// Longest line read; a longer one is dropped as it comes and answered `line_too_long`.
        public var maximumLineLength = LineFrameDecoder.defaultMaximumLength
        /// What may wait for a client that does not read: `word` and `mark` events are dropped past
        /// the first limit, a subscriber's copies of others' events past the second, and a client
        /// that takes nothing for the stall limit is cut off (`Outbox`).
        public var outboxLimits = Outbox<ServerMessage>.Limits()

        public init() {}
    }

    /// Another a11yd already answers on the socket: this one serves nothing.
    public struct SocketTaken: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var description: String { "another a11yd is already listening on \(path)" }
    }

    private typealias Connection = NIOAsyncChannel<LineBatch, ServerMessage>

    private let frontEnd: SocketFrontEnd<LineBatch, ServerMessage>
    private let speech: any SpeechControl
    private let configuration: Configuration
    private let events: AsyncStream<ClientEvent>
    private let router: JSONLinesRouter
    private let logger: Logger
    private let onReady: @Sendable () -> Void

    /// Only clients of `allowedUIDs`, the daemon's own user and root are served. Its connections are
    /// counted in `connectionCount`. `onReady` is called once the socket listens.
    public init(
        listener: SocketListener, allowedUIDs: [UInt32] = [], connectionCount: ConnectionCount = ConnectionCount(),
        speech: any SpeechControl, configuration: Configuration = .init(), logger: Logger,
        onReady: @escaping @Sendable () -> Void = {}
    ) {
        self.frontEnd = SocketFrontEnd(
            listener: listener, peers: PeerPolicy(allowedUIDs: allowedUIDs), connectionCount: connectionCount, logger: logger)
        self.router = JSONLinesRouter(limits: configuration.outboxLimits, logger: logger)
        self.speech = speech
        self.configuration = configuration
        // Subscribed now, before any client can post, so that no event is missed.
        self.events = speech.events()
        self.logger = logger
        self.onReady = onReady
    }

    public func run() async throws {
        let maximumLineLength = configuration.maximumLineLength
        try await frontEnd.run(
            pipeline: { pipeline in
                try pipeline.addHandlers(
                    ByteToMessageHandler(LineFrameDecoder(maximumLength: maximumLineLength)),
                    MessageToByteHandler(JSONLineEncoder<ServerMessage>()))
            },
            whenTaken: { path in throw SocketTaken(path: path) },
            events: { for await delivery in self.events { await self.router.route(delivery) } },
            serve: { await self.serve($0) },
            closeAll: { await self.router.closeAll() },
            onReady: onReady)
    }

    private func serve(_ channel: Connection) async {
        let client = ClientID.next()
        let outbox = await router.register(client)
        let connection = JSONLinesConnection(
            client: client, speech: speech, router: router, outbox: outbox, maximumLineLength: configuration.maximumLineLength)
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        // The writer: every message for this client, in order, until the router closes it.
                        do {
                            try await outbox.drain { try await outbound.write($0) }
                            // The reader below ends too, once this is written (EndsReadingWhenOutputCloses).
                            outbound.finish()
                        } catch let stalled as Outbox<ServerMessage>.Stalled {
                            self.logger.warning("client cut off: \(stalled)", metadata: ["client": "\(client)"])
                            await self.cutOff(client, channel)
                        } catch {
                            // Nothing more can be written to it: the conversation is over.
                            await self.cutOff(client, channel)
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

    /// Closes the connection now, unwritten messages and all: its reader ends too.
    private func cutOff(_ client: ClientID, _ channel: Connection) async {
        await router.remove(client)
        channel.channel.close(promise: nil)
    }
}
