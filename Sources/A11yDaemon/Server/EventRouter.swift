import A11yCore
import A11yProtocol

/// Sends each line to the right connections: replies to the asker, an item's events to the
/// connection that posted it, every event to subscribers.
///
/// A connection whose client stopped sending (closed or half-closed) is kept until the items it
/// posted have finished, so a client that posts and half-closes still hears `finished`; items of a
/// client that went away entirely are still spoken, their events go nowhere.
public actor EventRouter {
    public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
        let rawValue: Int
        public var description: String { "#\(rawValue)" }
    }

    private struct Connection {
        var outbox: AsyncStream<String>.Continuation
        var isSubscribed = false
        var stoppedReading = false
    }

    private var connections: [ConnectionID: Connection] = [:]
    private var owners: [UtteranceID: ConnectionID] = [:]
    private var nextConnection = 1

    public init() {}

    /// A new connection; its lines come out of the returned stream, in order.
    public func register() -> (ConnectionID, AsyncStream<String>) {
        let id = ConnectionID(rawValue: nextConnection)
        nextConnection += 1
        let (lines, outbox) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        connections[id] = Connection(outbox: outbox)
        return (id, lines)
    }

    public func send(_ message: ServerMessage, to connection: ConnectionID) {
        connections[connection]?.outbox.yield(LineCodec.encode(message))
    }

    public func own(_ utterance: UtteranceID, by connection: ConnectionID) {
        owners[utterance] = connection
    }

    public func subscribe(_ connection: ConnectionID) {
        connections[connection]?.isSubscribed = true
    }

    public var connectionCount: Int { connections.count }

    /// The client sent its last line; close once nothing it posted is still running.
    public func stoppedReading(_ connection: ConnectionID) {
        connections[connection]?.stoppedReading = true
        closeIfDone(connection)
    }

    /// The connection is gone (write failed or closed): forget it.
    public func remove(_ connection: ConnectionID) {
        connections.removeValue(forKey: connection)?.outbox.finish()
    }

    /// Closes every connection once what was queued for it is written (daemon shutdown).
    public func closeAll() {
        for connection in connections.values { connection.outbox.finish() }
        connections.removeAll()
    }

    public func route(_ event: SpeechEvent) {
        let line = LineCodec.encode(ServerMessage(event))
        let owner = owners[event.utterance]
        if let owner { connections[owner]?.outbox.yield(line) }
        for (id, connection) in connections where connection.isSubscribed && id != owner {
            connection.outbox.yield(line)
        }
        if case .finished = event, let owner {
            owners.removeValue(forKey: event.utterance)
            closeIfDone(owner)
        }
    }

    private func closeIfDone(_ connection: ConnectionID) {
        guard let state = connections[connection], state.stoppedReading, !state.isSubscribed else { return }
        if !owners.values.contains(connection) { remove(connection) }
    }
}
