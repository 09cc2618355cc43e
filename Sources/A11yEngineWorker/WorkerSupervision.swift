// SPDX-License-Identifier: GPL-3.0-or-later
/// The rules of one engine's worker as a pure state machine, in the manner of `SpeechQueue`: where a
/// request goes (the worker, a worker to start first, the in-process engine, or nowhere and why),
/// what a failed start or a failed worker leads to, when a request is tried again or refused, and
/// when an idle worker is ended. `WorkerEngine`'s link thread carries out what it returns (starting,
/// ending and reaping processes, sending and receiving); `Worker` is `WorkerProcess` there, and
/// anything in the tests (Tests/A11yEngineWorkerTests/WorkerSupervisionTests.swift).
struct WorkerSupervision<Worker> {
    enum State {
        /// No worker: none was started yet, or the last one failed or died; the next request starts
        /// one (after a failure or a death while idle, one is started at once).
        case notStarted
        /// A worker that said `ready`, serving requests one at a time.
        case ready(Worker)
        /// The worker was ended after `WorkerLaunch.idleLimit` idle, to give its memory back; the
        /// next request starts another.
        case retired
        /// No worker could start and the engine cannot run in process: requests fail at once with
        /// `why` until `until`, then a start is tried again.
        case unstartable(until: ContinuousClock.Instant, why: String)
        /// The engine runs in a11yd's own process and serves every request from now on.
        case inProcess
        /// `WorkerEngine.shutDown()`: every request fails. The worker still alive, if any, is the
        /// link thread's to end once it is done with it (it may be serving a request).
        case shutDown(Worker?)
    }

    /// Where a request goes now.
    enum Route {
        case worker(Worker)
        /// Start a worker (`started` or `startFailed` follows), then route again.
        case start
        case inProcess
        /// Fail it at once, with why.
        case fail(String)
        case shuttingDown
    }

    /// What follows a worker's failure under a request.
    enum AfterFailure: Equatable {
        /// Try the request once more, on a new worker: its worker died before sending anything of
        /// it (killed while idle, or just as it came), which is not the request's fault.
        case tryAgain
        /// The request fails; a new worker is started at once, so that the next finds it ready.
        case failAndStartAnother
    }

    /// How many failed workers a request may cost before it is refused.
    static var refusalThreshold: Int { 2 }
    /// How long an engine whose worker cannot start fails requests at once, before it tries again.
    static var restartPause: Duration { .seconds(30) }
    /// How many requests' failures are remembered; the count starts again beyond.
    static var rememberedRequests: Int { 64 }

    private(set) var state: State
    let inProcess: WorkerLaunch.InProcess
    /// How many workers each request (by `WorkerEngine.fingerprint`) has cost.
    private(set) var failures: [Int: Int] = [:]

    init(inProcess: WorkerLaunch.InProcess) {
        self.inProcess = inProcess
        state = inProcess == .always ? .inProcess : .notStarted
    }

    /// The worker alive now, if there is one.
    var worker: Worker? {
        switch state {
        case .ready(let worker): worker
        case .shutDown(let worker): worker
        case .notStarted, .retired, .unstartable, .inProcess: nil
        }
    }

    /// Where a request goes at `now`.
    func route(now: ContinuousClock.Instant) -> Route {
        switch state {
        case .ready(let worker): .worker(worker)
        case .notStarted, .retired: .start
        case .unstartable(let until, let why): now < until ? .fail(why) : .start
        case .inProcess: .inProcess
        case .shutDown: .shuttingDown
        }
    }

    /// A request that made `refusalThreshold` workers fail is refused: how many it made fail, or
    /// nil if it may be tried.
    func refusal(of request: Int) -> Int? {
        let count = failures[request, default: 0]
        return count >= Self.refusalThreshold ? count : nil
    }

    /// A worker started and said `ready` (kept to be ended if the engine was shut down meanwhile).
    mutating func started(_ worker: Worker) {
        state = isShutDown ? .shutDown(worker) : .ready(worker)
    }

    /// No worker could start (`WorkerEngine.startAttempts` tries, the last failing with `why`): the
    /// engine runs in process if it may (and returns nil), else fails its requests for
    /// `restartPause` (and returns the reason they fail with).
    mutating func startFailed(engine: String, why: String, now: ContinuousClock.Instant) -> String? {
        if isShutDown { return nil }
        guard inProcess == .never else {
            state = .inProcess
            return nil
        }
        let reason = "the \(engine) worker cannot start (\(why)); a11yd tries again in \(Self.restartPause)"
        state = .unstartable(until: now + Self.restartPause, why: reason)
        return reason
    }

    /// The worker failed under `request` on its `round` (1 or 2): it is gone; the failure counts
    /// against the request when it may be blamed (a worker that breaks the protocol is at fault
    /// alone). Returns how many workers the request has cost, and what follows.
    mutating func workerFailed(
        under request: Int, blamed: Bool, round: Int, died: Bool, sentAnything: Bool
    ) -> (failures: Int, next: AfterFailure) {
        // The link thread ends the failed worker itself.
        state = isShutDown ? .shutDown(nil) : .notStarted
        var count = 0
        if blamed {
            if failures.count >= Self.rememberedRequests { failures.removeAll() }
            failures[request, default: 0] += 1
            count = failures[request]!
        }
        return (count, round == 1 && died && !sentAnything ? .tryAgain : .failAndStartAnother)
    }

    /// The request went through on its `round`: one that did after a worker died under it was not
    /// the cause, and is forgiven.
    mutating func succeeded(_ request: Int, round: Int) {
        if round > 1 { failures.removeValue(forKey: request) }
    }

    /// The idle worker has been idle for `idleLimit`: returns it, to be ended.
    mutating func idleLimitReached() -> Worker? {
        guard case .ready(let worker) = state else { return nil }
        state = .retired
        return worker
    }

    /// The idle worker's channel stirred, which can only mean it died: returns it, to be ended; a
    /// new one is started at once.
    mutating func diedWhileIdle() -> Worker? {
        guard case .ready(let worker) = state else { return nil }
        state = .notStarted
        return worker
    }

    /// `WorkerEngine.shutDown()`, from any thread: requests fail from now on.
    mutating func shutDown() {
        if !isShutDown { state = .shutDown(worker) }
    }

    /// On the link thread, once shut down: the worker to end, handed over once.
    mutating func workerToEndAfterShutDown() -> Worker? {
        guard case .shutDown(let worker) = state else { return nil }
        state = .shutDown(nil)
        return worker
    }

    var isShutDown: Bool {
        if case .shutDown = state { true } else { false }
    }
}

extension WorkerSupervision: Sendable where Worker: Sendable {}
extension WorkerSupervision.State: Sendable where Worker: Sendable {}
extension WorkerSupervision.State: Equatable where Worker: Equatable {}
extension WorkerSupervision.Route: Equatable where Worker: Equatable {}
extension WorkerSupervision.Route: Sendable where Worker: Sendable {}
