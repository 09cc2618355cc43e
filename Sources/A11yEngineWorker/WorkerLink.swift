// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// One running worker, as the link drives it: `SpawnedWorker` (a process and its NIO channel), or a
/// stand-in in the tests. Everything but `pid` is called on the link's event loop.
protocol LinkedWorker: AnyObject, Sendable {
    /// For the log.
    var pid: Int32 { get }
    func send(_ message: WorkerMessage)
    /// The CPU time it has spent, all its threads; nil when it cannot be read (it is gone).
    func cpuTime() -> Duration?
    /// Whether one of its threads waits for the machine (a CPU, the disk) rather than for a11yd.
    func waitsForTheMachine() -> Bool
    /// Closes its channel, kills it first if `kill` (else a healthy worker exits on its own), and
    /// reaps it without blocking the loop: how it ended.
    func end(kill: Bool) -> EventLoopFuture<String>
}

/// How the link starts a worker, on its event loop's thread: the worker then dies with that thread
/// (PR_SET_PDEATHSIG), which lives as long as the engine. What the worker sends is handed to
/// `WorkerLink.received`, its channel's end to `WorkerLink.channelClosed`.
protocol WorkerStarter: Sendable {
    func start(for link: WorkerLink) throws(WorkerFailure) -> any LinkedWorker
}

/// A worker as the supervisor knows it: by identity.
struct WorkerRef: Equatable, Sendable {
    let worker: any LinkedWorker
    static func == (lhs: WorkerRef, rhs: WorkerRef) -> Bool { lhs.worker === rhs.worker }
}

/// The executor of `WorkerSupervisor`: all its state lives on one event loop, which carries out
/// the actions (starting workers, sending frames, delivering chunks and answers, ending workers)
/// and feeds it what happens (frames received, channels closed, workers ended, and the limits,
/// which are tasks scheduled on the loop: a worker's silence is judged by `SilenceWatch`, which
/// asks the worker's CPU time before calling it hung, and an idle worker is retired after
/// `WorkerLaunch.idleLimit`). Nothing here knows which engine runs behind the frames, nor what
/// runs instead when none can start.
final class WorkerLink: Sendable {
    typealias Supervisor = WorkerSupervisor<WorkerRef, WorkerEngine.Work>
    typealias Ticket = Supervisor.Ticket

    let loop: any EventLoop
    /// The one-thread group the link owns (nil: the caller's loop, in the tests).
    private let group: MultiThreadedEventLoopGroup?
    let launch: WorkerLaunch
    let logger: Logger
    private let starter: any WorkerStarter

    private struct State {
        var supervisor: Supervisor
        /// The worker watched for silence, what its silence is judged by, and the next look at it.
        var watch: (worker: WorkerRef, silence: SilenceWatch, check: Scheduled<Void>)?
        var idle: Scheduled<Void>?
        /// The ends of workers under way: the loop outlives them after a shut down.
        var ending: [ObjectIdentifier: EventLoopFuture<String>] = [:]
    }

    private let state: NIOLoopBoundBox<State>
    /// False once shut down: nothing is handed to the loop any more, whose thread then ends.
    private let open = Mutex(true)
    private let tickets = Atomic<UInt32>(1)
    /// The loop's time as the clock `SilenceWatch` and the supervisor count in.
    private let epoch: (instant: ContinuousClock.Instant, deadline: NIODeadline)

    /// A link on a loop of its own (`loop` nil), or on `loop` (the tests' virtual time).
    init(launch: WorkerLaunch, sampleRate: Int?, logger: Logger, starter: any WorkerStarter = ProcessStarter(), loop: (any EventLoop)? = nil) {
        if let loop {
            group = nil
            self.loop = loop
        } else {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            self.group = group
            self.loop = group.next()
        }
        self.launch = launch
        self.logger = logger
        self.starter = starter
        epoch = (ContinuousClock.now, self.loop.now)
        state = .makeBoxSendingValue(State(supervisor: Supervisor(launch: launch, sampleRate: sampleRate)), eventLoop: self.loop)
    }

    /// The loop's now, in `ContinuousClock`'s terms.
    private var now: ContinuousClock.Instant {
        epoch.instant + .nanoseconds(Int64(clamping: loop.now.uptimeNanoseconds) - Int64(clamping: epoch.deadline.uptimeNanoseconds))
    }

    // MARK: - From any thread

    /// A new request's number, taken before it is submitted so that its consumer can cancel it.
    func nextTicket() -> Ticket {
        tickets.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Hands `work` to the supervisor, as `ticket`.
    func submit(_ ticket: Ticket, _ work: WorkerEngine.Work) {
        let handed = open.withLock { open in
            if open { loop.execute { self.apply { $0.submit(ticket, work, now: self.now) } } }
            return open
        }
        if !handed { work.fail(Supervisor.shutDownError(of: launch)) }
    }

    func cancel(_ ticket: Ticket) {
        onLoop { $0.cancel(ticket) }
    }

    /// Starts a worker now, if there is none, so that the first request finds it ready.
    func startNow() {
        onLoop { $0.startNow() }
    }

    /// Every worker from now on must write at `rate` (`WorkerSupervisor.expect(sampleRate:)`).
    func expect(sampleRate rate: Int) {
        onLoop { supervisor in
            supervisor.expect(sampleRate: rate)
            return []
        }
    }

    /// Fails what is waiting and in hand, ends the worker, then the loop's thread; what is asked
    /// afterwards fails.
    func shutDown() {
        open.withLock { open in
            guard open else { return }
            open = false
            // After every request handed to the loop before: they fail.
            loop.execute {
                self.apply { $0.shutDown() }
                let ending = Array(self.state.value.ending.values)
                EventLoopFuture.andAllComplete(ending, on: self.loop).whenComplete { _ in
                    self.group?.shutdownGracefully { _ in }
                }
            }
        }
    }

    /// The sample rate the workers write at, once one said `ready` (or as the caller gave it).
    func sampleRate() async -> Int? {
        try? await loop.submit { self.state.value.supervisor.sampleRate }.get()
    }

    private func onLoop(_ input: @escaping @Sendable (inout Supervisor) -> [Supervisor.Action]) {
        open.withLock { open in
            if open { loop.execute { self.apply(input) } }
        }
    }

    // MARK: - On the loop: what the worker does

    func received(_ message: WorkerMessage, from worker: any LinkedWorker) {
        apply { $0.received(message, from: WorkerRef(worker: worker)) }
    }

    func channelClosed(_ worker: any LinkedWorker, why: String) {
        apply { $0.channelClosed(WorkerRef(worker: worker), why: why) }
    }

    // MARK: - On the loop: carrying out

    /// Feeds the supervisor one input and carries out what it returns (which may feed it more).
    private func apply(_ input: (inout Supervisor) -> [Supervisor.Action]) {
        let actions = state.withValue { input(&$0.supervisor) }
        for action in actions { perform(action) }
    }

    private func perform(_ action: Supervisor.Action) {
        switch action {
        case .startWorker:
            do throws(WorkerFailure) {
                let worker = try starter.start(for: self)
                apply { $0.spawned(WorkerRef(worker: worker)) }
            } catch {
                apply { $0.spawnFailed(error.description, now: self.now) }
            }
        case .send(let worker, let ticket, let work):
            switch work {
            case .synthesis(let job): worker.worker.send(.synthesize(id: ticket, job.request))
            case .question(let question): worker.worker.send(.ask(id: ticket, question.question))
            }
        case .sendCancel(let worker, let ticket):
            worker.worker.send(.cancel(id: ticket))
        case .deliver(let chunk, .synthesis(let job)):
            job.sink.yield(chunk)
        case .deliver:
            break
        case .finish(let work, let outcome):
            work.finish(outcome)
        case .watch(let worker, let limit):
            watch(worker, limit)
        case .stopWatching:
            state.withValue { state in
                state.watch?.check.cancel()
                state.watch = nil
            }
        case .scheduleIdle(let worker, let after):
            let task = loop.scheduleTask(in: TimeAmount(after)) { self.apply { $0.idleLimitReached(worker) } }
            state.withValue { state in
                state.idle?.cancel()
                state.idle = task
            }
        case .cancelIdle:
            state.withValue { state in
                state.idle?.cancel()
                state.idle = nil
            }
        case .end(let worker, let kill):
            let key = ObjectIdentifier(worker.worker)
            let ended = worker.worker.end(kill: kill)
            state.value.ending[key] = ended
            // Heard as an input of its own, after the actions that asked for it.
            ended.whenComplete { result in
                self.loop.execute {
                    self.state.value.ending[key] = nil
                    let ending = (try? result.get()) ?? "its end is unknown"
                    self.apply { $0.workerEnded(worker, ending: ending, now: self.now) }
                }
            }
        case .log(let line, let worker):
            var metadata = line.metadata.mapValues { Logger.MetadataValue.string($0) }
            if let worker { metadata["pid"] = "\(worker.worker.pid)" }
            logger.log(level: line.level, "\(line.message)", metadata: metadata)
        }
    }

    /// Watches `worker` for `limit` of silence from now: `SilenceWatch` is asked at each of its
    /// slices whether the worker, silent, spent CPU meanwhile; hung, the supervisor hears so.
    private func watch(_ worker: WorkerRef, _ limit: Supervisor.Limit) {
        let duration = limit == .ready ? launch.readyLimit : launch.hangLimit
        let silence = SilenceWatch(limit: duration, now: now, cpu: worker.worker.cpuTime())
        state.withValue { state in
            state.watch?.check.cancel()
            state.watch = (worker, silence, scheduleCheck(in: SilenceWatch.slice(of: duration)))
        }
    }

    private func scheduleCheck(in delay: Duration) -> Scheduled<Void> {
        loop.scheduleTask(in: TimeAmount(delay)) { self.checkSilence() }
    }

    private func checkSilence() {
        guard var watch = state.value.watch else { return }
        let worker = watch.worker.worker
        switch watch.silence.verdict(now: now, cpu: worker.cpuTime(), waitsForTheMachine: worker.waitsForTheMachine()) {
        case .hung:
            state.value.watch = nil
            apply { $0.silent(watch.worker) }
        case .wait(let next):
            watch.check = scheduleCheck(in: next)
            state.value.watch = watch
        }
    }

}

extension WorkerEngine.Work: SupervisedRequest {
    var question: WorkerQuestion? {
        if case .question(let question) = self { question.question } else { nil }
    }

    /// Ends the request as the supervisor says: its one end.
    func finish(_ outcome: WorkerLink.Supervisor.Outcome) {
        switch (self, outcome) {
        case (.synthesis(let job), .failed(let error)): job.sink.finish(throwing: error)
        case (.synthesis(let job), _): job.sink.finish()
        case (.question(let question), .answer(let answer)): question.reply(.success(answer))
        case (.question(let question), .failed(let error)): question.reply(.failure(error))
        case (.question(let question), .done): question.reply(.failure(SpeechError(.internal, "the question was ended unanswered")))
        }
    }
}
