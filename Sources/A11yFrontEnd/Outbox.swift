// SPDX-License-Identifier: GPL-3.0-or-later
import DequeModule
import Synchronization

/// What waits to be written to one client, bounded whatever the client does: every front end's.
///
/// Two kinds of message wait here. What the daemon **owes** the client (replies, and the events of
/// the items it posted) is never dropped: it is bounded by what the client was allowed to ask and
/// to queue (its requests are not read while its answers wait, `waitForRoom`, and the queue has a
/// bound), so a client that reads gets all of it, whatever the burst (10,000 `finished` at once
/// after a `stop`). What is **not owed** is shed once the client is behind: progress events (JSON
/// `word` and `mark`, SSIP's index marks: they only say where speech is) first, then a
/// subscriber's copies of other clients' events.
///
/// A client that leaves messages waiting and takes none for `Limits.stallLimit` is cut off: the
/// writer's `drain` throws `Stalled`, and the front end closes the connection. That is the only
/// way a connected client is cut off; until then it holds at most what it is owed plus
/// `shedCopiesAfter` copies.
public final class Outbox<Message: Sendable>: Sendable {
    public struct Limits: Sendable {
        /// Messages waiting beyond which progress events are dropped.
        public var shedProgressAfter: Int
        /// Messages waiting beyond which copies of other clients' events are dropped too.
        public var shedCopiesAfter: Int
        /// How long messages may wait with the client taking none before it is cut off.
        public var stallLimit: Duration

        public init(shedProgressAfter: Int = 256, shedCopiesAfter: Int = 4096, stallLimit: Duration = .seconds(30)) {
            self.shedProgressAfter = shedProgressAfter
            self.shedCopiesAfter = max(shedProgressAfter, shedCopiesAfter)
            self.stallLimit = stallLimit
        }
    }

    public enum Outcome: Equatable, Sendable {
        case queued
        /// A message not owed was dropped: the reader is behind.
        case shed
        /// The outbox was already finished.
        case closed
    }

    /// The client took nothing for `Limits.stallLimit` while messages waited for it.
    public struct Stalled: Error, Sendable, CustomStringConvertible {
        public var waiting: Int
        public var stallLimit: Duration
        public var description: String { "it took none of \(waiting) waiting messages for \(stallLimit)" }
    }

    private struct State {
        var messages: Deque<Message> = []
        var isFinished = false
        /// Messages queued, and taken out by the writer, ever: the stall watch compares them across
        /// its wait.
        var pushed: UInt64 = 0
        var taken: UInt64 = 0
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
    /// Rings when something was queued, for the stall watch, which has no timer until something comes.
    private let arrivals: AsyncStream<Void>
    private let ringArrivals: AsyncStream<Void>.Continuation

    public init(limits: Limits = Limits(), isProgress: @escaping @Sendable (Message) -> Bool) {
        self.limits = limits
        self.isProgress = isProgress
        (doorbell, ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (room, ringRoom) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (arrivals, ringArrivals) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a message. `owed`: a reply, or an event of the client's own item, never dropped;
    /// otherwise a copy of someone else's event, dropped once the client is behind. Progress
    /// events are dropped once it is behind, whoever they are for.
    public func push(_ message: Message, owed: Bool = true) -> Outcome {
        let outcome: Outcome = state.withLock { state in
            if state.isFinished { return .closed }
            let waiting = state.messages.count
            if waiting >= limits.shedProgressAfter, isProgress(message) { return .shed }
            if waiting >= limits.shedCopiesAfter, !owed { return .shed }
            state.messages.append(message)
            state.pushed &+= 1
            return .queued
        }
        if outcome == .queued {
            ring.yield()
            ringArrivals.yield()
        }
        return outcome
    }

    /// No more messages: the writer ends once what is queued is written.
    public func finish() {
        state.withLock { $0.isFinished = true }
        ring.finish()
        ringRoom.finish()
        ringArrivals.finish()
    }

    /// Every message, in order, until the outbox is finished and drained. One consumer. Throws
    /// `Stalled` when the client took nothing for `stallLimit` while messages waited (the caller
    /// then closes the connection), or what `write` throws.
    public func drain(_ write: @escaping @Sendable (Message) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: DrainPart.self) { group in
            group.addTask {
                for await _ in self.doorbell { try await self.writeWaiting(write) }
                try await self.writeWaiting(write)
                return .writer
            }
            group.addTask {
                try await self.watchForStalls()
                return .watch
            }
            // The writer's end is the drain's end (the watch is then cancelled). The watch throws
            // `Stalled` while the writer is stuck in a write: that leaves this loop, and the group
            // cancels the writer.
            while let ended = try await group.next(), ended == .watch {}
            group.cancelAll()
        }
    }

    private enum DrainPart { case writer, watch }

    private func writeWaiting(_ write: (Message) async throws -> Void) async throws {
        while let message = state.withLock({ state -> Message? in
            guard let message = state.messages.popFirst() else { return nil }
            state.taken &+= 1
            return message
        }) {
            try await write(message)
            ringRoom.yield()
        }
    }

    /// Asleep while nothing comes; once something does, wakes once per `stallLimit` (never per
    /// message: a flood costs no wake-ups) until nothing waits, and throws when something waited
    /// through a whole `stallLimit` without the writer taking a single message. Returns when the
    /// outbox is finished.
    private func watchForStalls() async throws {
        for await _ in arrivals {
            repeat {
                let (pushedBefore, takenBefore) = state.withLock { ($0.pushed, $0.taken) }
                try await Task.sleep(for: limits.stallLimit)
                let (taken, waiting) = state.withLock { ($0.taken, $0.messages.count) }
                if takenBefore < pushedBefore, taken == takenBefore {
                    throw Stalled(waiting: waiting, stallLimit: limits.stallLimit)
                }
            } while state.withLock({ !$0.messages.isEmpty })
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
