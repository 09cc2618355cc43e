import A11yCore
import A11yProtocol
import DequeModule
import Synchronization

/// What waits to be written to one client, bounded whatever the client does.
///
/// A reader that falls behind loses `word` and `mark` events first (they only say where speech is);
/// one that stays behind is cut off: replies and `finished` are never dropped, so the only bounded
/// answer to a client that does not read them is to stop serving it.
final class ConnectionOutbox: Sendable {
    struct Limits: Sendable {
        /// Messages waiting beyond which `word` and `mark` events are dropped.
        var shedProgressAfter = 256
        /// Messages waiting beyond which the client is cut off.
        var cutOffAfter = 4096

        init(shedProgressAfter: Int = 256, cutOffAfter: Int = 4096) {
            self.shedProgressAfter = shedProgressAfter
            self.cutOffAfter = max(shedProgressAfter, cutOffAfter)
        }
    }

    enum Outcome: Equatable {
        case queued
        /// A progress event was dropped: the reader is behind.
        case shed
        /// The reader is too far behind to be served; nothing more is queued.
        case overflowed
        /// The outbox was already finished.
        case closed
    }

    private struct State {
        var messages: Deque<ServerMessage> = []
        var isFinished = false
    }

    private let limits: Limits
    private let state = Mutex(State())
    /// Rings when something was queued or the outbox finished; the writer then drains it.
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation
    /// Rings when the writer took a message out, for a reader waiting for room.
    private let room: AsyncStream<Void>
    private let ringRoom: AsyncStream<Void>.Continuation

    init(limits: Limits = Limits()) {
        self.limits = limits
        (doorbell, ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (room, ringRoom) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func push(_ message: ServerMessage) -> Outcome {
        let outcome: Outcome = state.withLock { state in
            if state.isFinished { return .closed }
            if state.messages.count >= limits.cutOffAfter {
                state.isFinished = true
                state.messages.removeAll()
                return .overflowed
            }
            if state.messages.count >= limits.shedProgressAfter, message.isProgress { return .shed }
            state.messages.append(message)
            return .queued
        }
        switch outcome {
        case .queued: ring.yield()
        case .overflowed:
            ring.finish()
            ringRoom.finish()
        case .shed, .closed: break
        }
        return outcome
    }

    /// No more messages: the writer ends once what is queued is written.
    func finish() {
        state.withLock { $0.isFinished = true }
        ring.finish()
        ringRoom.finish()
    }

    /// Every message, in order, until the outbox is finished and drained. One consumer.
    func drain(_ write: (ServerMessage) async throws -> Void) async throws {
        for await _ in doorbell {
            try await writeWaiting(write)
        }
        try await writeWaiting(write)
    }

    private func writeWaiting(_ write: (ServerMessage) async throws -> Void) async throws {
        while let message = state.withLock({ $0.messages.popFirst() }) {
            try await write(message)
            ringRoom.yield()
        }
    }

    /// Returns once no more than `shedProgressAfter` messages wait (or the outbox is finished):
    /// a client's requests are not read while the answers to its earlier ones are backed up, so
    /// a client that sends without reading is held up by its own socket, not by our memory.
    func waitForRoom() async {
        guard !hasRoom else { return }
        for await _ in room where hasRoom { return }
    }

    var hasRoom: Bool {
        state.withLock { $0.isFinished || $0.messages.count <= limits.shedProgressAfter }
    }

    var waiting: Int { state.withLock { $0.messages.count } }
}

extension ServerMessage {
    /// Events that only say how far speech has got; a late reader can do without them.
    fileprivate var isProgress: Bool {
        switch self {
        case .event(.word), .event(.mark): true
        default: false
        }
    }
}
