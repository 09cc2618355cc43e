// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
import Logging
import NIOCore
import ServiceLifecycle

/// What is SSIP's in a connection: CRLF lines (and SPEAK bodies) in, numbered replies and events
/// out, each line answered by the connection's `SSIPSession`, on the event loop when it needs no
/// speech call (`SSIPSessionHandler`), else through the speech API (`SSIPConnection`); events routed
/// by `SSIPRouter`.
///
/// SSIP's conversation ends with its client's last line: once the client quits or closes, what is
/// queued for it is written and the connection closes. Its messages are still spoken; what its own
/// pause held ends (`clientLeft`, told by the loop).
struct SSIPHandler: ConnectionHandler {

    let speech: any SpeechControl
    let router: SSIPRouter
    let configuration: SSIPServer.Configuration
    let logger: Logger

    func setUpChannel(_ pipeline: ChannelPipeline.SynchronousOperations, for client: ClientID) throws -> SSIPChannelLink {
        let session = SSIPSession(
            client: client, defaultLanguage: configuration.defaultLanguage, defaultPriority: configuration.defaultPriority,
            limits: .init(maximumMessageBytes: configuration.maximumMessageBytes))
        let link = SSIPChannelLink()
        let router = router
        try pipeline.addHandlers(
            ByteToMessageHandler(SSIPLineDecoder(maximumLength: configuration.maximumLineLength)),
            MessageToByteHandler(SSIPReplyEncoder()),
            SSIPSessionHandler(session: session, link: link, eventsHeldFor: TimeAmount(configuration.eventsHeldAfterQueued)) { hold in
                Task { await router.release(client, hold: hold) }
            })
        return link
    }

    func open(_ client: ClientID, link: SSIPChannelLink) async -> (outbox: Outbox<SSIPOutput>, conversation: SSIPConnection) {
        let outbox = await router.register(client, link: link)
        return (outbox, SSIPConnection(client: client, speech: speech, router: router))
    }

    func handle(value: SSIPCommand, conversation: inout SSIPConnection) async -> Bool {
        await conversation.handle(value)
    }

    func stoppedSending(_ client: ClientID, conversation: inout SSIPConnection) async {
        // A message half sent is dropped with the session handler; those queued are still spoken.
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
