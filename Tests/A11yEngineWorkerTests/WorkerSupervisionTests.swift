// SPDX-License-Identifier: GPL-3.0-or-later
import Testing

@testable import A11yEngineWorker

/// `WorkerSupervision`, the rules of an engine's worker, row by row: a worker is a number here.
@Suite struct WorkerSupervisionTests {
    typealias Supervision = WorkerSupervision<Int>
    static let now = ContinuousClock.now
    static let text = 7

    /// Where a request goes in each state.
    @Test(arguments: [
        (Supervision.State.notStarted, Supervision.Route.start),
        (.ready(1), .worker(1)),
        (.retired, .start),
        (.inProcess, .inProcess),
        (.shutDown(1), .shuttingDown),
        (.shutDown(nil), .shuttingDown),
    ])
    func aRequestIsRoutedByTheState(state: Supervision.State, route: Supervision.Route) {
        #expect(Self.supervision(in: state).route(now: Self.now) == route)
    }

    @Test func eSpeakInProcessFromTheStartNeverStartsAWorker() {
        #expect(Supervision(inProcess: .always).route(now: Self.now) == .inProcess)
        #expect(Supervision(inProcess: .whenNoWorkerStarts).route(now: Self.now) == .start)
        #expect(Supervision(inProcess: .never).route(now: Self.now) == .start)
    }

    /// No worker starts: eSpeak goes in process; Piper fails its requests with the reason for the
    /// restart pause, then tries again.
    @Test func noWorkerStartingMeansInProcessOrAPause() {
        var espeak = Supervision(inProcess: .whenNoWorkerStarts)
        #expect(espeak.startFailed(engine: "espeak", why: "no exec", now: Self.now) == nil)
        #expect(espeak.state == .inProcess)

        var piper = Supervision(inProcess: .never)
        let reason = piper.startFailed(engine: "piper", why: "no python", now: Self.now)
        #expect(reason == "the piper worker cannot start (no python); a11yd tries again in 30.0 seconds")
        #expect(piper.route(now: Self.now + .seconds(29)) == .fail(reason!))
        #expect(piper.route(now: Self.now + .seconds(30)) == .start)
        piper.started(2)
        #expect(piper.route(now: Self.now + .seconds(30)) == .worker(2))
    }

    /// What follows a worker's failure under a request: only a worker that died before sending
    /// anything of the request, the first time, has the request tried again.
    @Test(arguments: [
        (1, true, false, Supervision.AfterFailure.tryAgain),
        (1, true, true, .failAndStartAnother),
        (1, false, false, .failAndStartAnother),
        (2, true, false, .failAndStartAnother),
    ])
    func aFailedWorkerLeavesNoWorkerAndTriesTheRequestAgainOnlyIfItDiedBeforeSendingAnything(
        round: Int, died: Bool, sentAnything: Bool, next: Supervision.AfterFailure
    ) {
        var supervision = Self.supervision(in: .ready(1))
        let outcome = supervision.workerFailed(under: Self.text, blamed: true, round: round, died: died, sentAnything: sentAnything)
        #expect(outcome.next == next)
        #expect(outcome.failures == 1)
        #expect(supervision.state == .notStarted)
        #expect(supervision.route(now: Self.now) == .start)
    }

    /// A request that made two workers fail is refused; a worker that broke its protocol is not
    /// the request's fault; a request that went through on a new worker is forgiven.
    @Test func aRequestThatKeepsKillingWorkersIsRefused() {
        var supervision = Self.supervision(in: .ready(1))
        #expect(supervision.refusal(of: Self.text) == nil)
        _ = supervision.workerFailed(under: Self.text, blamed: false, round: 1, died: false, sentAnything: true)
        #expect(supervision.refusal(of: Self.text) == nil, "a protocol breach is the worker's alone")
        _ = supervision.workerFailed(under: Self.text, blamed: true, round: 1, died: true, sentAnything: true)
        #expect(supervision.refusal(of: Self.text) == nil)
        let second = supervision.workerFailed(under: Self.text, blamed: true, round: 1, died: true, sentAnything: true)
        #expect(second.failures == 2)
        #expect(supervision.refusal(of: Self.text) == 2)
        #expect(supervision.refusal(of: Self.text + 1) == nil)

        var retried = Self.supervision(in: .ready(1))
        _ = retried.workerFailed(under: Self.text, blamed: true, round: 1, died: true, sentAnything: false)
        retried.succeeded(Self.text, round: 1)
        #expect(retried.failures[Self.text] == 1, "a success in the first round forgives nothing")
        retried.succeeded(Self.text, round: 2)
        #expect(retried.failures[Self.text] == nil, "gone through after its worker died under it: not the cause")
    }

    @Test func theFailuresRememberedAreBounded() {
        var supervision = Self.supervision(in: .ready(1))
        for request in 0..<Supervision.rememberedRequests {
            _ = supervision.workerFailed(under: request, blamed: true, round: 1, died: true, sentAnything: true)
        }
        #expect(supervision.failures.count == Supervision.rememberedRequests)
        _ = supervision.workerFailed(under: -1, blamed: true, round: 1, died: true, sentAnything: true)
        #expect(supervision.failures == [-1: 1])
    }

    /// An idle worker ended after the idle limit is retired, one that died is replaced at once;
    /// neither happens without a ready worker.
    @Test func anIdleWorkerIsRetiredOrReplaced() {
        var retiring = Self.supervision(in: .ready(1))
        #expect(retiring.idleLimitReached() == 1)
        #expect(retiring.state == .retired)
        #expect(retiring.route(now: Self.now) == .start)
        #expect(retiring.idleLimitReached() == nil)

        var dying = Self.supervision(in: .ready(1))
        #expect(dying.diedWhileIdle() == 1)
        #expect(dying.state == .notStarted)
        #expect(dying.diedWhileIdle() == nil)
    }

    /// Shut down from any thread: requests fail, and the worker alive (even one that started
    /// meanwhile) is handed to the link thread once, to end; a worker that failed meanwhile was
    /// ended by the link thread already.
    @Test func aShutDownHandsTheWorkerOverOnce() {
        var supervision = Self.supervision(in: .ready(1))
        supervision.shutDown()
        #expect(supervision.route(now: Self.now) == .shuttingDown)
        #expect(supervision.worker == 1, "a request in its hands can still be cancelled")
        #expect(supervision.workerToEndAfterShutDown() == 1)
        #expect(supervision.workerToEndAfterShutDown() == nil)

        var starting = Self.supervision(in: .notStarted)
        starting.shutDown()
        starting.started(2)
        #expect(starting.startFailed(engine: "piper", why: "late", now: Self.now) == nil)
        #expect(starting.workerToEndAfterShutDown() == 2)

        var failing = Self.supervision(in: .ready(1))
        failing.shutDown()
        _ = failing.workerFailed(under: Self.text, blamed: true, round: 1, died: true, sentAnything: false)
        #expect(failing.state == .shutDown(nil))
        #expect(failing.idleLimitReached() == nil)
    }

    /// A supervision in `state` (`unstartable` until `now` + the pause), reached through its own transitions.
    static func supervision(in state: Supervision.State) -> Supervision {
        var supervision = Supervision(inProcess: state == .inProcess ? .always : .never)
        switch state {
        case .notStarted, .inProcess: break
        case .ready(let worker): supervision.started(worker)
        case .retired:
            supervision.started(0)
            _ = supervision.idleLimitReached()
        case .unstartable:
            _ = supervision.startFailed(engine: "piper", why: "", now: now)
        case .shutDown(let worker):
            if let worker { supervision.started(worker) }
            supervision.shutDown()
        }
        return supervision
    }
}
