// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd

/// The SSIP front end's post office: replies and events to each connection, in order, and settings
/// one connection changes for others (`SET all …`).
///
/// While a connection's command is being answered its events wait, so that no event ever falls
/// between a command and its reply (the SSIP manual's rule; speech-dispatcher itself breaks it). What
/// waits for a client is bounded by its `Outbox`, as for the JSON front end: everything but index
/// marks is owed to it (replies, and the events of its own messages: SSIP has no subscribers), a
/// late reader loses index marks, and one that takes nothing for a while is cut off by its writer.
///
/// `701 BEGIN` goes out when the message is first heard (its first word or mark, else just before
/// its `702 END` or `704 PAUSED`), not when a11yd starts synthesising it: that is what BEGIN means
/// to speech-dispatcher's clients, and a BEGIN sent within a millisecond of `225` reaches
/// python3-speechd before it has registered the message's callback (its own TODO says so).
///
/// Who sent a message is the item's (`SpeechItem.owner`, named by each of its events); the router
/// keeps only what SSIP needs of each message of a connection (the notifications asked, whether
/// BEGIN went out), from the same step as its post (`post(_:notifications:)`, the front end's only
/// way to post) until its last event.
actor SSIPRouter {
    private struct Message {
        /// The events the client asked for when it sent the message.
        var notifications: SSIPNotifications
        var started = false
        var begun = false
    }

    private struct Connection {
        var outbox: Outbox<SSIPOutput>
        /// Each message until its last event.
        var messages: [UtteranceID: Message] = [:] {
            didSet { link.setMessagesNotEnded(messages.count) }
        }
        var isAnswering = false
        var heldEvents: [SSIPReply] = []
        /// Counts answers, so that a timed release meant for one cannot end a later one.
        var hold: UInt64 = 0
        /// What its session handler reads: changes other connections made, applied before its
        /// next line, and whether it has messages left.
        let link: SSIPChannelLink
    }

    private let speech: any SpeechControl
    private let limits: Outbox<SSIPOutput>.Limits
    /// Whether a queued message's events wait for the client's next line (for at most
    /// `SSIPServer.Configuration.eventsHeldAfterQueued`, which its session handler keeps).
    private let holdsEventsAfterQueued: Bool
    private var connections: [ClientID: Connection] = [:]

    init(speech: any SpeechControl, limits: Outbox<SSIPOutput>.Limits, holdsEventsAfterQueued: Bool = false) {
        self.speech = speech
        self.limits = limits
        self.holdsEventsAfterQueued = holdsEventsAfterQueued
    }

    /// A new connection; its writer drains the returned outbox, which ends when the connection is
    /// to close. `link` is where its session handler finds what `SET all …` changed, and whether
    /// any of its messages has not ended.
    func register(_ client: ClientID, link: SSIPChannelLink = SSIPChannelLink()) -> Outbox<SSIPOutput> {
        let outbox = Outbox<SSIPOutput>(limits: limits, isProgress: \.isProgress)
        connections[client] = Connection(outbox: outbox, link: link)
        return outbox
    }

    func send(_ reply: SSIPReply, to client: ClientID) {
        _ = connections[client]?.outbox.push(.reply(reply))
    }

    func beginAnswer(_ client: ClientID) {
        connections[client]?.isAnswering = true
        connections[client]?.hold &+= 1
    }

    /// The reply is written: the session goes back to the connection's event loop
    /// (`SSIPSessionHandler`) behind it, and the events that waited for it follow, at once or, after
    /// a reply that queued a message, once the client's next line is answered or the hold's time
    /// has passed, whichever comes first: the session handler, which keeps that time on its event
    /// loop, asks for them (`release(_:hold:)`).
    ///
    /// Why wait: python3-speechd (and so Orca) registers a message's callbacks only after it has
    /// read its `225`, and silently drops events that come before (its own TODO says so). a11yd's
    /// first sound, and so BEGIN, can follow the `225` within 3 ms, where speech-dispatcher's come
    /// about 20 ms later. A client's next command shows it is done with the previous reply, so it
    /// releases the events at once.
    func endAnswer(_ client: ClientID, returning session: SSIPSession, queuedMessage: Bool = false) {
        guard let connection = connections[client] else { return }
        let holds = queuedMessage && holdsEventsAfterQueued
        _ = connection.outbox.push(.answered(session, heldEvents: holds ? connection.hold : nil))
        if !holds { releaseHeldEvents(client) }
    }

    /// The events held since the answer numbered `hold` go out, unless a later answer began (it
    /// releases them itself when it ends).
    func release(_ client: ClientID, hold: UInt64) {
        guard connections[client]?.hold == hold else { return }
        releaseHeldEvents(client)
    }

    private func releaseHeldEvents(_ client: ClientID) {
        guard var connection = connections[client] else { return }
        connection.isAnswering = false
        let held = connection.heldEvents
        connection.heldEvents = []
        connections[client] = connection
        for event in held { send(event, to: client) }
    }

    /// Queues a message prepared for its client (`SpeechItem.owner`), with the events the client
    /// wants for it: kept from the same step as the post, so that its first event finds it, and let
    /// go if speech has shut down. Returns false then: nothing was queued.
    func post(_ item: SpeechItem, notifications: SSIPNotifications) async -> Bool {
        guard let client = item.owner else { preconditionFailure("an SSIP message is prepared for its client") }
        connections[client]?.messages[item.id] = Message(notifications: notifications)
        if await speech.post([item]) { return true }
        connections[client]?.messages[item.id] = nil
        return false
    }

    func route(_ delivery: ClientEvent) {
        // Nobody's item is no SSIP client's message.
        guard let client = delivery.owner else { return }
        // The queue's own pause names no message: SSIP has no notification for it.
        guard let id = delivery.event.utterance else { return }
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
        case .resumed, .finished, .queuePaused:
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
            for (client, connection) in connections where client != sender { connection.link.append(change) }
            return true
        case .client(let client):
            guard let connection = connections[client] else { return false }
            connection.link.append(change)
            return true
        }
    }

    /// Ends the connection's outbox: what is queued is still written, then it closes.
    func close(_ client: ClientID) {
        guard let connection = connections.removeValue(forKey: client) else { return }
        // Events held behind an answer are still the client's: they go before the end.
        for event in connection.heldEvents { _ = connection.outbox.push(.reply(event)) }
        connection.outbox.finish()
    }

    /// Closes every connection once what was queued for it is written (shutdown).
    func closeAll() {
        for client in connections.keys { close(client) }
    }
}
