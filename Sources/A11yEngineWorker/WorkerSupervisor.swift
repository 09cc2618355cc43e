// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import DequeModule
import Logging

/// What the supervisor needs to know of a request, synthesis or question; the rest (the text, the
/// sink, the reply) is the executor's, handed back in the actions.
protocol SupervisedRequest {
    /// The request by what it asks (`WorkerEngine.fingerprint`): one that keeps killing workers is
    /// known by this.
    var fingerprint: Int { get }
    /// The question asked, or nil for a synthesis.
    var question: WorkerQuestion? { get }
}

/// The rules of one engine's worker and of the requests it serves, as one pure state machine in
/// the manner of `PlaybackState`: every input returns the actions to carry out, and nothing here
/// starts a process, reads a clock or touches a channel. Its one `State` holds everything: the
/// requests waiting, the one in the worker's hands (its round, whether it was cancelled, whether
/// the worker sent anything of it), and the worker itself (starting, ready, ending, none,
/// unstartable for a while, shut down). It knows no engine, nor what runs instead while none of its
/// workers can start: that is its caller's.
///
/// A request goes to the worker (started first if there is none), or fails at once with why; one
/// at a time, in the order asked. A request whose worker fails under it is tried once more on a
/// new worker if the worker died before sending anything of it (killed while idle, or just as the
/// request came: not the request's fault), else fails; either way its failure counts against it,
/// unless the worker broke the protocol (the worker's fault alone), and a request that made
/// `refusalThreshold` workers fail is refused. When no worker can start
/// (`startAttempts` in a row), requests fail as `engineUnavailable`, a reason of its own (never that
/// of a request that made a worker fail), for `restartPause`. Every submitted request ends exactly
/// once: one `finish`.
///
/// `WorkerLink` carries out the actions on its event loop; `Worker` is its `WorkerRef` there,
/// and anything Equatable in the tests (Tests/A11yEngineWorkerTests/WorkerSupervisorTests.swift).
struct WorkerSupervisor<Worker: Equatable, Request: SupervisedRequest> {
    /// A request's number: the caller's key to cancel it, and its id in the frames.
    typealias Ticket = UInt32

    struct Pending {
        let ticket: Ticket
        let request: Request
        /// 2 once its first worker died before sending anything of it.
        var round = 1
        var cancelled = false
    }

    /// The request in the worker's hands.
    struct Active {
        var pending: Pending
        var sentAnything = false
    }

    /// Why there is no worker.
    enum Stopped: Equatable {
        /// None was started yet: the next request starts one.
        case notStarted
        /// The worker was ended after `WorkerLaunch.idleLimit` idle, to give its memory back.
        case retired
        /// No worker could start: requests fail at once as `engineUnavailable`, with `why`, until
        /// `until`; then a start is tried again, in the background (`State.retrying`).
        case unstartable(until: ContinuousClock.Instant, why: String)
    }

    /// What follows once a worker being ended is gone (`workerEnded`), knowing how it ended.
    enum AfterEnd {
        /// It failed before `ready`, on its `attempt`: `why`.
        case startFailed(attempt: Int, why: String)
        /// It failed under `active`: `what` happened; whether the request may be blamed; whether
        /// its channel closed (it died) rather than its falling silent.
        case requestFailed(Active, what: String, blamed: Bool, died: Bool)
        /// Its channel stirred while it was idle, which can only mean it died (or broke its protocol).
        case diedWhileIdle
        /// It was idle for `WorkerLaunch.idleLimit`.
        case retired
    }

    enum State {
        case stopped(Stopped)
        /// A worker is being started, on its `attempt` (1 to `startAttempts`): spawned (`worker`),
        /// or not yet; the requests wait.
        case starting(attempt: Int, worker: Worker?, waiting: Deque<Pending>)
        /// A worker that said `ready`, with nothing to do.
        case idle(Worker)
        /// A worker saying or answering `active`; the others wait.
        case busy(Worker, Active, waiting: Deque<Pending>)
        /// A worker being killed or reaped, and then what.
        case ending(Worker, after: AfterEnd, waiting: Deque<Pending>)
        /// A worker started again after a pause in which none could (`Stopped.unstartable`, `why`):
        /// spawned (`worker`), or not yet. Requests fail at once as unavailable until it says
        /// `ready` (what falls back to another engine then serves them without waiting for a
        /// worker that may never come); then they go to it.
        case retrying(worker: Worker?, why: String)
        /// `WorkerEngine.shutDown()`: every request fails.
        case shutDown
    }

    /// How a request ended.
    enum Outcome: Equatable {
        /// A synthesis said to its end (or cancelled).
        case done
        case answer(WorkerAnswer)
        case failed(SpeechError)
    }

    /// The silences a worker is watched for (`SilenceWatch`).
    enum Limit: Equatable {
        /// `WorkerLaunch.readyLimit`, from its start to its `ready`.
        case ready
        /// `WorkerLaunch.hangLimit`, while it says or answers something.
        case hang
    }

    struct LogLine: Equatable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String] = [:]
    }

    enum Action {
        /// Spawn a worker: `spawned` or `spawnFailed` follows.
        case startWorker
        /// Send the request to the worker, as frame `ticket`.
        case send(Worker, Ticket, Request)
        case sendCancel(Worker, Ticket)
        case deliver(SynthesisChunk, to: Request)
        /// The request's one end.
        case finish(Request, Outcome)
        /// Watch the worker for `limit` of silence from now (`silent` follows if it is hung),
        /// instead of whatever was watched.
        case watch(Worker, Limit)
        case stopWatching
        /// `idleLimitReached` after this long, unless `cancelIdle` comes first.
        case scheduleIdle(Worker, after: Duration)
        case cancelIdle
        /// Kill the worker (or close its channel, for a healthy one) and reap it: `workerEnded`
        /// follows with how it ended.
        case end(Worker, kill: Bool)
        /// Log `line`, naming the worker's pid when there is one.
        case log(LogLine, worker: Worker?)
    }

    /// How many failed workers a request may cost before it is refused.
    static var refusalThreshold: Int { 2 }
    /// How long an engine whose worker cannot start fails requests at once, before it tries again.
    static var restartPause: Duration { .seconds(30) }
    /// How many requests' failures are remembered; the count starts again beyond.
    static var rememberedRequests: Int { 64 }
    /// Failed starts in a row after which no worker is tried again for `restartPause`, and requests
    /// fail as `engineUnavailable` meanwhile.
    static var startAttempts: Int { 3 }

    private(set) var state: State
    let launch: WorkerLaunch
    /// The sample rate every worker must write at: the caller's, or the first worker's.
    private(set) var sampleRate: Int?
    /// How many workers each request (by its fingerprint) has cost.
    private(set) var failures: [Int: Int] = [:]

    init(launch: WorkerLaunch, sampleRate: Int?) {
        self.launch = launch
        self.sampleRate = sampleRate
        state = .stopped(.notStarted)
    }

    /// The engine's format was set without a worker (`WorkerEngine.start`, when none could start):
    /// every worker from now on must write at `rate` too.
    mutating func expect(sampleRate rate: Int) {
        if sampleRate == nil { sampleRate = rate }
    }

    private var engine: String { launch.engine.rawValue }

    /// What puts off an idle worker's end, where there is one to put off.
    private var cancellingIdle: [Action] { launch.idleLimit == nil ? [] : [.cancelIdle] }

    var shutDownError: SpeechError { Self.shutDownError(of: launch) }

    /// What every request fails with once the engine is shut down.
    static func shutDownError(of launch: WorkerLaunch) -> SpeechError {
        SpeechError(.shuttingDown, "the \(launch.engine.rawValue) engine was shut down")
    }

    // MARK: - Requests

    mutating func submit(_ ticket: Ticket, _ request: Request, now: ContinuousClock.Instant) -> [Action] {
        let pending = Pending(ticket: ticket, request: request)
        switch state {
        case .shutDown:
            return [.finish(request, .failed(shutDownError))]
        case .stopped(.unstartable(let until, let why)) where now < until:
            return [.finish(request, .failed(Self.unavailable(why)))]
        case .stopped(.unstartable(_, let why)):
            state = .retrying(worker: nil, why: why)
            return [
                .finish(request, .failed(Self.unavailable(why))),
                .log(LogLine(level: .info, message: "trying a \(engine) worker again"), worker: nil), .startWorker,
            ]
        case .retrying(_, let why):
            return [.finish(request, .failed(Self.unavailable(why)))]
        case .stopped:
            state = .starting(attempt: 1, worker: nil, waiting: [pending])
            return [.startWorker]
        case .starting(let attempt, let worker, var waiting):
            waiting.append(pending)
            state = .starting(attempt: attempt, worker: worker, waiting: waiting)
            return []
        case .busy(let worker, let active, var waiting):
            waiting.append(pending)
            state = .busy(worker, active, waiting: waiting)
            return []
        case .ending(let worker, let after, var waiting):
            waiting.append(pending)
            state = .ending(worker, after: after, waiting: waiting)
            return []
        case .idle(let worker):
            var actions = cancellingIdle
            serve(on: worker, waiting: [pending], into: &actions)
            return actions
        }
    }

    /// The consumer of `ticket` left: a waiting request ends at once; the worker saying it is told
    /// to stop (its `end` still follows, and ends it).
    mutating func cancel(_ ticket: Ticket) -> [Action] {
        switch state {
        case .busy(let worker, var active, let waiting) where active.pending.ticket == ticket:
            guard !active.pending.cancelled else { return [] }
            active.pending.cancelled = true
            state = .busy(worker, active, waiting: waiting)
            return [.sendCancel(worker, ticket)]
        case .busy(let worker, let active, var waiting):
            guard let request = Self.remove(ticket, from: &waiting) else { return [] }
            state = .busy(worker, active, waiting: waiting)
            return [.finish(request, .done)]
        case .starting(let attempt, let worker, var waiting):
            guard let request = Self.remove(ticket, from: &waiting) else { return [] }
            state = .starting(attempt: attempt, worker: worker, waiting: waiting)
            return [.finish(request, .done)]
        case .ending(let worker, let after, var waiting):
            guard let request = Self.remove(ticket, from: &waiting) else { return [] }
            state = .ending(worker, after: after, waiting: waiting)
            return [.finish(request, .done)]
        case .stopped, .idle, .retrying, .shutDown:
            return []
        }
    }

    private static func remove(_ ticket: Ticket, from waiting: inout Deque<Pending>) -> Request? {
        guard let index = waiting.firstIndex(where: { $0.ticket == ticket }) else { return nil }
        return waiting.remove(at: index).request
    }

    // MARK: - The worker

    /// Start a worker now, if there is none, so that the first request finds it ready.
    mutating func startNow() -> [Action] {
        guard case .stopped(.notStarted) = state else { return [] }
        state = .starting(attempt: 1, worker: nil, waiting: [])
        return [.startWorker]
    }

    /// The worker asked for by `startWorker` was spawned: it has `readyLimit` to say `ready`.
    mutating func spawned(_ worker: Worker) -> [Action] {
        if case .retrying(nil, let why) = state {
            state = .retrying(worker: worker, why: why)
            return [.watch(worker, .ready)]
        }
        guard case .starting(let attempt, nil, let waiting) = state else {
            // Not asked for (shut down meanwhile): ended at once.
            return [.end(worker, kill: true)]
        }
        state = .starting(attempt: attempt, worker: worker, waiting: waiting)
        return [.watch(worker, .ready)]
    }

    /// The worker asked for by `startWorker` could not even be spawned: `why`.
    mutating func spawnFailed(_ why: String, now: ContinuousClock.Instant) -> [Action] {
        if case .retrying(nil, _) = state {
            var actions: [Action] = []
            startFailed(attempt: Self.startAttempts, why: why, waiting: [], now: now, into: &actions)
            return actions
        }
        guard case .starting(let attempt, nil, let waiting) = state else { return [] }
        var actions: [Action] = []
        startFailed(attempt: attempt, why: why, waiting: waiting, now: now, into: &actions)
        return actions
    }

    mutating func received(_ message: WorkerMessage, from sender: Worker) -> [Action] {
        startingIfRetried(sender)
        switch state {
        case .starting(let attempt, let worker?, let waiting) where worker == sender:
            guard case .ready(let rate, let protection) = message else {
                return ending(worker, after: .startFailed(attempt: attempt, why: "it sent \(Self.kind(of: message)) before ready"), waiting: waiting)
            }
            if let expected = sampleRate, rate != expected {
                return ending(worker, after: .startFailed(attempt: attempt, why: "its sample rate is \(rate), not \(expected)"), waiting: waiting)
            }
            sampleRate = rate
            let level: Logger.Level = protection.contains("no ") ? .notice : .info
            var actions: [Action] = [
                .stopWatching,
                .log(LogLine(level: level, message: "\(engine) engine worker ready", metadata: ["protection": protection]), worker: worker),
            ]
            serve(on: worker, waiting: waiting, into: &actions)
            return actions
        case .idle(let worker) where worker == sender:
            return [.log(Self.unexpected(message), worker: worker)]
                + cancellingIdle
                + ending(worker, after: .diedWhileIdle, waiting: [])
        case .busy(let worker, var active, let waiting) where worker == sender:
            let ticket = active.pending.ticket
            switch (message, active.pending.request.question) {
            case (.chunk(ticket, let chunk), nil):
                active.sentAnything = true
                state = .busy(worker, active, waiting: waiting)
                return active.pending.cancelled ? [.watch(worker, .hang)] : [.deliver(chunk, to: active.pending.request), .watch(worker, .hang)]
            case (.end(ticket, let failure), nil):
                return finished(active, failure.map(Outcome.failed) ?? .done, on: worker, waiting: waiting)
            case (.end(ticket, let failure?), _?):
                return finished(active, .failed(failure), on: worker, waiting: waiting)
            case (.answer(ticket, let answer), let question?) where answer.kind == question.expects:
                return finished(active, .answer(answer), on: worker, waiting: waiting)
            default:
                return [.log(Self.unexpected(message), worker: worker)]
                    + ending(worker, after: .requestFailed(active, what: "broke its protocol", blamed: false, died: false), waiting: waiting)
            }
        default:
            // From a worker being ended, or none of this engine's any more.
            return []
        }
    }

    /// The worker watched for `limit` was silent, spending no CPU, for that long (`SilenceWatch`).
    mutating func silent(_ sender: Worker) -> [Action] {
        startingIfRetried(sender)
        switch state {
        case .starting(let attempt, let worker?, let waiting) where worker == sender:
            return ending(worker, after: .startFailed(attempt: attempt, why: "it was not ready within \(launch.readyLimit)"), waiting: waiting)
        case .busy(let worker, let active, let waiting) where worker == sender:
            let what = "stopped responding (nothing for \(launch.hangLimit))"
            return ending(worker, after: .requestFailed(active, what: what, blamed: true, died: false), waiting: waiting)
        default:
            return []
        }
    }

    /// The worker's channel closed (it died), or carried what cannot be: `why`.
    mutating func channelClosed(_ sender: Worker, why: String) -> [Action] {
        startingIfRetried(sender)
        switch state {
        case .starting(let attempt, let worker?, let waiting) where worker == sender:
            return ending(worker, after: .startFailed(attempt: attempt, why: why), waiting: waiting)
        case .idle(let worker) where worker == sender:
            return cancellingIdle + ending(worker, after: .diedWhileIdle, waiting: [])
        case .busy(let worker, let active, let waiting) where worker == sender:
            return ending(worker, after: .requestFailed(active, what: "failed: \(why)", blamed: true, died: true), waiting: waiting)
        default:
            return []
        }
    }

    /// The idle worker has been idle for `WorkerLaunch.idleLimit`: it is ended, its memory given back.
    mutating func idleLimitReached(_ sender: Worker) -> [Action] {
        guard case .idle(let worker) = state, worker == sender else { return [] }
        state = .ending(worker, after: .retired, waiting: [])
        return [.end(worker, kill: false)]
    }

    /// The worker asked to be ended is gone: `ending` says how.
    mutating func workerEnded(_ sender: Worker, ending: String, now: ContinuousClock.Instant) -> [Action] {
        guard case .ending(let worker, let after, var waiting) = state, worker == sender else { return [] }
        var actions: [Action] = []
        switch after {
        case .startFailed(let attempt, let why):
            startFailed(attempt: attempt, why: "\(why); \(ending)", waiting: waiting, now: now, into: &actions)
            return actions
        case .requestFailed(var active, let what, let blamed, let died):
            let request = active.pending.request
            let count = blamed ? countFailure(of: request.fingerprint) : 0
            let doing = request.question == nil ? "saying an item" : "answering a request"
            actions.append(.log(LogLine(
                level: .error, message: "the \(engine) worker \(what) while \(doing); \(ending)",
                metadata: ["failures_of_this_request": "\(count)"]), worker: worker))
            if active.pending.round == 1, died, !active.sentAnything, !active.pending.cancelled {
                actions.append(.log(LogLine(level: .notice, message: "trying the request again on a new worker: its worker died before sending anything of it"), worker: nil))
                active.pending.round = 2
                waiting.prepend(active.pending)
            } else {
                let outcome: Outcome = active.pending.cancelled ? .done : .failed(Self.failed(request, "its worker \(what); \(ending)"))
                actions.append(.finish(request, outcome))
            }
        case .diedWhileIdle:
            actions.append(.log(LogLine(level: .error, message: "the \(engine) worker ended while idle; \(ending); starting a new one"), worker: worker))
        case .retired:
            let idle = launch.idleLimit.map { "\($0)" } ?? "long"
            actions.append(.log(LogLine(
                level: .info, message: "the \(engine) worker ended after \(idle) idle, to give its memory back; the next request starts another",
                metadata: ["ending": ending]), worker: worker))
            guard !waiting.isEmpty else {
                state = .stopped(.retired)
                return actions
            }
        }
        // A new worker at once, so that the next request finds it ready.
        state = .starting(attempt: 1, worker: nil, waiting: waiting)
        actions.append(.startWorker)
        return actions
    }

    /// `WorkerEngine.shutDown()`: everything waiting or in hand fails, the worker is ended, and
    /// every request from now on fails.
    mutating func shutDown() -> [Action] {
        let failure = Outcome.failed(shutDownError)
        var actions: [Action] = []
        switch state {
        case .shutDown, .stopped:
            break
        case .retrying(let worker, _):
            actions += [.stopWatching] + (worker.map { [.end($0, kill: true)] } ?? [])
        case .starting(_, let worker, let waiting):
            actions += [.stopWatching] + (worker.map { [.end($0, kill: true)] } ?? [])
            actions += waiting.map { .finish($0.request, failure) }
        case .idle(let worker):
            actions += cancellingIdle + [.end(worker, kill: false)]
        case .busy(let worker, let active, let waiting):
            actions += [.stopWatching, .end(worker, kill: true), .finish(active.pending.request, failure)]
            actions += waiting.map { .finish($0.request, failure) }
        case .ending(_, let after, let waiting):
            if case .requestFailed(let active, _, _, _) = after { actions.append(.finish(active.pending.request, failure)) }
            actions += waiting.map { .finish($0.request, failure) }
        }
        state = .shutDown
        return actions
    }

    // MARK: - Transitions shared by the inputs

    /// A worker retried in the background is, once spawned, a start on its last attempt that no
    /// request waits for: its `ready` makes it idle, its failure the engine unavailable again.
    private mutating func startingIfRetried(_ sender: Worker) {
        guard case .retrying(let worker?, _) = state, worker == sender else { return }
        state = .starting(attempt: Self.startAttempts, worker: worker, waiting: [])
    }

    /// The worker is free: the first waiting request that is neither cancelled nor refused goes to
    /// it; with none, it is idle.
    private mutating func serve(on worker: Worker, waiting: Deque<Pending>, into actions: inout [Action]) {
        var waiting = waiting
        while let next = waiting.popFirst() {
            if next.cancelled {
                actions.append(.finish(next.request, .done))
            } else if let count = refusal(of: next.request.fingerprint) {
                actions.append(.finish(next.request, .failed(Self.refused(next.request, after: count))))
            } else {
                state = .busy(worker, Active(pending: next), waiting: waiting)
                actions += [.send(worker, next.ticket, next.request), .watch(worker, .hang)]
                return
            }
        }
        state = .idle(worker)
        if let limit = launch.idleLimit { actions.append(.scheduleIdle(worker, after: limit)) }
    }

    /// `active` ended on `worker` with `outcome`; one that went through after a worker died under
    /// it was not the cause, and is forgiven.
    private mutating func finished(_ active: Active, _ outcome: Outcome, on worker: Worker, waiting: Deque<Pending>) -> [Action] {
        if active.pending.round > 1 { failures.removeValue(forKey: active.pending.request.fingerprint) }
        var actions: [Action] = [.stopWatching, .finish(active.pending.request, outcome)]
        serve(on: worker, waiting: waiting, into: &actions)
        return actions
    }

    /// The worker is killed and reaped; `after` says what follows.
    private mutating func ending(_ worker: Worker, after: AfterEnd, waiting: Deque<Pending>) -> [Action] {
        state = .ending(worker, after: after, waiting: waiting)
        return [.stopWatching, .end(worker, kill: true)]
    }

    /// A start failed on its `attempt`: another, until `startAttempts`; then the engine is
    /// unavailable for `restartPause`: the waiting requests fail as such (but one whose worker died
    /// under it, which fails as its own), and so does every request meanwhile.
    private mutating func startFailed(attempt: Int, why: String, waiting: Deque<Pending>, now: ContinuousClock.Instant, into actions: inout [Action]) {
        actions.append(.log(LogLine(level: .error, message: "a \(engine) worker could not start", metadata: ["attempt": "\(attempt)", "error": why]), worker: nil))
        if attempt < Self.startAttempts {
            state = .starting(attempt: attempt + 1, worker: nil, waiting: waiting)
            actions.append(.startWorker)
            return
        }
        let reason = "the \(engine) worker cannot start (\(why)); a11yd tries again in \(Self.restartPause)"
        state = .stopped(.unstartable(until: now + Self.restartPause, why: reason))
        actions.append(.log(LogLine(level: .critical, message: reason), worker: nil))
        for pending in waiting {
            if pending.cancelled {
                actions.append(.finish(pending.request, .done))
            } else if pending.round > 1 {
                // Its worker died under it: whatever says it next must not take it for one that
                // never reached a worker.
                actions.append(.finish(pending.request, .failed(Self.failed(pending.request, "its worker died, and \(reason)"))))
            } else {
                actions.append(.finish(pending.request, .failed(Self.unavailable(reason))))
            }
        }
    }

    /// How many workers `request` has made fail, if that is enough to refuse it.
    func refusal(of request: Int) -> Int? {
        let count = failures[request, default: 0]
        return count >= Self.refusalThreshold ? count : nil
    }

    private mutating func countFailure(of request: Int) -> Int {
        if failures.count >= Self.rememberedRequests, failures[request] == nil { failures.removeAll() }
        failures[request, default: 0] += 1
        return failures[request]!
    }

    // MARK: - What requests and the log are told

    /// The error of a request refused after it made `failures` workers fail.
    static func refused(_ request: Request, after failures: Int) -> SpeechError {
        let what = request.question == nil ? "text" : "request"
        return SpeechError(.engineFailed, "refused: this \(what) made the speech engine fail \(failures) times; a11yd will not try it again")
    }

    /// The error of a request whose worker failed under it (`why`).
    static func failed(_ request: Request, _ why: String) -> SpeechError {
        request.question == nil
            ? SpeechError(.engineFailed, "the speech engine failed while saying this (\(why)); a new one takes the next item")
            : SpeechError(.engineFailed, "the speech engine failed while answering this (\(why)); a new one takes the next request")
    }

    /// The error of every request while no worker can start (`why`): the engine's, not the request's.
    static func unavailable(_ why: String) -> SpeechError {
        SpeechError(.engineUnavailable, why)
    }

    static func unexpected(_ message: WorkerMessage) -> LogLine {
        LogLine(level: .warning, message: "engine worker sent an unexpected message; replacing it", metadata: ["message": kind(of: message)])
    }

    static func kind(of message: WorkerMessage) -> String {
        switch message {
        case .synthesize: "synthesize"
        case .cancel: "cancel"
        case .ask: "ask"
        case .answer: "answer"
        case .ready: "ready"
        case .chunk: "chunk"
        case .end: "end"
        }
    }
}

extension WorkerSupervisor: Sendable where Worker: Sendable, Request: Sendable {}
extension WorkerSupervisor.State: Sendable where Worker: Sendable, Request: Sendable {}
extension WorkerSupervisor.Pending: Sendable where Request: Sendable {}
extension WorkerSupervisor.Active: Sendable where Request: Sendable {}
extension WorkerSupervisor.AfterEnd: Sendable where Request: Sendable {}
extension WorkerSupervisor.Action: Sendable where Worker: Sendable, Request: Sendable {}
