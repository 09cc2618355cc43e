// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
import A11yProtocol
import NIOCore

/// What is JSON Lines' in a connection: lines in, one JSON object per line out, each request
/// answered through the speech API (`JSONLinesConnection`), events routed by `JSONLinesRouter`.
///
/// A client that stops sending is not done with: its connection stays open until the items it
/// posted have finished, so a client that posts and half-closes still hears `finished`
/// (docs/protocol.md). Its items are never cancelled by its leaving; `clientLeft` ends only what its
/// own pause held, and a JSON Lines client has no pause of its own (its controls are everyone's).
struct JSONLinesHandler: ConnectionHandler {
    let speech: any SpeechControl
    let router: JSONLinesRouter
    let maximumLineLength: Int

    func setUpChannel(_ pipeline: ChannelPipeline.SynchronousOperations, for client: ClientID) throws {
        try pipeline.addHandlers(
            ByteToMessageHandler(LineFrameDecoder(maximumLength: maximumLineLength)),
            MessageToByteHandler(JSONLineEncoder<ServerMessage>()))
    }

    func open(_ client: ClientID, link: Void) async -> (outbox: Outbox<ServerMessage>, conversation: JSONLinesConnection) {
        let outbox = await router.register(client)
        return (outbox, JSONLinesConnection(
            client: client, speech: speech, router: router, outbox: outbox, maximumLineLength: maximumLineLength))
    }

    func handle(value: LineBatch, conversation: inout JSONLinesConnection) async -> Bool {
        await conversation.handle(value)
        return true
    }

    func stoppedSending(_ client: ClientID, conversation: inout JSONLinesConnection) async {
        await router.stoppedReading(client)
    }

    func close(_ client: ClientID) async {
        await router.remove(client)
    }

    func route(_ event: ClientEvent) async {
        await router.route(event)
    }

    func closeAll() async {
        await router.closeAll()
    }

    func socketTaken(at path: String) async throws {
        throw JSONLinesServer.SocketTaken(path: path)
    }
}
