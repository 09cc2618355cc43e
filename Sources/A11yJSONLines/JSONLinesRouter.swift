// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
import A11yProtocol
import Logging

/// The JSON front end's post office: replies go to the asker, an item's events to the connection
/// that posted it, every event to subscribers.
///
/// A connection whose client stopped sending (closed or half-closed) is kept until the items it
/// posted have finished, so a client that posts and half-closes still hears `finished`; items of a
/// client that went away entirely are still spoken, their events go nowhere. Who posted an item is
/// the item's (`SpeechItem.owner`, named by each of its events); the router keeps only which of a
/// connection's items it still waits for, from the same step as their post (`post(_:replying:to:)`,
/// the front end's only way to post). What waits for a
/// client is bounded by its `Outbox`: replies and its own items' events are owed and kept, a
/// subscriber's copies of others' events and progress events are shed when it falls behind, and
/// one that takes nothing for a while is cut off by its writer, so that it holds up no one and no
/// memory.
actor JSONLinesRouter {
    private struct Connection {
        var outbox: Outbox<ServerMessage>
        var isSubscribed = false
        var stoppedReading = false
        var shedding = false
        /// Posted and not finished yet.
        var outstanding: Set<UtteranceID> = []
    }

    private var connections: [ClientID: Connection] = [:]
    private let speech: any SpeechControl
    private let limits: Outbox<ServerMessage>.Limits
    private let logger: Logger

    init(speech: any SpeechControl, limits: Outbox<ServerMessage>.Limits = .init(), logger: Logger) {
        self.speech = speech
        self.limits = limits
        self.logger = logger
    }

    /// A new connection; its writer drains the returned outbox.
    func register(_ client: ClientID) -> Outbox<ServerMessage> {
        let outbox = Outbox<ServerMessage>(limits: limits)
        connections[client] = Connection(outbox: outbox)
        return outbox
    }

    /// Sends `message` to `client`: `owed` unless it is a copy of another client's event.
    func send(_ message: ServerMessage, to client: ClientID, owed: Bool = true) {
        guard let connection = connections[client] else { return }
        switch connection.outbox.push(message, owed: owed) {
        case .queued:
            if connection.shedding, connection.outbox.waiting < limits.shedProgressAfter / 2 {
                connections[client]?.shedding = false
            }
        case .shed:
            if !connection.shedding {
                connections[client]?.shedding = true
                logger.notice(
                    "client reads slowly; dropping its word and mark events and its copies of others' events",
                    metadata: ["client": "\(client)"])
            }
        case .closed:
            break
        }
    }

    /// Queues `items`, prepared for `client`, in one step, and sends it `reply` first. The client's
    /// connection stays open until each has finished, counted from before the post, so no event of
    /// theirs can come first. Once speech has shut down nothing is queued, and each item still gets
    /// its one `finished`, from here.
    func post(_ items: [SpeechItem], replying reply: ServerMessage, to client: ClientID) async {
        connections[client]?.outstanding.formUnion(items.map(\.id))
        send(reply, to: client)
        if await speech.post(items) { return }
        for item in items {
            route(ClientEvent(
                .finished(item.id, text: item.text, reason: .stopped, message: "the daemon is shutting down"), owner: item.owner))
        }
    }

    func subscribe(_ client: ClientID) {
        connections[client]?.isSubscribed = true
    }

    func route(_ delivery: ClientEvent) {
        let message = ServerMessage.event(delivery.event)
        // Nobody's (no client posted it): for subscribers only.
        if let owner = delivery.owner { send(message, to: owner) }
        for (client, connection) in connections where connection.isSubscribed && client != delivery.owner {
            send(message, to: client, owed: false)
        }
        if case .finished(let id, _, _, _) = delivery.event, let owner = delivery.owner {
            connections[owner]?.outstanding.remove(id)
            closeIfDone(owner)
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

extension Outbox<ServerMessage> {
    /// A JSON Lines client's outbox: its progress events are `word` and `mark`.
    convenience init(limits: Limits = Limits()) {
        self.init(limits: limits, isProgress: { $0.isProgress })
    }
}

extension ServerMessage {
    /// Events that only say how far speech has got; a late reader can do without them.
    var isProgress: Bool {
        switch self {
        case .event(.word), .event(.mark): true
        default: false
        }
    }
}
