import A11yCore

/// The SSIP front end's post office: replies and events to each connection, in order, and settings
/// one connection changes for others (`SET all …`).
///
/// While a connection's command is being answered its events wait, so that no event ever falls
/// between a command and its reply (the SSIP manual's rule; speech-dispatcher itself breaks it). An
/// outbox the client does not drain is bounded: past `outboxLimit` replies the connection is closed.
///
/// `701 BEGIN` goes out when the message is first heard (its first word or mark, else just before
/// its `702 END` or `704 PAUSED`), not when a11yd starts synthesising it: that is what BEGIN means
/// to speech-dispatcher's clients, and a BEGIN sent within a millisecond of `225` reaches
/// python3-speechd before it has registered the message's callback (its own TODO says so).
actor SSIPRouter {
    private struct Message {
        /// The events the client asked for when it sent the message.
        var notifications: SSIPNotifications
        var started = false
        var begun = false
    }

    private struct Connection {
        var outbox: AsyncStream<SSIPReply>.Continuation
        /// Each message until its last event.
        var messages: [UtteranceID: Message] = [:]
        var isAnswering = false
        var heldEvents: [SSIPReply] = []
        /// Changes other connections made, applied before its next line.
        var changes: [SSIPSettingChange] = []
    }

    private let outboxLimit: Int
    private var connections: [ClientID: Connection] = [:]

    init(outboxLimit: Int) {
        self.outboxLimit = outboxLimit
    }

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

    /// The reply is written: the events that waited for it follow.
    func endAnswer(_ client: ClientID) {
        guard var connection = connections[client] else { return }
        connection.isAnswering = false
        let held = connection.heldEvents
        connection.heldEvents = []
        connections[client] = connection
        for event in held { send(event, to: client) }
    }

    /// A message the client is about to queue, with the events it wants for it.
    func expect(_ id: UtteranceID, notifications: SSIPNotifications, by client: ClientID) {
        connections[client]?.messages[id] = Message(notifications: notifications)
    }

    func forget(_ id: UtteranceID, by client: ClientID) {
        connections[client]?.messages[id] = nil
    }

    func route(_ delivery: ClientEvent) {
        let client = delivery.owner
        let id = delivery.event.utterance
        guard var connection = connections[client], var message = connection.messages[id] else { return }
        var replies: [SSIPReply] = []
        switch delivery.event {
        case .started:
            message.started = true
        case .word, .mark, .paused, .finished(_, _, .spoken, _):
            if message.started && !message.begun {
                message.begun = true
                replies += [SSIPEvents.begin(id, client: client, notifications: message.notifications)].compactMap { $0 }
            }
            replies += [SSIPEvents.reply(for: delivery.event, client: client, notifications: message.notifications)].compactMap { $0 }
        case .resumed, .finished:
            replies += [SSIPEvents.reply(for: delivery.event, client: client, notifications: message.notifications)].compactMap { $0 }
        }
        if case .finished = delivery.event {
            connection.messages[id] = nil
        } else {
            connection.messages[id] = message
        }
        if connection.isAnswering { connection.heldEvents += replies }
        connections[client] = connection
        if !connection.isAnswering { for reply in replies { send(reply, to: client) } }
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
