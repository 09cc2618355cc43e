// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yTestSupport
import Logging
import Testing

@testable import A11yEngineWorker

/// A request as the supervisor sees it: a name to follow it by, what it asks.
struct TestRequest: SupervisedRequest, Equatable, CustomStringConvertible {
    let name: String
    var question: WorkerQuestion?
    /// By what it asks: the same text under another ticket is the same request.
    var fingerprint: Int {
        var hasher = Hasher()
        hasher.combine(name.split(separator: "#")[0])
        hasher.combine(question)
        return hasher.finalize()
    }
    var description: String { name }

    static func say(_ name: String) -> TestRequest { TestRequest(name: name, question: nil) }
    static func ask(_ name: String) -> TestRequest { TestRequest(name: name, question: .ipaOfText(name, voice: "fr")) }
}

typealias Supervisor = WorkerSupervisor<Int, TestRequest>

extension WorkerSupervisor.Action where Worker == Int, Request == TestRequest {
    /// One action as a short line, so that a row reads as what the executor would do.
    var line: String {
        switch self {
        case .startWorker: "start"
        case .send(let worker, let ticket, let request): "send \(request) #\(ticket) to \(worker)"
        case .sendCancel(let worker, let ticket): "cancel #\(ticket) on \(worker)"
        case .deliver(_, let request): "deliver to \(request)"
        case .finish(let request, .done): "finish \(request)"
        case .finish(let request, .answer): "answer \(request)"
        case .finish(let request, .failed(let error)) where error.code == .engineUnavailable: "unavailable \(request): \(error.message)"
        case .finish(let request, .failed(let error)): "fail \(request): \(error.message)"
        case .watch(let worker, let limit): "watch \(worker) \(limit)"
        case .stopWatching: "stop watching"
        case .scheduleIdle(let worker, let after): "idle \(worker) after \(after)"
        case .cancelIdle: "cancel idle"
        case .end(let worker, let kill): kill ? "kill \(worker)" : "reap \(worker)"
        case .log(let line, let worker): "log \(line.level)\(worker.map { " \($0)" } ?? ""): \(line.message)"
        }
    }
}

/// `WorkerSupervisor`, the rules of an engine's worker and its requests, row by row (a worker is a
/// number here), then a seeded random run checking what must always hold.
@Suite struct WorkerSupervisorTests {
    static let now = ContinuousClock.now
    static let chunk = SynthesisChunk(samples: [1, 2, 3])

    static func launch(idleLimit: Duration? = nil) -> WorkerLaunch {
        WorkerLaunch(
            engine: .piper, executable: "/x", arguments: [], environment: [:], readyLimit: .seconds(10), hangLimit: .seconds(2),
            idleLimit: idleLimit)
    }

    /// A supervisor whose worker 1 is ready and idle.
    static func ready(idleLimit: Duration? = nil) -> Supervisor {
        var supervisor = Supervisor(launch: launch(idleLimit: idleLimit), sampleRate: 22050)
        _ = supervisor.submit(0, .ask("first"), now: now)
        _ = supervisor.spawned(1)
        _ = supervisor.received(.ready(sampleRate: 22050, protection: "seccomp"), from: 1)
        _ = supervisor.received(.answer(id: 0, .text("ipa")), from: 1)
        return supervisor
    }

    static func lines(_ actions: [Supervisor.Action]) -> [String] { actions.map(\.line) }

    @Test func theFirstRequestStartsAWorkerAndIsSentOnceItIsReady() {
        var supervisor = Supervisor(launch: Self.launch(), sampleRate: nil)
        #expect(Self.lines(supervisor.submit(1, .say("a"), now: Self.now)) == ["start"])
        #expect(Self.lines(supervisor.submit(2, .ask("b"), now: Self.now)) == [], "waits for the same worker")
        #expect(Self.lines(supervisor.spawned(7)) == ["watch 7 ready"])
        #expect(Self.lines(supervisor.received(.ready(sampleRate: 16000, protection: "seccomp"), from: 7)) == [
            "stop watching", "log info 7: piper engine worker ready", "send a #1 to 7", "watch 7 hang",
        ])
        #expect(supervisor.sampleRate == 16000, "learnt from the first worker")
        #expect(Self.lines(supervisor.received(.chunk(id: 1, Self.chunk), from: 7)) == ["deliver to a", "watch 7 hang"])
        #expect(Self.lines(supervisor.received(.end(id: 1, failure: nil), from: 7)) == ["stop watching", "finish a", "send b #2 to 7", "watch 7 hang"])
        #expect(Self.lines(supervisor.received(.answer(id: 2, .text("b")), from: 7)) == ["stop watching", "answer b"])
        guard case .idle(7) = supervisor.state else { Issue.record("\(supervisor.state)"); return }
    }

    @Test func aWorkerWithoutProtectionIsANotice() {
        var supervisor = Supervisor(launch: Self.launch(), sampleRate: nil)
        _ = supervisor.submit(1, .say("a"), now: Self.now)
        _ = supervisor.spawned(7)
        #expect(Self.lines(supervisor.received(.ready(sampleRate: 16000, protection: "no seccomp"), from: 7))[1] == "log notice 7: piper engine worker ready")
    }

    /// Every way a worker fails under a request, and what follows: only a worker that died before
    /// sending anything of the request, the first time, has it tried again; a protocol breach is
    /// not counted against the request; a new worker is started at once either way.
    @Test(arguments: [
        // (what happens, the request, the log, tried again, counted)
        ("closed", TestRequest.say("a"), "the piper worker failed: its channel closed while saying an item; killed", true, 1),
        ("closed", .ask("a"), "the piper worker failed: its channel closed while answering a request; killed", true, 1),
        ("silent", .say("a"), "the piper worker stopped responding (nothing for 2.0 seconds) while saying an item; killed", false, 1),
        ("silent", .ask("a"), "the piper worker stopped responding (nothing for 2.0 seconds) while answering a request; killed", false, 1),
        ("chunk, closed", .say("a"), "the piper worker failed: its channel closed while saying an item; killed", false, 1),
        ("stray", .say("a"), "the piper worker broke its protocol while saying an item; killed", false, 0),
        ("stray", .ask("a"), "the piper worker broke its protocol while answering a request; killed", false, 0),
    ])
    func aWorkerFailingUnderARequest(happens: String, request: TestRequest, log: String, triedAgain: Bool, counted: Int) {
        var supervisor = Self.ready()
        #expect(Self.lines(supervisor.submit(5, request, now: Self.now)).first == "send a #5 to 1")
        var actions: [Supervisor.Action] = []
        for step in happens.split(separator: ", ") {
            switch step {
            case "closed": actions = supervisor.channelClosed(1, why: "its channel closed")
            case "silent": actions = supervisor.silent(1)
            case "chunk": _ = supervisor.received(.chunk(id: 5, Self.chunk), from: 1)
            default: actions = supervisor.received(.end(id: 99, failure: nil), from: 1)
            }
        }
        #expect(Self.lines(actions).suffix(2) == ["stop watching", "kill 1"])
        #expect(Self.lines(supervisor.received(.chunk(id: 5, Self.chunk), from: 1)) == [], "nothing more from a worker being ended")
        let ended = Self.lines(supervisor.workerEnded(1, ending: "killed", now: Self.now))
        #expect(ended.first == "log error 1: " + log)
        let what = request.question == nil ? "saying this" : "answering this"
        let next = request.question == nil ? "item" : "request"
        #expect(ended.dropFirst().dropLast() == (triedAgain
            ? ["log notice: trying the request again on a new worker: its worker died before sending anything of it"]
            : ["fail a: the speech engine failed while \(what) (its worker \(log.split(separator: " ", maxSplits: 3)[3].split(separator: " while ")[0]); killed); a new one takes the next \(next)"]))
        #expect(ended.last == "start", "a new worker at once")
        #expect(supervisor.failures[request.fingerprint, default: 0] == counted)
        _ = supervisor.spawned(2)
        let readied = Self.lines(supervisor.received(.ready(sampleRate: 22050, protection: "seccomp"), from: 2))
        #expect(readied.contains("send a #5 to 2") == triedAgain)
    }

    /// Tried again, it fails for good: no third round.
    @Test func aRequestIsTriedAgainOnlyOnce() {
        var supervisor = Self.ready()
        _ = supervisor.submit(5, .say("a"), now: Self.now)
        _ = supervisor.channelClosed(1, why: "its channel closed")
        _ = supervisor.workerEnded(1, ending: "killed", now: Self.now)
        _ = supervisor.spawned(2)
        _ = supervisor.received(.ready(sampleRate: 22050, protection: ""), from: 2)
        _ = supervisor.channelClosed(2, why: "its channel closed")
        let ended = Self.lines(supervisor.workerEnded(2, ending: "killed", now: Self.now))
        #expect(ended.contains { $0.hasPrefix("fail a: the speech engine failed while saying this") }, "\(ended)")
        #expect(supervisor.refusal(of: TestRequest.say("a").fingerprint) == 2)
    }

    /// A request that made two workers fail is refused when its turn comes, without costing a worker;
    /// one that went through after its worker died under it is forgiven.
    @Test func aRequestThatKeepsKillingWorkersIsRefused() {
        var supervisor = Self.ready()
        for round in 1...2 {
            _ = supervisor.submit(UInt32(round), .say("poison"), now: Self.now)
            _ = supervisor.received(.chunk(id: UInt32(round), Self.chunk), from: round)
            _ = supervisor.channelClosed(round, why: "its channel closed")
            _ = supervisor.workerEnded(round, ending: "SIGSEGV", now: Self.now)
            _ = supervisor.spawned(round + 1)
            _ = supervisor.received(.ready(sampleRate: 22050, protection: ""), from: round + 1)
        }
        #expect(Self.lines(supervisor.submit(3, .say("poison"), now: Self.now)) == [
            "fail poison: refused: this text made the speech engine fail 2 times; a11yd will not try it again",
        ])
        #expect(Self.lines(supervisor.submit(4, .ask("poison"), now: Self.now)).first == "send poison #4 to 3", "another request")

        var forgiving = Self.ready()
        _ = forgiving.submit(1, .say("a"), now: Self.now)
        _ = forgiving.channelClosed(1, why: "its channel closed")
        _ = forgiving.workerEnded(1, ending: "killed", now: Self.now)
        #expect(forgiving.failures[TestRequest.say("a").fingerprint] == 1)
        _ = forgiving.spawned(2)
        _ = forgiving.received(.ready(sampleRate: 22050, protection: ""), from: 2)
        _ = forgiving.received(.end(id: 1, failure: nil), from: 2)
        #expect(forgiving.failures[TestRequest.say("a").fingerprint] == nil, "gone through on its second worker: not the cause")
    }

    @Test func theFailuresRememberedAreBounded() {
        var supervisor = Self.ready()
        var worker = 1
        for request in 0...Supervisor.rememberedRequests {
            _ = supervisor.submit(UInt32(request), .say("\(request)"), now: Self.now)
            _ = supervisor.silent(worker)
            _ = supervisor.workerEnded(worker, ending: "", now: Self.now)
            worker += 1
            _ = supervisor.spawned(worker)
            _ = supervisor.received(.ready(sampleRate: 22050, protection: ""), from: worker)
        }
        #expect(supervisor.failures == [TestRequest.say("\(Supervisor.rememberedRequests)").fingerprint: 1])
    }

    /// A consumer that leaves: a waiting request ends at once, the one being said is cancelled on
    /// the worker once, its chunks are no longer delivered, and its `end` ends it.
    @Test func aCancelledRequestEnds() {
        var supervisor = Self.ready()
        _ = supervisor.submit(1, .say("a"), now: Self.now)
        _ = supervisor.submit(2, .say("b"), now: Self.now)
        #expect(Self.lines(supervisor.cancel(2)) == ["finish b"])
        #expect(Self.lines(supervisor.cancel(1)) == ["cancel #1 on 1"])
        #expect(Self.lines(supervisor.cancel(1)) == [], "once")
        #expect(Self.lines(supervisor.received(.chunk(id: 1, Self.chunk), from: 1)) == ["watch 1 hang"])
        #expect(Self.lines(supervisor.received(.end(id: 1, failure: nil), from: 1)) == ["stop watching", "finish a"])
        #expect(Self.lines(supervisor.cancel(1)) == [])
    }

    /// A worker that does not say `ready` in time, or says something else, or at another rate, is
    /// ended; after three failed starts the engine is unavailable for the pause: the requests waiting
    /// fail as such once (`engineUnavailable`, the engine's reason, not the request's), every request
    /// meanwhile is refused at once, and after the pause a start is tried again.
    @Test(arguments: ["silent", "stray", "rate", "spawn"])
    func noWorkerStartingMakesTheEngineUnavailableForAPause(how: String) {
        var supervisor = Supervisor(launch: Self.launch(), sampleRate: 22050)
        var actions = supervisor.submit(1, .say("a"), now: Self.now)
        _ = supervisor.submit(2, .ask("b"), now: Self.now)
        _ = supervisor.submit(3, .say("c"), now: Self.now)
        #expect(Self.lines(supervisor.cancel(3)) == ["finish c"])
        var why = ""
        for attempt in 1...Supervisor.startAttempts {
            #expect(Self.lines(actions).last == "start")
            switch how {
            case "spawn":
                actions = supervisor.spawnFailed("no exec", now: Self.now)
                why = "no exec"
            default:
                _ = supervisor.spawned(attempt)
                switch how {
                case "silent": #expect(Self.lines(supervisor.silent(attempt)) == ["stop watching", "kill \(attempt)"])
                case "stray": _ = supervisor.received(.end(id: 1, failure: nil), from: attempt)
                default: _ = supervisor.received(.ready(sampleRate: 16000, protection: ""), from: attempt)
                }
                actions = supervisor.workerEnded(attempt, ending: "killed", now: Self.now)
                why = ["silent": "it was not ready within 10.0 seconds", "stray": "it sent end before ready", "rate": "its sample rate is 16000, not 22050"][how]! + "; killed"
            }
            #expect(Self.lines(actions).first == "log error: a piper worker could not start")
            guard case .log(let line, _) = actions.first else { continue }
            #expect(line.metadata == ["attempt": "\(attempt)", "error": why])
        }
        let reason = "the piper worker cannot start (\(why)); a11yd tries again in 30.0 seconds"
        #expect(Self.lines(actions).dropFirst() == ["log critical: \(reason)", "unavailable a: \(reason)", "unavailable b: \(reason)"])
        #expect(Self.lines(supervisor.submit(5, .say("e"), now: Self.now + .seconds(29))) == ["unavailable e: \(reason)"])
        #expect(Self.lines(supervisor.submit(6, .ask("f"), now: Self.now + .seconds(29))) == ["unavailable f: \(reason)"])
        #expect(Self.lines(supervisor.cancel(5)) == [], "ended already")
        // After the pause a worker is tried again, in the background: nothing waits for it.
        #expect(Self.lines(supervisor.submit(7, .say("g"), now: Self.now + .seconds(30))) == [
            "unavailable g: \(reason)", "log info: trying a piper worker again", "start",
        ])
        #expect(supervisor.failures.isEmpty, "no request is blamed for it")
    }

    /// A worker tried again after the pause: requests are refused as unavailable at once while it
    /// starts; once ready it takes the next; if it fails too, another pause.
    @Test(arguments: [true, false]) func aWorkerTriedAgainAfterThePauseTakesRequestsOnceReady(starts: Bool) {
        var supervisor = Supervisor(launch: Self.launch(), sampleRate: 22050)
        _ = supervisor.submit(1, .say("a"), now: Self.now)
        for _ in 1...Supervisor.startAttempts { _ = supervisor.spawnFailed("no exec", now: Self.now) }
        let reason = "the piper worker cannot start (no exec); a11yd tries again in 30.0 seconds"
        let later = Self.now + .seconds(31)
        #expect(Self.lines(supervisor.submit(2, .say("b"), now: later)).last == "start")
        #expect(Self.lines(supervisor.spawned(7)) == ["watch 7 ready"])
        #expect(Self.lines(supervisor.submit(3, .say("c"), now: later)) == ["unavailable c: \(reason)"], "not kept waiting")
        #expect(Self.lines(supervisor.cancel(3)) == [])
        if starts {
            #expect(Self.lines(supervisor.received(.ready(sampleRate: 22050, protection: "seccomp"), from: 7)) == [
                "stop watching", "log info 7: piper engine worker ready",
            ])
            #expect(Self.lines(supervisor.submit(4, .say("d"), now: later)) == ["send d #4 to 7", "watch 7 hang"])
        } else {
            #expect(Self.lines(supervisor.silent(7)) == ["stop watching", "kill 7"])
            let ended = supervisor.workerEnded(7, ending: "killed", now: later)
            let again = "the piper worker cannot start (it was not ready within 10.0 seconds; killed); a11yd tries again in 30.0 seconds"
            #expect(Self.lines(ended).dropFirst() == ["log critical: \(again)"])
            #expect(Self.lines(supervisor.submit(4, .say("d"), now: later + .seconds(29))) == ["unavailable d: \(again)"])
        }
    }

    /// Only a request that never reached a worker is failed as unavailable: one whose worker failed
    /// under it after sending part of it fails as its own, and so does one whose worker died before
    /// sending anything of it (tried again) when no new worker can start.
    @Test func aRequestThatReachedAWorkerIsNeverUnavailable() {
        var supervisor = Self.ready()
        _ = supervisor.submit(1, .say("a"), now: Self.now)
        _ = supervisor.received(.chunk(id: 1, Self.chunk), from: 1)
        _ = supervisor.channelClosed(1, why: "its channel closed")
        var actions = supervisor.workerEnded(1, ending: "killed", now: Self.now)
        #expect(Self.lines(actions).contains("fail a: the speech engine failed while saying this (its worker failed: its channel closed; killed); a new one takes the next item"))
        _ = supervisor.submit(2, .say("b"), now: Self.now)
        for _ in 1...Supervisor.startAttempts { actions = supervisor.spawnFailed("no exec", now: Self.now) }
        let reason = "the piper worker cannot start (no exec); a11yd tries again in 30.0 seconds"
        #expect(Self.lines(actions).suffix(1) == ["unavailable b: \(reason)"])

        var retried = Self.ready()
        _ = retried.submit(1, .ask("a"), now: Self.now)
        _ = retried.channelClosed(1, why: "its channel closed")
        #expect(Self.lines(retried.workerEnded(1, ending: "killed", now: Self.now)).contains("log notice: trying the request again on a new worker: its worker died before sending anything of it"))
        for _ in 1...Supervisor.startAttempts { actions = retried.spawnFailed("no exec", now: Self.now) }
        #expect(Self.lines(actions).suffix(1) == [
            "fail a: the speech engine failed while answering this (its worker died, and \(reason)); a new one takes the next request",
        ])
    }

    /// An engine whose format was set without a worker (none could start at its start): a worker
    /// that starts later must write at that rate, and a rate known already is not changed.
    @Test func aRateExpectedWithoutAWorkerIsEveryWorkersRate() {
        var supervisor = Supervisor(launch: Self.launch(), sampleRate: nil)
        supervisor.expect(sampleRate: 22050)
        _ = supervisor.submit(1, .say("a"), now: Self.now)
        _ = supervisor.spawned(1)
        #expect(Self.lines(supervisor.received(.ready(sampleRate: 16000, protection: ""), from: 1)) == ["stop watching", "kill 1"])
        #expect(supervisor.sampleRate == 22050)
        var known = Supervisor(launch: Self.launch(), sampleRate: 16000)
        known.expect(sampleRate: 22050)
        #expect(known.sampleRate == 16000)
    }

    /// An idle worker is ended after the idle limit, gently, and the next request starts another;
    /// one whose channel stirs while idle died, and is replaced at once.
    @Test func anIdleWorkerIsRetiredOrReplaced() {
        var retiring = Self.ready(idleLimit: .seconds(60))
        #expect(Self.lines(retiring.submit(1, .say("a"), now: Self.now)) == ["cancel idle", "send a #1 to 1", "watch 1 hang"])
        #expect(Self.lines(retiring.received(.end(id: 1, failure: nil), from: 1)) == ["stop watching", "finish a", "idle 1 after 60.0 seconds"])
        #expect(Self.lines(retiring.idleLimitReached(2)) == [], "not its worker")
        #expect(Self.lines(retiring.idleLimitReached(1)) == ["reap 1"])
        #expect(Self.lines(retiring.workerEnded(1, ending: "it exited with status 0", now: Self.now)) == [
            "log info 1: the piper worker ended after 60.0 seconds idle, to give its memory back; the next request starts another",
        ])
        #expect(Self.lines(retiring.submit(2, .say("b"), now: Self.now)) == ["start"])

        var dying = Self.ready()
        #expect(Self.lines(dying.channelClosed(1, why: "its channel closed")) == ["stop watching", "kill 1"])
        #expect(Self.lines(dying.workerEnded(1, ending: "killed", now: Self.now)) == [
            "log error 1: the piper worker ended while idle; killed; starting a new one", "start",
        ])

        var talking = Self.ready()
        #expect(Self.lines(talking.received(.chunk(id: 3, Self.chunk), from: 1)) == [
            "log warning 1: engine worker sent an unexpected message; replacing it", "stop watching", "kill 1",
        ])
    }

    /// Shut down: what waits and what is in hand fail, the worker is ended, and every request after fails.
    @Test func aShutDownFailsEverythingAndEndsTheWorker() {
        var supervisor = Self.ready()
        _ = supervisor.submit(1, .say("a"), now: Self.now)
        _ = supervisor.submit(2, .ask("b"), now: Self.now)
        #expect(Self.lines(supervisor.shutDown()) == [
            "stop watching", "kill 1", "fail a: the piper engine was shut down", "fail b: the piper engine was shut down",
        ])
        #expect(Self.lines(supervisor.workerEnded(1, ending: "killed", now: Self.now)) == [])
        #expect(Self.lines(supervisor.submit(3, .say("c"), now: Self.now)) == ["fail c: the piper engine was shut down"])
        #expect(Self.lines(supervisor.shutDown()) == [])

        var idle = Self.ready()
        #expect(Self.lines(idle.shutDown()) == ["reap 1"])
        var starting = Supervisor(launch: Self.launch(), sampleRate: nil)
        _ = starting.submit(1, .say("a"), now: Self.now)
        #expect(Self.lines(starting.shutDown()) == ["stop watching", "fail a: the piper engine was shut down"])
        #expect(Self.lines(starting.spawned(4)) == ["kill 4"], "a worker spawned too late is ended")
    }

    // MARK: - A seeded random run

    /// After shut down: a request failing, or a worker spawned too late being ended.
    static func isFailureOrEnd(_ action: Supervisor.Action, _ supervisor: Supervisor) -> Bool {
        switch action {
        case .finish(_, .failed(let error)): error == supervisor.shutDownError
        case .end: true
        default: false
        }
    }

    /// Random inputs, in any order, from any worker: every submitted request ends exactly once (one
    /// `finish`: the daemon's promise of one `finished` per item); nothing is sent to a worker while
    /// another request is in its hands; a request failed as unavailable was never sent to a worker
    /// (what `EngineFallback` says instead never reached one); a cancelled request ends; after shut
    /// down, only failures.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func aRandomRunKeepsItsPromises(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        do {
            var supervisor = Supervisor(launch: Self.launch(idleLimit: .seconds(60)), sampleRate: 22050)
            var ended: [String: Int] = [:]
            var sent = Set<UInt32>()
            var submitted: [UInt32: TestRequest] = [:]
            var cancelled = Set<UInt32>()
            var inHand: (worker: Int, ticket: UInt32)?
            var nextTicket: UInt32 = 1
            var nextWorker = 1
            var spawned: [Int] = []
            var isShutDown = false
            var now = Self.now
            for step in 0..<600 {
                let afterShutDown = isShutDown
                now += .milliseconds(Int.random(in: 0...3000, using: &random))
                let worker = spawned.isEmpty ? 0 : spawned[Int.random(in: 0..<spawned.count, using: &random)]
                let ticket = submitted.keys.randomElement(using: &random) ?? 0
                let actions: [Supervisor.Action]
                switch Int.random(in: 0..<13, using: &random) {
                case 0, 1:
                    let request: TestRequest = Bool.random(using: &random) ? .say("s\(nextTicket % 5)") : .ask("q\(nextTicket % 5)")
                    submitted[nextTicket] = request
                    actions = supervisor.submit(nextTicket, TestRequest(name: "\(request.name)#\(nextTicket)", question: request.question), now: now)
                    nextTicket += 1
                case 2: actions = supervisor.cancel(ticket); cancelled.insert(ticket)
                case 3: actions = supervisor.spawned(nextWorker); spawned.append(nextWorker); nextWorker += 1
                case 4: actions = supervisor.spawnFailed("no exec", now: now)
                case 5: actions = supervisor.received(.ready(sampleRate: Bool.random(using: &random) ? 22050 : 16000, protection: ""), from: worker)
                case 6: actions = supervisor.received(.chunk(id: ticket, Self.chunk), from: worker)
                case 7: actions = supervisor.received(Bool.random(using: &random) ? .end(id: ticket, failure: nil) : .answer(id: ticket, .text("x")), from: worker)
                case 8: actions = supervisor.silent(worker)
                case 9: actions = supervisor.channelClosed(worker, why: "its channel closed")
                case 10: actions = supervisor.workerEnded(worker, ending: "killed", now: now)
                case 11: actions = supervisor.idleLimitReached(worker)
                default:
                    if step > 500 {
                        actions = supervisor.shutDown()
                        isShutDown = true
                    } else {
                        actions = supervisor.received(.end(id: ticket, failure: SpeechError(.engineFailed, "x")), from: worker)
                    }
                }
                for action in actions {
                    if afterShutDown, !Self.isFailureOrEnd(action, supervisor) {
                        Issue.record("seed \(seed), step \(step): \(action.line) after shut down")
                    }
                    switch action {
                    case .finish(let request, let outcome):
                        ended[request.name, default: 0] += 1
                        if case .failed(let error) = outcome, error.code == .engineUnavailable {
                            #expect(!sent.contains { request.name.hasSuffix("#\($0)") }, "seed \(seed), step \(step): \(request) was sent to a worker, then failed as unavailable")
                        }
                        if let held = inHand, request.name.hasSuffix("#\(held.ticket)") { inHand = nil }
                    case .send(let worker, let ticket, _):
                        #expect(inHand == nil, "seed \(seed), step \(step): sent #\(ticket) while #\(inHand!.ticket) is in hand")
                        #expect(!isShutDown, "seed \(seed), step \(step): sent after shut down")
                        inHand = (worker, ticket)
                        sent.insert(ticket)
                    case .end(let worker, _):
                        if inHand?.worker == worker { inHand = nil }
                    case .deliver(_, let request):
                        #expect(!cancelled.contains { request.name.hasSuffix("#\($0)") }, "seed \(seed), step \(step): delivered to a cancelled request")
                    case .startWorker:
                        #expect(!isShutDown, "seed \(seed), step \(step): a worker started after shut down")
                    default: break
                    }
                }
                // A request in hand whose worker is being ended is failed or tried again by the end.
                if case .ending = supervisor.state { inHand = nil }
            }
            // Whatever is left is ended by a shut down, once.
            for action in supervisor.shutDown() {
                if case .finish(let request, let outcome) = action {
                    ended[request.name, default: 0] += 1
                    #expect(outcome == .failed(supervisor.shutDownError) || outcome == .done)
                }
            }
            for (ticket, request) in submitted {
                #expect(ended["\(request.name)#\(ticket)"] == 1, "seed \(seed): #\(ticket) ended \(ended["\(request.name)#\(ticket)"] ?? 0) times")
            }
        }
    }
}
