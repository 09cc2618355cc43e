import A11yCore
import A11yEngine
import A11yPronunciation
import A11ySystem
import Dispatch
import Glibc
import Logging
import Synchronization

/// Synthesis and every phoneme look-up in a sandboxed worker process (`a11yd --engine-worker`,
/// `EngineWorkerProcess`) behind `SpeechEngine` and `PronunciationEngine`, so that no text can take
/// a11yd down and a11yd itself never loads eSpeak: a crash, a hang or a kill of the worker ends only
/// the utterance it was saying or the question it was answering (`engine_failed`), and a new worker
/// takes the next one.
///
/// One thread of a11yd (the link) serves requests one at a time, as eSpeak would: it sends the
/// request, passes on every chunk or the answer, and watches the worker while it works. A worker
/// that sends nothing for `hangLimit` meanwhile is killed. A request that made the worker fail
/// `refusalThreshold` times is refused from then on, so it cannot keep killing workers.
/// Voices are asked of the first worker once (they do not change under a running a11yd), and voice
/// resolution is answered from that list here. Only if no worker can start any more is an engine
/// made in a11yd's own process, and the log says so.
public final class WorkerEngine: SpeechEngine, PronunciationEngine {
    public let format: AudioFormat
    /// The installed voices, as the first worker listed them (or as the caller found them).
    private let catalog: VoiceCatalog
    private let logger: Logger
    private let launch: WorkerLaunch

    /// `A11YD_ENGINE_IN_PROCESS=1` keeps synthesis in a11yd's own process (to rule the worker out).
    public static let inProcessSwitch = "A11YD_ENGINE_IN_PROCESS"

    /// `A11YD_ENGINE_WORKER=PROGRAM` starts PROGRAM instead of a11yd itself (to test what happens
    /// when no worker can start; a11yd's Landlock lets it execute nothing else anyway).
    public static let executableSwitch = "A11YD_ENGINE_WORKER"

    /// The variables of a11yd's environment a worker gets: those that tell eSpeak where its data is.
    public static let passedEnvironment = ["ESPEAK_DATA_PATH", "HOME"]

    /// How long the eSpeak worker saying something may stay silent before it is taken for hung.
    public static let hangLimit: Duration = .seconds(2)
    /// How many failed workers a request may cost before it is refused.
    public static let refusalThreshold = 2
    /// Failed starts in a row after which a worker is not tried again for `restartPause` (the
    /// eSpeak worker: after which synthesis stays in process).
    static let startAttempts = 3
    /// How long an engine whose worker cannot start fails requests at once, before it tries again.
    static let restartPause: Duration = .seconds(30)

    private struct Job: Sendable {
        let request: Utterance
        let sink: SynthesisSink
        let cancellation: CancellationFlag
    }

    private struct Question: Sendable {
        let question: WorkerQuestion
        let reply: @Sendable (Result<WorkerAnswer, SpeechError>) -> Void
    }

    private enum Work: Sendable {
        case synthesis(Job)
        case question(Question)
    }

    private struct State {
        var work: [Work] = []
        /// The worker serving requests; nil when it must be started again.
        var worker: WorkerProcess?
        /// The request id in the worker's hands, with its consumer's flag (to send it a cancel).
        var active: (id: UInt32, cancellation: CancellationFlag)?
        var nextID: UInt32 = 1
        /// How many workers each request (by hash) has cost; bounded.
        var failures: [Int: Int] = [:]
        /// No worker could start: everything goes to the in-process engine.
        var inProcessOnly = false
        /// No worker could start, and this engine has no in-process fallback: requests fail at
        /// once with `why` until `until`, then a start is tried again.
        var unstartable: (until: ContinuousClock.Instant, why: String)?
        /// `shutDown()` was called: the link thread ends its worker and itself.
        var shutDown = false
    }

    private let state: Mutex<State>
    /// The engine in a11yd's own process, made only once no worker can start (eSpeak only).
    private let fallback = Mutex<EspeakEngine?>(nil)
    /// A socket pair used as a pipe: `synthesize` writes a byte to its end 1 to wake the link
    /// thread, which sleeps in poll on end 0 and on the worker's channel, so that it sees a worker
    /// die even while idle, and wakes for nothing else.
    private let wake: (read: Int32, write: Int32)

    /// What the link thread learns from the first worker before `init` can finish.
    private struct FirstWorker: Sendable {
        let worker: WorkerProcess
        let sampleRate: Int
        let voices: [VoiceEntry]
    }

    /// The eSpeak worker: starts the first one, waits until it is ready and asks it for the voices;
    /// throws if it cannot (the caller then speaks with an in-process engine and says so).
    /// - Parameters:
    ///   - executable: a11yd itself (`/proc/self/exe`: the very file a11yd runs, even if a package
    ///     upgrade replaced it since).
    ///   - environment: a11yd's; only `passedEnvironment` reaches the worker.
    public convenience init(executable: String = "/proc/self/exe", environment: [String: String] = [:], logger: Logger) throws {
        try self.init(launch: .espeak(executable: executable, environment: environment), logger: logger)
    }

    /// Starts the first worker of `launch`, waits until it is ready and asks it for the voices.
    public init(launch: WorkerLaunch, logger: Logger) throws {
        self.logger = logger
        self.launch = launch
        wake = try Self.wakePair()
        // Workers are started by the link thread only: each dies with the thread that started it
        // (PR_SET_PDEATHSIG), and the link thread lives as long as a11yd, while the thread calling
        // this initializer may be a pool thread that ends when idle. The thread waits for the
        // finished engine (`handoff`) before it serves.
        let started = Mutex<Result<FirstWorker, WorkerFailure>?>(nil)
        let handoff = Mutex<WorkerEngine?>(nil)
        let done = DispatchSemaphore(value: 0)
        let ready = DispatchSemaphore(value: 0)
        let thread = DetachedThread.start(name: "a11yd.worker") {
            do throws(WorkerFailure) {
                let first = try Self.startFirstWorker(launch, logger: logger)
                started.withLock { $0 = .success(first) }
                done.signal()
            } catch {
                started.withLock { $0 = .failure(error) }
                done.signal()
                return
            }
            ready.wait()
            handoff.withLock { $0 }!.serve()
        }
        precondition(thread == 0, "cannot start the engine link thread: \(String(cString: strerror(thread)))")
        done.wait()
        let first: FirstWorker
        switch started.withLock({ $0! }) {
        case .success(let value): first = value
        case .failure(let failure):
            close(wake.read)
            close(wake.write)
            throw failure
        }
        format = AudioFormat(sampleRate: first.sampleRate, channels: 1)
        catalog = VoiceCatalog(first.voices)
        state = Mutex(State(worker: first.worker))
        handoff.withLock { $0 = self }
        ready.signal()
    }

    /// An engine whose voices and format the caller knows (Piper's, found on disk): nothing waits
    /// for a worker here. Its first worker starts at once in the background when `startNow` (a
    /// default voice is this engine's), else with the first request; it has no in-process fallback.
    public init(launch: WorkerLaunch, format: AudioFormat, voices: [VoiceEntry], startNow: Bool, logger: Logger) throws {
        self.logger = logger
        self.launch = launch
        self.format = format
        catalog = VoiceCatalog(voices)
        state = Mutex(State())
        wake = try Self.wakePair()
        let handoff = Mutex<WorkerEngine?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = DetachedThread.start(name: "a11yd.\(launch.engine.rawValue)") {
            ready.wait()
            let engine = handoff.withLock { $0 }!
            if startNow { _ = engine.restart() }
            engine.serve()
        }
        precondition(thread == 0, "cannot start the engine link thread: \(String(cString: strerror(thread)))")
        handoff.withLock { $0 = self }
        ready.signal()
    }

    private static func wakePair() throws(WorkerFailure) -> (read: Int32, write: Int32) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0 else {
            throw WorkerFailure("socketpair: \(String(cString: strerror(errno)))")
        }
        return (pair[0], pair[1])
    }

    /// On the link thread: a worker, its sample rate, and the voices it lists (asked once: they
    /// are the same for every worker).
    private static func startFirstWorker(_ launch: WorkerLaunch, logger: Logger) throws(WorkerFailure) -> FirstWorker {
        let (worker, sampleRate) = try startWorker(launch, logger: logger)
        if let why = worker.send(.ask(id: 0, .voices), timeout: .seconds(10)) {
            throw WorkerFailure("it took no question (\(why)); \(worker.end())")
        }
        switch worker.receive(timeout: .seconds(10)) {
        case .message(.answer(0, .voices(let voices))):
            return FirstWorker(worker: worker, sampleRate: sampleRate, voices: voices)
        case .message(.end(0, let failure?)):
            throw WorkerFailure("it could not list its voices (\(failure.message)); \(worker.end())")
        case .message(let other):
            throw WorkerFailure("it sent \(kind(of: other)) for the voices; \(worker.end())")
        case .silent:
            throw WorkerFailure("it listed no voices within 10 s; \(worker.end())")
        case .broken(let why):
            throw WorkerFailure("\(why); \(worker.end())")
        }
    }

    public func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SynthesisChunk.self, throwing: (any Error).self)
        let cancellation = CancellationFlag()
        let sink = SynthesisSink(yield: { continuation.yield($0) }, finish: { continuation.finish(throwing: $0) })
        continuation.onTermination = { [weak self] _ in
            cancellation.cancel()
            self?.cancelIfActive(cancellation)
        }
        submit(.synthesis(Job(request: request, sink: sink, cancellation: cancellation)))
        return stream
    }

    /// Ends the worker and the link thread (a daemon inside a test process, which does not exit when
    /// its speech shuts down); what is asked afterwards fails. a11yd itself never calls it: its
    /// workers die with it.
    public func shutDown() {
        state.withLock { $0.shutDown = true }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// Hands `work` to the link thread, or to the in-process engine once no worker can start.
    private func submit(_ work: Work) {
        let (inProcessOnly, shutDown) = state.withLock { state in
            if !state.inProcessOnly, !state.shutDown { state.work.append(work) }
            return (state.inProcessOnly, state.shutDown)
        }
        if shutDown {
            Self.fail(work, SpeechError(.shuttingDown, "the \(launch.engine.rawValue) engine was shut down"))
        } else if inProcessOnly {
            doInProcess(work)
        } else {
            var byte: UInt8 = 1
            // Non-blocking: a full socket already wakes the thread, so a failed write loses nothing.
            _ = write(wake.write, &byte, 1)
        }
    }

    public func voices() async -> [VoiceInfo] {
        catalog.voices
    }

    public func resolveVoice(language: String) async throws -> String {
        try catalog.resolve(language: language)
    }

    // MARK: - Phoneme look-ups (PronunciationEngine), answered by the worker

    /// Asks the worker; the answer is of the kind the question expects (the link thread checked).
    func ask(_ question: WorkerQuestion) async throws -> WorkerAnswer {
        try await withCheckedThrowingContinuation { continuation in
            submit(.question(Question(question: question) { continuation.resume(with: $0.mapError { $0 as any Error }) }))
        }
    }

    public func phonemeInventory(voice: String) async throws -> [PhonemeEntry] {
        guard case .phonemes(let entries) = try await ask(.phonemeInventory(voice: voice)) else { throw Self.wrongAnswer }
        return entries
    }

    public func allMnemonics() async throws -> [String] {
        guard case .names(let names) = try await ask(.allMnemonics) else { throw Self.wrongAnswer }
        return names
    }

    public func ipa(ofText text: String, voice: String) async throws -> String {
        try await answerText(.ipaOfText(text, voice: voice))
    }

    public func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String {
        try await answerText(.ipaOfMnemonics(mnemonics, voice: voice))
    }

    public func ipa(ofLetter character: String, voice: String) async throws -> String {
        try await answerText(.ipaOfLetter(character, voice: voice))
    }

    private func answerText(_ question: WorkerQuestion) async throws -> String {
        guard case .text(let text) = try await ask(question) else { throw Self.wrongAnswer }
        return text
    }

    /// Cannot happen: the link thread ends a worker whose answer is not of the question's kind.
    private static let wrongAnswer = SpeechError(.internal, "the engine answered another question")

    /// Tells the worker to stop saying what `cancellation` belongs to, if it is saying it now.
    private func cancelIfActive(_ cancellation: CancellationFlag) {
        let target = state.withLock { state -> (WorkerProcess, UInt32)? in
            guard let active = state.active, active.cancellation === cancellation, let worker = state.worker else { return nil }
            return (worker, active.id)
        }
        if let (worker, id) = target { _ = worker.sendIfReady(.cancel(id: id)) }
    }

    // MARK: - The link thread

    /// What a request is answered with when it will not be tried.
    private static func fail(_ work: Work, _ error: SpeechError) {
        switch work {
        case .synthesis(let job): job.sink.finish(throwing: error)
        case .question(let question): question.reply(.failure(error))
        }
    }

    /// Serves until `shutDown()`; the thread then ends, and with it (PR_SET_PDEATHSIG) any worker.
    private func serve() {
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            let (closing, worker, left) = state.withLock { state in
                defer { if state.shutDown { state.work.removeAll() } }
                return (state.shutDown, state.worker, state.shutDown ? state.work : [])
            }
            if closing {
                for work in left { Self.fail(work, SpeechError(.shuttingDown, "the \(launch.engine.rawValue) engine was shut down")) }
                if let worker { _ = worker.reap() }
                state.withLock { $0.worker = nil }
                return
            }
            // Asleep until a request comes or the idle worker's channel stirs (it can only die), or
            // until the idle worker has been idle long enough to be ended (`launch.idleLimit`).
            let idle = state.withLock { $0.work.isEmpty ? $0.worker : nil }
            var watched = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0), pollfd(fd: idle?.descriptor ?? -1, events: Int16(POLLIN), revents: 0)]
            let timeout = idle == nil ? -1 : launch.idleLimit.map { WorkerProcess.milliseconds($0) } ?? -1
            let woken = poll(&watched, 2, timeout)
            if woken < 0 { continue }
            if woken == 0, let idle {
                state.withLock { $0.worker = nil }
                let ending = idle.reap()
                logger.info(
                    "the \(launch.engine.rawValue) worker ended after \(launch.idleLimit!) idle, to give its memory back; the next request starts another",
                    metadata: ["pid": "\(idle.pid)", "ending": "\(ending)"])
                continue
            }
            if watched[1].revents != 0, let idle {
                let ending = idle.end()
                state.withLock { $0.worker = nil }
                logger.error("the \(launch.engine.rawValue) worker ended while idle; \(ending); starting a new one", metadata: ["pid": "\(idle.pid)"])
                _ = restart()
            }
            if watched[0].revents != 0 { _ = read(wake.read, &drain, drain.count) }
            while let work = state.withLock({ $0.work.isEmpty ? nil : $0.work.removeFirst() }) {
                switch work {
                case .synthesis(let job): serve(job)
                case .question(let question): serve(question)
                }
            }
        }
    }

    /// How one attempt at a request ended on its worker.
    private enum Attempt {
        case done
        /// The worker failed: `what` happened; whether the request may be blamed (a worker that
        /// breaks the protocol is at fault alone); whether the worker had sent anything of the
        /// request yet; whether its channel closed (it died), rather than its falling silent.
        case workerFailed(what: String, blame: Bool, sentAnything: Bool, died: Bool)
    }

    private func serve(_ job: Job) {
        if job.cancellation.isCancelled {
            job.sink.finish()
            return
        }
        run(Self.fingerprint(job.request), doing: "saying an item") { worker, id in
            say(job, id: id, on: worker)
        } inProcess: {
            doInProcess(.synthesis(job))
        } refused: { failures in
            job.sink.finish(throwing: SpeechError(
                .engineFailed, "refused: this text made the speech engine fail \(failures) times; a11yd will not try it again"))
        } failed: { why in
            job.sink.finish(throwing: SpeechError(
                .engineFailed, "the speech engine failed while saying this (\(why)); a new one takes the next item"))
        }
    }

    /// A question, as a synthesis: the one answer (or failure) goes to its asker, a worker that
    /// fails meanwhile costs only this question, and a question that keeps killing workers is refused.
    private func serve(_ question: Question) {
        var hasher = Hasher()
        hasher.combine(question.question)
        run(hasher.finalize(), doing: "answering a request") { worker, id in
            answer(question, id: id, on: worker)
        } inProcess: {
            doInProcess(.question(question))
        } refused: { failures in
            question.reply(.failure(SpeechError(
                .engineFailed, "refused: this request made the speech engine fail \(failures) times; a11yd will not try it again")))
        } failed: { why in
            question.reply(.failure(SpeechError(
                .engineFailed, "the speech engine failed while answering this (\(why)); a new one takes the next request")))
        }
    }

    /// What every request goes through: refused if it keeps killing workers, else tried on the
    /// worker (started first if there is none), and tried once more on a new worker if the first
    /// died before sending anything of it: a worker killed while idle, or just as the request came,
    /// is not the request's fault (issue 29: such a post ended `error`, unheard). A request whose
    /// worker died twice, or after answering part of it, or fell silent, fails; the worker's
    /// failure counts against it (`refusalThreshold`), and a new worker is started for the next.
    private func run(
        _ key: Int, doing: String, attempt: (WorkerProcess, UInt32) -> Attempt, inProcess: () -> Void,
        refused: (Int) -> Void, failed: (String) -> Void
    ) {
        let failures = state.withLock { $0.failures[key, default: 0] }
        if failures >= Self.refusalThreshold {
            refused(failures)
            return
        }
        for round in 1...2 {
            guard let worker = state.withLock({ $0.worker }) ?? restart() else {
                if launch.fallsBackInProcess {
                    inProcess()
                } else {
                    failed(state.withLock { $0.unstartable?.why } ?? "no worker can start")
                }
                return
            }
            let id = state.withLock { state in
                defer { state.nextID &+= 1 }
                return state.nextID
            }
            switch attempt(worker, id) {
            case .done:
                // A request that went through after a worker died under it was not the cause.
                if round > 1 { state.withLock { _ = $0.failures.removeValue(forKey: key) } }
                return
            case .workerFailed(let what, let blame, let sentAnything, let died):
                let ending = retire(worker, blaming: blame ? key : nil, what: what, doing: doing)
                if round == 1, died, !sentAnything {
                    logger.notice("trying the request again on a new worker: its worker died before sending anything of it")
                    continue
                }
                failed("its worker \(what); \(ending)")
                // Started now, so that the next request finds it ready.
                _ = restart()
                return
            }
        }
    }

    private func say(_ job: Job, id: UInt32, on worker: WorkerProcess) -> Attempt {
        state.withLock { $0.active = (id, job.cancellation) }
        defer { state.withLock { $0.active = nil } }
        if let why = worker.send(.synthesize(id: id, job.request), timeout: launch.hangLimit) {
            return .workerFailed(what: "stopped responding (\(why))", blame: true, sentAnything: false, died: why.workerGone)
        }
        // A consumer that left while the request was being sent could not send its cancel.
        if job.cancellation.isCancelled, let why = worker.send(.cancel(id: id), timeout: launch.hangLimit) {
            return .workerFailed(what: "stopped responding (\(why))", blame: true, sentAnything: false, died: why.workerGone)
        }
        var sentAnything = false
        while true {
            switch worker.receive(timeout: launch.hangLimit) {
            case .message(.chunk(let chunkID, let chunk)) where chunkID == id:
                sentAnything = true
                if !job.cancellation.isCancelled { job.sink.yield(chunk) }
            case .message(.end(let endID, let failure)) where endID == id:
                if let failure { job.sink.finish(throwing: failure) } else { job.sink.finish() }
                return .done
            case .message(let other):
                logger.warning("engine worker sent an unexpected message; replacing it", metadata: ["message": "\(Self.kind(of: other))"])
                return .workerFailed(what: "broke its protocol", blame: false, sentAnything: true, died: false)
            case .silent:
                return .workerFailed(what: "stopped responding (nothing for \(launch.hangLimit))", blame: true, sentAnything: sentAnything, died: false)
            case .broken(let why):
                return .workerFailed(what: "failed: \(why)", blame: true, sentAnything: sentAnything, died: true)
            }
        }
    }

    private func answer(_ question: Question, id: UInt32, on worker: WorkerProcess) -> Attempt {
        if let why = worker.send(.ask(id: id, question.question), timeout: launch.hangLimit) {
            return .workerFailed(what: "stopped responding (\(why))", blame: true, sentAnything: false, died: why.workerGone)
        }
        switch worker.receive(timeout: launch.hangLimit) {
        case .message(.answer(let answerID, let answer)) where answerID == id && answer.kind == question.question.expects:
            question.reply(.success(answer))
        case .message(.end(let endID, let failure?)) where endID == id:
            question.reply(.failure(failure))
        case .message(let other):
            logger.warning("engine worker sent an unexpected message; replacing it", metadata: ["message": "\(Self.kind(of: other))"])
            return .workerFailed(what: "broke its protocol", blame: false, sentAnything: true, died: false)
        case .silent:
            return .workerFailed(what: "stopped responding (nothing for \(launch.hangLimit))", blame: true, sentAnything: false, died: false)
        case .broken(let why):
            return .workerFailed(what: "failed: \(why)", blame: true, sentAnything: false, died: true)
        }
        return .done
    }

    /// Ends `worker`, counts the failure against the request `blaming` names, logs it, and returns
    /// how the worker ended.
    private func retire(_ worker: WorkerProcess, blaming key: Int?, what: String, doing: String) -> String {
        let ending = worker.end()
        let failures = state.withLock { state -> Int in
            state.worker = nil
            guard let key else { return 0 }
            if state.failures.count >= 64 { state.failures.removeAll() }
            state.failures[key, default: 0] += 1
            return state.failures[key]!
        }
        logger.error(
            "the \(launch.engine.rawValue) worker \(what) while \(doing); \(ending)",
            metadata: ["pid": "\(worker.pid)", "failures_of_this_request": "\(failures)"])
        return ending
    }

    // MARK: - In process, once no worker can start

    /// The in-process engine, made the first time it is needed (eSpeak is then loaded into a11yd).
    private func inProcessEngine() -> Result<EspeakEngine, SpeechError> {
        fallback.withLock { engine in
            if let engine { return .success(engine) }
            do {
                let made = try EspeakEngine(logger: logger)
                guard made.format == format else {
                    return .failure(SpeechError(.engineFailed, "the in-process engine's format \(made.format) is not the worker's \(format)"))
                }
                engine = made
                return .success(made)
            } catch {
                return .failure(SpeechError(.engineFailed, "no engine worker can start, nor eSpeak-NG in process: \(error)"))
            }
        }
    }

    private func doInProcess(_ work: Work) {
        switch (work, inProcessEngine()) {
        case (.synthesis(let job), .success(let engine)):
            engine.synthesize(job.request, into: job.sink, cancellation: job.cancellation)
        case (.question(let question), .success(let engine)):
            Task { question.reply(await Self.answer(question.question, by: engine)) }
        case (_, .failure(let error)):
            Self.fail(work, error)
        }
    }

    /// What a worker would answer, from the in-process engine.
    private static func answer(_ question: WorkerQuestion, by engine: EspeakEngine) async -> Result<WorkerAnswer, SpeechError> {
        do {
            switch question {
            case .voices: return .success(.voices(try await engine.voiceEntries()))
            case .ipaOfText(let text, let voice): return .success(.text(try await engine.ipa(ofText: text, voice: voice)))
            case .ipaOfMnemonics(let mnemonics, let voice): return .success(.text(try await engine.ipa(ofMnemonics: mnemonics, voice: voice)))
            case .ipaOfLetter(let character, let voice): return .success(.text(try await engine.ipa(ofLetter: character, voice: voice)))
            case .phonemeInventory(let voice): return .success(.phonemes(try await engine.phonemeInventory(voice: voice)))
            case .allMnemonics: return .success(.names(try await engine.allMnemonics()))
            }
        } catch {
            return .failure((error as? SpeechError) ?? SpeechError(.engineFailed, "\(error)"))
        }
    }

    /// A new worker in place of none, or nil: then, for eSpeak, synthesis stays in process (and the
    /// log says why); for an engine without that fallback, requests fail at once for `restartPause`.
    private func restart() -> WorkerProcess? {
        if let unstartable = state.withLock({ $0.unstartable }) {
            if ContinuousClock.now < unstartable.until { return nil }
            state.withLock { $0.unstartable = nil }
        }
        var last = ""
        for attempt in 1...Self.startAttempts {
            do {
                let (worker, sampleRate) = try Self.startWorker(launch, logger: logger)
                guard sampleRate == format.sampleRate else {
                    _ = worker.end()
                    throw WorkerFailure("its sample rate is \(sampleRate), not \(format.sampleRate)")
                }
                state.withLock { $0.worker = worker }
                return worker
            } catch {
                last = "\(error)"
                logger.error("a \(launch.engine.rawValue) worker could not start", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
            }
        }
        guard launch.fallsBackInProcess else {
            let why = "the \(launch.engine.rawValue) worker cannot start (\(last)); a11yd tries again in \(Self.restartPause)"
            logger.critical("\(why)")
            state.withLock { $0.unstartable = (ContinuousClock.now + Self.restartPause, why) }
            return nil
        }
        logger.critical("no engine worker can start: speaking with the in-process engine, unprotected from what text does to eSpeak")
        let waiting = state.withLock { state in
            state.inProcessOnly = true
            defer { state.work.removeAll() }
            return state.work
        }
        for work in waiting { doInProcess(work) }
        return nil
    }

    /// Starts a worker and waits (at most `launch.readyLimit`) for its `ready`; logs what protects it.
    private static func startWorker(_ launch: WorkerLaunch, logger: Logger) throws(WorkerFailure) -> (WorkerProcess, Int) {
        let worker = try WorkerProcess.start(executable: launch.executable, arguments: launch.arguments, environment: launch.environment)
        switch worker.receive(timeout: launch.readyLimit) {
        case .message(.ready(let sampleRate, let protection)):
            let level: Logger.Level = protection.contains("no ") ? .notice : .info
            logger.log(level: level, "\(launch.engine.rawValue) engine worker ready", metadata: ["pid": "\(worker.pid)", "protection": "\(protection)"])
            return (worker, sampleRate)
        case .message(let other):
            let ending = worker.end()
            throw WorkerFailure("it sent \(kind(of: other)) before ready; \(ending)")
        case .silent:
            let ending = worker.end()
            throw WorkerFailure("it was not ready within \(launch.readyLimit); \(ending)")
        case .broken(let why):
            let ending = worker.end()
            throw WorkerFailure("\(why); \(ending)")
        }
    }

    /// The same text said the same way hashes the same within this process.
    static func fingerprint(_ request: Utterance) -> Int {
        var hasher = Hasher()
        for segment in request.segments {
            switch segment.content {
            case .text(let text): hasher.combine(0); hasher.combine(text)
            case .phonemes(let mnemonics): hasher.combine(1); hasher.combine(mnemonics)
            }
            hasher.combine(segment.voice)
            hasher.combine(segment.options.spellOut)
            hasher.combine(segment.options.punctuation)
        }
        return hasher.finalize()
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
