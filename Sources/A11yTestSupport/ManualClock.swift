// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// A clock whose time moves only when the test calls `advance(by:)`: sleepers wake when their
/// deadline has passed. Time-based rules (the watchdog, heap trim's quiet spell, idle exit) are
/// then exact, whatever the load, and take no real time.
public final class ManualClock: Clock, Sendable {
    public typealias Duration = Swift.Duration
    public struct Instant: InstantProtocol {
        public var offset: Swift.Duration
        public func advanced(by duration: Swift.Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Swift.Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }
    private struct Sleeper {
        var deadline: Instant
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        var sleepsBegun = 0
    }
    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Swift.Duration { .zero }

    /// How many tasks are asleep on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// How many sleeps have begun on this clock, ended or not: a timer armed and disarmed at once
    /// still counts, which `sleeperCount` alone would miss.
    /// Counted when the sleep is filed, ended at once or cancelled, in the same step: never a sleep
    /// begun and not yet seen by `sleeperCount`.
    public var sleepsBegun: Int { state.withLock { $0.sleepsBegun } }

    public func sleep(until deadline: Instant, tolerance: Swift.Duration?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // A sleep begun in a cancelled task ends at once, as on a real clock: its task was
                // cancelled before `onCancel` could find it here. Cancellation marks the task before
                // it calls `onCancel`, so checking under the lock leaves no gap between the two.
                let outcome = state.withLock { state -> Result<Bool, CancellationError> in
                    state.sleepsBegun += 1
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(true) }
                    state.sleepers.append(Sleeper(deadline: deadline, id: id, continuation: continuation))
                    return .success(false)
                }
                switch outcome {
                case .failure(let error): continuation.resume(throwing: error)
                case .success(true): continuation.resume()
                case .success(false): break
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Returns how many sleepers it woke: what a rule did at that moment, known without waiting
    /// to see whether it acts.
    @discardableResult
    public func advance(by duration: Swift.Duration) -> Int {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
        return due.count
    }

    /// Advances in `step`s for `total`, waiting before each step until a task sleeps on this clock
    /// (a deadline is armed), so that no step passes unseen.
    public func run(for total: Swift.Duration, step: Swift.Duration, between: () -> Void = {}) async {
        var elapsed = Swift.Duration.zero
        while elapsed < total {
            between()
            await waitForSleeper()
            advance(by: step)
            elapsed += step
        }
        await waitForSleeper()
    }

    public func waitForSleeper() async {
        for _ in 0..<100_000 where sleeperCount == 0 { await Task.yield() }
    }

    /// Lets other tasks run until `condition` holds (a timer armed or disarmed, a woken sleeper's
    /// work done); false if it still does not after 5 s of real time, which only a broken rule takes.
    public func settle(until condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            await Task.yield()
        }
        return true
    }
}
