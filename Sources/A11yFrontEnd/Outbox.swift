import DequeModule
import Synchronization

/// What waits to be written to one client, bounded whatever the client does: every front end's.
///
/// A reader that falls behind loses progress events first (JSON `word` and `mark`, SSIP's index
/// marks: they only say where speech is); one that stays behind is cut off: replies and the ends
/// of messages are never dropped, so the only bounded answer to a client that does not read them
/// is to stop serving it.
public final class Outbox<Message: Sendable>: Sendable {
    public struct Limits: Sendable {
        /// Messages waiting beyond which `word` and `mark` events are dropped.
        public var shedProgressAfter = 256
        /// Messages waiting beyond which the client is cut off.
        public var cutOffAfter = 4096

        public init(shedProgressAfter: Int = 256, cutOffAfter: Int = 4096) {
            self.shedProgressAfter = shedProgressAfter
            self.cutOffAfter = max(shedProgressAfter, cutOffAfter)
        }
    }

    public enum Outcome: Equatable, Sendable {
        case queued
        /// A progress event was dropped: the reader is behind.
        case shed
        /// The reader is too far behind to be served; nothing more is queued.
        case overflowed
        /// The outbox was already finished.
        case closed
    }

    private struct State {
        var messages: Deque<Message> = []
        var isFinished = false
    }

    public let limits: Limits
    /// Whether a message only reports progress, and may be dropped for a late reader.
    private let isProgress: @Sendable (Message) -> Bool
    private let state = Mutex(State())
    /// Rings when something was queued or the outbox finished; the writer then drains it.
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation
    /// Rings when the writer took a message out, for a reader waiting for room.
    private let room: AsyncStream<Void>
    private let ringRoom: AsyncStream<Void>.Continuation

    public init(limits: Limits = Limits(), isProgress: @escaping @Sendable (Message) -> Bool) {
        self.limits = limits
        self.isProgress = isProgress
        (doorbell, ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (room, ringRoom) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    public func push(_ message: Message) -> Outcome {
        let outcome: Outcome = state.withLock { state in
            if state.isFinished { return .closed }
            if state.messages.count >= limits.cutOffAfter {
                state.isFinished = true
                state.messages.removeAll()
                return .overflowed
            }
            if state.messages.count >= limits.shedProgressAfter, isProgress(message) { return .shed }
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
    public func finish() {
        state.withLock { $0.isFinished = true }
        ring.finish()
        ringRoom.finish()
    }

    /// Every message, in order, until the outbox is finished and drained. One consumer.
    public func drain(_ write: (Message) async throws -> Void) async throws {
        for await _ in doorbell {
            try await writeWaiting(write)
        }
        try await writeWaiting(write)
    }

    private func writeWaiting(_ write: (Message) async throws -> Void) async throws {
        while let message = state.withLock({ $0.messages.popFirst() }) {
            try await write(message)
            ringRoom.yield()
        }
    }

    /// Returns once no more than `shedProgressAfter` messages wait (or the outbox is finished):
    /// a client's requests are not read while the answers to its earlier ones are backed up, so
    /// a client that sends without reading is held up by its own socket, not by our memory.
    public func waitForRoom() async {
        guard !hasRoom else { return }
        for await _ in room where hasRoom { return }
    }

    public var hasRoom: Bool {
        state.withLock { $0.isFinished || $0.messages.count <= limits.shedProgressAfter }
    }

    public var waiting: Int { state.withLock { $0.messages.count } }
}
