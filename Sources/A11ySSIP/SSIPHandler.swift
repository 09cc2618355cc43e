import A11yCore
import A11yFrontEnd
import Logging
import NIOCore
import ServiceLifecycle

/// What is SSIP's in a connection: CRLF lines (and SPEAK bodies) in, numbered replies and events
/// out, each line answered by the connection's `SSIPSession` through the speech API
/// (`SSIPConnection`), events routed by `SSIPRouter`.
///
/// SSIP's conversation ends with its client's last line: once the client quits or closes, what is
/// queued for it is written and the connection closes. Its messages are still spoken; what its own
/// pause held ends (`clientLeft`, told by the loop).
struct SSIPHandler: ConnectionHandler {
    /// A connection's session, and who carries it out.
    struct Conversation {
        var connection: SSIPConnection
        var session: SSIPSession
    }

    let speech: any SpeechControl
    let router: SSIPRouter
    let configuration: SSIPServer.Configuration
    let logger: Logger

    func setUpChannel(_ pipeline: ChannelPipeline.SynchronousOperations) throws {
        try pipeline.addHandlers(
            ByteToMessageHandler(SSIPLineDecoder(maximumLength: configuration.maximumLineLength)),
            MessageToByteHandler(SSIPReplyEncoder()))
    }

    func open(_ client: ClientID) async -> (outbox: Outbox<SSIPReply>, conversation: Conversation) {
        let outbox = await router.register(client)
        let session = SSIPSession(
            client: client, defaultLanguage: configuration.defaultLanguage, defaultPriority: configuration.defaultPriority,
            limits: .init(maximumMessageBytes: configuration.maximumMessageBytes))
        return (outbox, Conversation(connection: SSIPConnection(client: client, speech: speech, router: router), session: session))
    }

    func handle(value: SSIPFrame, conversation: inout Conversation) async -> Bool {
        await conversation.connection.handle(value, session: &conversation.session)
    }

    func stoppedSending(_ client: ClientID, conversation: inout Conversation) async {
        // A message half sent is dropped; those queued are still spoken.
        conversation.session.end()
        await router.close(client)
    }

    func close(_ client: ClientID) async {
        await router.close(client)
    }

    func route(_ event: ClientEvent) async {
        await router.route(event)
    }

    func closeAll() async {
        await router.closeAll()
    }

    /// A running speech-dispatcher, most likely: left alone, and a11yd serves JSON only.
    func socketTaken(at path: String) async throws {
        logger.notice(
            "another speech server already listens on the SSIP socket; a11yd leaves it alone and serves JSON only",
            metadata: ["socket": "\(path)"])
        try? await gracefulShutdown()
    }
}
