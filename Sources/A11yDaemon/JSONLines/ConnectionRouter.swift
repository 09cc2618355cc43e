import A11yCore
import A11yProtocol

/// The JSON front end's post office: replies go to the asker, an item's events to the connection
/// that posted it, every event to subscribers.
///
/// A connection whose client stopped sending (closed or half-closed) is kept until the items it
/// posted have finished, so a client that posts and half-closes still hears `finished`; items of a
/// client that went away entirely are still spoken, their events go nowhere.
actor ConnectionRouter {
    private struct Connection {
        var outbox: AsyncStream<ServerMessage>.Continuation
        var isSubscribed = false
        var stoppedReading = false
        /// Posted and not finished yet.
        var outstanding: Set<UtteranceID> = []
    }

    private var connections: [ClientID: Connection] = [:]

    /// A new connection; its messages come out of the returned stream, in order.
    func register(_ client: ClientID) -> AsyncStream<ServerMessage> {
        let (messages, outbox) = AsyncStream.makeStream(of: ServerMessage.self)
        connections[client] = Connection(outbox: outbox)
        return messages
    }

    var connectionCount: Int { connections.count }

    func send(_ message: ServerMessage, to client: ClientID) {
        connections[client]?.outbox.yield(message)
    }

    /// Items about to be posted by `client`: it stays open until each one has finished.
    func expect(_ ids: [UtteranceID], by client: ClientID) {
        connections[client]?.outstanding.formUnion(ids)
    }

    func subscribe(_ client: ClientID) {
        connections[client]?.isSubscribed = true
    }

    func route(_ delivery: ClientEvent) {
        let message = ServerMessage.event(delivery.event)
        connections[delivery.owner]?.outbox.yield(message)
        for (client, connection) in connections where connection.isSubscribed && client != delivery.owner {
            connection.outbox.yield(message)
        }
        if case .finished = delivery.event {
            connections[delivery.owner]?.outstanding.remove(delivery.event.utterance)
            closeIfDone(delivery.owner)
        }
    }

    /// The client sent its last line; close once nothing it posted is still running.
    func stoppedReading(_ client: ClientID) {
        connections[client]?.stoppedReading = true
        closeIfDone(client)
    }

    /// The connection is gone (write failed or closed): forget it.
    func remove(_ client: ClientID) {
        connections.removeValue(forKey: client)?.outbox.finish()
    }

    /// Closes every connection once what was queued for it is written (daemon shutdown).
    func closeAll() {
        for connection in connections.values { connection.outbox.finish() }
        connections.removeAll()
    }

    private func closeIfDone(_ client: ClientID) {
        guard let connection = connections[client], connection.stoppedReading, !connection.isSubscribed,
            connection.outstanding.isEmpty
        else { return }
        remove(client)
    }
}
