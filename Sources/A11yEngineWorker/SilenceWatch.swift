// SPDX-License-Identifier: GPL-3.0-or-later
/// Whether a worker that has sent nothing for a while is hung, or only working slowly.
///
/// Wall time alone cannot tell: on a busy machine (a build on both cores) a Piper worker saying
/// a clause gets a sliver of a CPU and can stay silent for several seconds while it works, and a
/// limit on silence alone killed it and failed the item (seen at load 12: every post `error`,
/// then its text refused as one that kills workers). What the worker spends of the CPU tells:
/// - a worker that spends none for `limit` is stopped or blocked: hung (SIGSTOP, a deadlock), unless
///   it waits for the machine (a thread runnable, waiting for a CPU, or in the disk's uninterruptible
///   sleep), for up to `machineWaitFactor × limit` of the silence: a fresh worker of an a11yd restarted
///   on a swamped machine (nine test processes starting, a package installed) spent no CPU for 2 s,
///   was killed, and the first words after the restart were lost;
/// - a worker that spends `runawayFactor × limit` of CPU without a word is looping: hung;
/// - anything else is working, however slowly, and is waited for.
/// On an idle machine a stopped or blocked worker is noticed after `limit`, as before.
///
/// Pure: the caller reads the worker's CPU time (`nil` when it cannot be read: then wall time
/// decides alone) and the clock, and asks after each stretch of silence.
struct SilenceWatch {
    /// Silence with no CPU spent that counts as hung; also the unit of the runaway limit.
    let limit: Duration
    /// CPU time spent without sending anything, in `limit`s, that counts as a loop.
    static let runawayFactor = 2
    /// Silence, in `limit`s, for which waiting for the machine counts as working (a bound: a worker
    /// stuck in the disk's sleep for good is hung too).
    static let machineWaitFactor = 5

    /// When the silence began, and the worker's CPU time then.
    private let start: (at: ContinuousClock.Instant, cpu: Duration?)
    /// The last time the worker was seen spending CPU, and its CPU time then.
    private var lastWork: (at: ContinuousClock.Instant, cpu: Duration?)

    init(limit: Duration, now: ContinuousClock.Instant, cpu: Duration?) {
        self.limit = limit
        start = (now, cpu)
        lastWork = (now, cpu)
    }

    enum Verdict: Equatable {
        /// Working, or not silent for long enough: wait at most this long before asking again.
        case wait(Duration)
        /// Hung: spent no CPU for `limit` (or none could be read), or looped for the runaway limit.
        case hung(Hang)
    }

    enum Hang: Equatable {
        case idle
        case looping
    }

    /// The longest a wait lasts: CPU time is looked at this often while the worker is silent.
    static func slice(of limit: Duration) -> Duration { min(limit, .milliseconds(250)) }

    /// The verdict at `now`, when the worker's CPU time is `cpu` and it `waitsForTheMachine` (a thread
    /// runnable or in the disk's sleep).
    mutating func verdict(now: ContinuousClock.Instant, cpu: Duration?, waitsForTheMachine: Bool = false) -> Verdict {
        if let cpu, let before = lastWork.cpu, cpu > before {
            lastWork = (now, cpu)
        } else if waitsForTheMachine, now - start.at < limit * Self.machineWaitFactor {
            lastWork.at = now
        }
        if let cpu, let first = start.cpu, cpu - first >= limit * Self.runawayFactor {
            return .hung(.looping)
        }
        let idle = now - lastWork.at
        if idle >= limit { return .hung(.idle) }
        return .wait(min(Self.slice(of: limit), limit - idle))
    }
}
