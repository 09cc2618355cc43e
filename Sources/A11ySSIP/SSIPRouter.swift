import A11yCore

/// The SSIP front end's post office: replies and events to each connection, in order, and settings
/// one connection changes for others (`SET all …`).
///
/// While a connection's command is being answered its events wait, so that no event ever falls
/// between a command and its reply (the SSIP manual's rule; speech-dispatcher itself breaks it). An
/// outbox the client does not drain is bounded: past `outboxLimit` replies the connection is closed.
///
/// After the reply that queued a message, its events wait `eventGrace` more: python3-speechd (and so
/// Orca) registers a message's callback only once it has read that reply, on another thread than the
/// one reading events, and a11yd begins speaking within a millisecond or two; without the grace,
/// `701 BEGIN` is often lost (seen in one run of three).
actor SSIPRouter {
    private struct Connection {
        var outbox: AsyncStream<SSIPReply>.Continuation
        /// The events each of its messages asked for, until the message's last event.
        var messages: [UtteranceID: SSIPNotifications] = [:]
        var isAnswering = false
        /// Events wait until this instant (the grace after a message was queued).
        var holdsUntil: ContinuousClock.Instant?
        var heldEvents: [SSIPReply] = []
        /// Changes other connections made, applied before its next line.
        var changes: [SSIPSettingChange] = []
    }

    private let outboxLimit: Int
    private let eventGrace: Duration
    private var connections: [ClientID: Connection] = [:]

    init(outboxLimit: Int, eventGrace: Duration) {
        self.outboxLimit = outboxLimit
        self.eventGrace = eventGrace
    }

    var connectionCount: Int { connections.count }

    /// A new connection; what is to be written to it comes out of the returned stream, in order,
    /// and the stream ends when the connection is to close.
    func register(_ client: ClientID) -> AsyncStream<SSIPReply> {
        let (replies, outbox) = AsyncStream.makeStream(of: SSIPReply.self, bufferingPolicy: .bufferingOldest(outboxLimit))
        connections[client] = Connection(outbox: outbox)
        return replies
    }

    func send(_ reply: SSIPReply, to client: ClientID) {
        guard let connection = connections[client] else { return }
        if case .dropped = connection.outbox.yield(reply) { close(client) }
    }

    func beginAnswer(_ client: ClientID) {
        connections[client]?.isAnswering = true
    }

    /// The reply is written: the events that waited for it follow, after the grace if it queued
    /// a message.
    func endAnswer(_ client: ClientID, queuedMessage: Bool) {
        connections[client]?.isAnswering = false
        if queuedMessage, eventGrace > .zero {
            connections[client]?.holdsUntil = .now + eventGrace
            let grace = eventGrace
            Task {
                try? await Task.sleep(for: grace)
                self.endGrace(client)
            }
        }
        releaseIfDue(client)
    }

    private func endGrace(_ client: ClientID) {
        guard let until = connections[client]?.holdsUntil, until <= .now else { return }
        connections[client]?.holdsUntil = nil
        releaseIfDue(client)
    }

    /// Sends the held events, in order, unless something still holds them.
    private func releaseIfDue(_ client: ClientID) {
        guard var connection = connections[client], !connection.isAnswering, connection.holdsUntil == nil else { return }
        let held = connection.heldEvents
        connection.heldEvents = []
        connections[client] = connection
        for event in held { send(event, to: client) }
    }

    /// A message the client is about to queue, with the events it wants for it.
    func expect(_ id: UtteranceID, notifications: SSIPNotifications, by client: ClientID) {
        connections[client]?.messages[id] = notifications
    }

    func forget(_ id: UtteranceID, by client: ClientID) {
        connections[client]?.messages[id] = nil
    }

    func route(_ delivery: ClientEvent) {
        let client = delivery.owner
        let id = delivery.event.utterance
        guard var connection = connections[client], let notifications = connection.messages[id] else { return }
        if case .finished = delivery.event { connection.messages[id] = nil }
        let reply = SSIPEvents.reply(for: delivery.event, client: client, notifications: notifications)
        let holding = connection.isAnswering || connection.holdsUntil != nil
        if let reply, holding { connection.heldEvents.append(reply) }
        connections[client] = connection
        if let reply, !holding { send(reply, to: client) }
    }

    /// Hands a settings change to other connections: every other one for `.all`, else the one
    /// named. Returns false when no connection has that id.
    func change(_ change: SSIPSettingChange, for scope: ControlScope, from sender: ClientID) -> Bool {
        switch scope {
        case .all:
            for client in connections.keys where client != sender { connections[client]?.changes.append(change) }
            return true
        case .client(let client):
            guard connections[client] != nil else { return false }
            connections[client]?.changes.append(change)
            return true
        }
    }

    func takeChanges(for client: ClientID) -> [SSIPSettingChange] {
        guard let changes = connections[client]?.changes, !changes.isEmpty else { return [] }
        connections[client]?.changes = []
        return changes
    }

    /// Ends the connection's outbox: what is queued is still written, then it closes.
    func close(_ client: ClientID) {
        connections.removeValue(forKey: client)?.outbox.finish()
    }

    /// Closes every connection once what was queued for it is written (shutdown).
    func closeAll() {
        for connection in connections.values { connection.outbox.finish() }
        connections.removeAll()
    }
}
