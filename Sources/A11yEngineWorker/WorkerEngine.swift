import A11yCore
import A11yEngine
import A11ySystem
import Dispatch
import Glibc
import Logging
import Synchronization

/// Synthesis in a sandboxed worker process (`a11yd --engine-worker`, `EngineWorkerProcess`) behind
/// `SpeechEngine`, so that no text can take a11yd down: a crash, a hang or a kill of the worker
/// ends only the utterance it was saying (`engine_failed`), and a new worker takes the next one.
///
/// One thread of a11yd (the link) serves requests one at a time, as eSpeak would: it sends the
/// request, passes on every chunk, and watches the worker while it says something. A worker that
/// sends nothing for `hangLimit` while saying something is killed. A text that made the worker
/// fail `refusalThreshold` times is refused from then on, so it cannot keep killing workers.
/// Voices and voice resolution come from the in-process engine (`inProcess`), as do the
/// pronouncer's phoneme look-ups; if no worker can start, synthesis falls back to it too.
public final class WorkerEngine: SpeechEngine {
    public let format: AudioFormat
    /// The in-process engine: voices, and synthesis when no worker can run.
    private let inProcess: EspeakEngine
    private let logger: Logger
    private let executable: String
    private let arguments: [String]

    /// `A11YD_ENGINE_IN_PROCESS=1` keeps synthesis in a11yd's own process (to rule the worker out).
    public static let inProcessSwitch = "A11YD_ENGINE_IN_PROCESS"

    /// `A11YD_ENGINE_WORKER=PROGRAM` starts PROGRAM instead of a11yd itself (to test what happens
    /// when no worker can start; a11yd's Landlock lets it execute nothing else anyway).
    public static let executableSwitch = "A11YD_ENGINE_WORKER"

    /// How long a worker saying something may stay silent before it is taken for hung.
    public static let hangLimit: Duration = .seconds(2)
    /// How many failed workers a text may cost before it is refused.
    public static let refusalThreshold = 2
    /// Failed starts in a row after which synthesis stays in process.
    static let startAttempts = 3

    private struct Job: Sendable {
        let request: Utterance
        let sink: SynthesisSink
        let cancellation: CancellationFlag
    }

    private struct State {
        var jobs: [Job] = []
        /// The worker serving requests; nil when it must be started again.
        var worker: WorkerProcess?
        /// The request id in the worker's hands, with its consumer's flag (to send it a cancel).
        var active: (id: UInt32, cancellation: CancellationFlag)?
        var nextID: UInt32 = 1
        /// How many workers each text (by hash) has cost; bounded.
        var failures: [Int: Int] = [:]
        /// No worker could start: everything goes to the in-process engine.
        var inProcessOnly = false
    }

    private let state = Mutex(State())
    /// A socket pair used as a pipe: `synthesize` writes a byte to its end 1 to wake the link
    /// thread, which sleeps in poll on end 0 and on the worker's channel, so that it sees a worker
    /// die even while idle, and wakes for nothing else.
    private let wake: (read: Int32, write: Int32)

    /// Starts the first worker and waits until it is ready; throws if it cannot start (the caller
    /// then speaks with `inProcess` and says so).
    /// - Parameter executable: a11yd itself (`/proc/self/exe`: the very file a11yd runs, even if a
    ///   package upgrade replaced it since).
    public init(inProcess: EspeakEngine, executable: String = "/proc/self/exe", logger: Logger) throws {
        self.inProcess = inProcess
        self.logger = logger
        self.executable = executable
        self.arguments = ["--engine-worker"] + ((try? inProcess.dataFolder()).map { ["--espeak-data", $0] } ?? [])
        format = inProcess.format
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0 else {
            throw WorkerFailure("socketpair: \(String(cString: strerror(errno)))")
        }
        wake = (pair[0], pair[1])
        // Workers are started by the link thread only: each dies with the thread that started it
        // (PR_SET_PDEATHSIG), and the link thread lives as long as a11yd, while the thread calling
        // this initializer may be a pool thread that ends when idle.
        let started = Mutex<Result<Void, WorkerFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = DetachedThread.start(name: "a11yd.worker") { [self] in
            do {
                try startFirstWorker()
                started.withLock { $0 = .success(()) }
                done.signal()
            } catch {
                started.withLock { $0 = .failure((error as? WorkerFailure) ?? WorkerFailure("\(error)")) }
                done.signal()
                return
            }
            serve()
        }
        precondition(thread == 0, "cannot start the engine link thread: \(String(cString: strerror(thread)))")
        done.wait()
        if case .failure(let failure) = started.withLock({ $0! }) {
            close(pair[0])
            close(pair[1])
            throw failure
        }
    }

    private func startFirstWorker() throws(WorkerFailure) {
        let (worker, sampleRate) = try Self.startWorker(executable: executable, arguments: arguments, logger: logger)
        guard sampleRate == format.sampleRate else {
            _ = worker.end()
            throw WorkerFailure("the worker's sample rate \(sampleRate) is not the in-process engine's")
        }
        state.withLock { $0.worker = worker }
    }

    public func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SynthesisChunk.self, throwing: (any Error).self)
        let cancellation = CancellationFlag()
        let sink = SynthesisSink(yield: { continuation.yield($0) }, finish: { continuation.finish(throwing: $0) })
        let inProcessOnly = state.withLock { state in
            if !state.inProcessOnly { state.jobs.append(Job(request: request, sink: sink, cancellation: cancellation)) }
            return state.inProcessOnly
        }
        continuation.onTermination = { [weak self] _ in
            cancellation.cancel()
            self?.cancelIfActive(cancellation)
        }
        if inProcessOnly {
            inProcess.synthesize(request, into: sink, cancellation: cancellation)
        } else {
            var byte: UInt8 = 1
            // Non-blocking: a full socket already wakes the thread, so a failed write loses nothing.
            _ = write(wake.write, &byte, 1)
        }
        return stream
    }

    public func voices() async -> [VoiceInfo] {
        await inProcess.voices()
    }

    public func resolveVoice(language: String) async throws -> String {
        try await inProcess.resolveVoice(language: language)
    }

    /// Tells the worker to stop saying what `cancellation` belongs to, if it is saying it now.
    private func cancelIfActive(_ cancellation: CancellationFlag) {
        let target = state.withLock { state -> (WorkerProcess, UInt32)? in
            guard let active = state.active, active.cancellation === cancellation, let worker = state.worker else { return nil }
            return (worker, active.id)
        }
        if let (worker, id) = target { _ = worker.sendIfReady(.cancel(id: id)) }
    }

    // MARK: - The link thread

    private func serve() -> Never {
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            // Asleep until a request comes or the idle worker's channel stirs (it can only die).
            let idle = state.withLock { $0.worker }
            var watched = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0), pollfd(fd: idle?.descriptor ?? -1, events: Int16(POLLIN), revents: 0)]
            if poll(&watched, 2, -1) < 0 { continue }
            if watched[1].revents != 0, let idle {
                let ending = idle.end()
                state.withLock { $0.worker = nil }
                logger.error("the speech engine worker ended while idle; \(ending); starting a new one", metadata: ["pid": "\(idle.pid)"])
                _ = restart()
            }
            if watched[0].revents != 0 { _ = read(wake.read, &drain, drain.count) }
            while let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) { serve(job) }
        }
    }

    private func serve(_ job: Job) {
        if job.cancellation.isCancelled {
            job.sink.finish()
            return
        }
        let key = Self.fingerprint(job.request)
        let (worker, failures, id) = state.withLock { state in
            defer { state.nextID &+= 1 }
            return (state.worker, state.failures[key, default: 0], state.nextID)
        }
        if failures >= Self.refusalThreshold {
            job.sink.finish(throwing: SpeechError(
                .engineFailed,
                "refused: this text made the speech engine fail \(failures) times; a11yd will not try it again"))
            return
        }
        guard let worker = worker ?? restart() else {
            inProcess.synthesize(job.request, into: job.sink, cancellation: job.cancellation)
            return
        }
        state.withLock { $0.active = (id, job.cancellation) }
        defer { state.withLock { $0.active = nil } }
        if let why = worker.send(.synthesize(id: id, job.request), timeout: Self.hangLimit) {
            fail(job, worker: worker, key: key, what: "stopped responding (\(why))")
            return
        }
        // A consumer that left while the request was being sent could not send its cancel.
        if job.cancellation.isCancelled, let why = worker.send(.cancel(id: id), timeout: Self.hangLimit) {
            fail(job, worker: worker, key: key, what: "stopped responding (\(why))")
            return
        }
        while true {
            switch worker.receive(timeout: Self.hangLimit) {
            case .message(.chunk(let chunkID, let chunk)) where chunkID == id:
                if !job.cancellation.isCancelled { job.sink.yield(chunk) }
            case .message(.end(let endID, let failure)) where endID == id:
                if let failure { job.sink.finish(throwing: failure) } else { job.sink.finish() }
                return
            case .message(let other):
                logger.warning("engine worker sent an unexpected message; replacing it", metadata: ["message": "\(Self.kind(of: other))"])
                fail(job, worker: worker, key: nil, what: "broke its protocol")
                return
            case .silent:
                fail(job, worker: worker, key: key, what: "stopped responding (nothing for \(Self.hangLimit))")
                return
            case .broken(let why):
                fail(job, worker: worker, key: key, what: "failed: \(why)")
                return
            }
        }
    }

    /// Ends `job` with `engine_failed`, ends its worker, counts the text's failure and starts the
    /// next worker at once, so that the next item finds it ready.
    private func fail(_ job: Job, worker: WorkerProcess, key: Int?, what: String) {
        let ending = worker.end()
        let failures = state.withLock { state -> Int in
            state.worker = nil
            guard let key else { return 0 }
            if state.failures.count >= 64 { state.failures.removeAll() }
            state.failures[key, default: 0] += 1
            return state.failures[key]!
        }
        logger.error(
            "the speech engine worker \(what) while saying an item; \(ending); starting a new one",
            metadata: ["pid": "\(worker.pid)", "failures_of_this_text": "\(failures)"])
        job.sink.finish(throwing: SpeechError(
            .engineFailed, "the speech engine failed while saying this (its worker \(what); \(ending)); a new one takes the next item"))
        _ = restart()
    }

    /// A new worker in place of none, or nil (synthesis then stays in process, and the log says why).
    private func restart() -> WorkerProcess? {
        for attempt in 1...Self.startAttempts {
            do {
                let (worker, sampleRate) = try Self.startWorker(executable: executable, arguments: arguments, logger: logger)
                guard sampleRate == format.sampleRate else {
                    _ = worker.end()
                    throw WorkerFailure("its sample rate changed to \(sampleRate)")
                }
                state.withLock { $0.worker = worker }
                return worker
            } catch {
                logger.error("an engine worker could not start", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
            }
        }
        logger.critical("no engine worker can start: speaking with the in-process engine, unprotected from what text does to eSpeak")
        let waiting = state.withLock { state in
            state.inProcessOnly = true
            defer { state.jobs.removeAll() }
            return state.jobs
        }
        for job in waiting { inProcess.synthesize(job.request, into: job.sink, cancellation: job.cancellation) }
        return nil
    }

    /// Starts a worker and waits (at most 10 s) for its `ready`; logs what protects it.
    private static func startWorker(executable: String, arguments: [String], logger: Logger) throws(WorkerFailure) -> (WorkerProcess, Int) {
        let worker = try WorkerProcess.start(executable: executable, arguments: arguments)
        switch worker.receive(timeout: .seconds(10)) {
        case .message(.ready(let sampleRate, let protection)):
            let level: Logger.Level = protection.contains("no ") ? .notice : .info
            logger.log(level: level, "engine worker ready", metadata: ["pid": "\(worker.pid)", "protection": "\(protection)"])
            return (worker, sampleRate)
        case .message(let other):
            let ending = worker.end()
            throw WorkerFailure("it sent \(kind(of: other)) before ready; \(ending)")
        case .silent:
            let ending = worker.end()
            throw WorkerFailure("it was not ready within 10 s; \(ending)")
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
        case .ready: "ready"
        case .chunk: "chunk"
        case .end: "end"
        }
    }
}
