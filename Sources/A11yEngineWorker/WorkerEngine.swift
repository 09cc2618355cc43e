// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import Dispatch
import Glibc
import Logging
import Synchronization
import SystemPackage

/// Synthesis and every phoneme look-up in a sandboxed worker process (`a11yd --engine-worker`,
/// `EngineWorkerProcess`, or Piper's Python worker) behind `SpeechEngine` and `PronunciationEngine`,
/// so that no text can take a11yd down and a11yd itself never loads eSpeak: a crash, a hang or a
/// kill of the worker ends only the utterance it was saying or the question it was answering
/// (`engine_failed`), and a new worker takes the next one.
///
/// One thread of a11yd (the link) serves requests one at a time, as eSpeak would: it sends the
/// request, passes on every chunk or the answer, and watches the worker while it works
/// (`WorkerEngine+Link.swift`). What it does next is decided by `WorkerSupervision`, one pure state
/// machine: the worker's state (not started, ready, retired when idle, unstartable for a while, in
/// process, shut down), when a request is tried again, when it is refused. Nothing here knows which
/// engine runs behind the frames but its `WorkerLaunch`. Voices are asked of the first worker once
/// (they do not change under a running a11yd), or given by the caller (Piper's, found on disk), and
/// voice resolution is answered from that list here. eSpeak alone may run in a11yd's own process,
/// when `WorkerLaunch.inProcess` says so, and the log says why (`WorkerEngine+InProcess.swift`).
public final class WorkerEngine: SpeechEngine, PronunciationEngine {
    public let format: AudioFormat
    /// The installed voices, as the first worker listed them (or as the caller found them).
    let catalog: VoiceCatalog
    /// `resolveVoice`'s answers by the tag asked: the catalog does not change, and every item asks.
    private let resolved = Mutex<[String: String]>([:])
    let logger: Logger
    let launch: WorkerLaunch

    /// `A11YD_ENGINE_IN_PROCESS=1` keeps synthesis in a11yd's own process (to rule the worker out).
    public static let inProcessSwitch = "A11YD_ENGINE_IN_PROCESS"

    /// `A11YD_ENGINE_WORKER=PROGRAM` starts PROGRAM instead of a11yd itself (to test what happens
    /// when no worker can start; a11yd's Landlock lets it execute nothing else anyway).
    public static let executableSwitch = "A11YD_ENGINE_WORKER"

    /// The variables of a11yd's environment a worker gets: those that tell eSpeak where its data is.
    public static let passedEnvironment = ["ESPEAK_DATA_PATH", "HOME"]

    /// How long the eSpeak worker saying something may stay silent, spending no CPU, before it is
    /// taken for hung (`SilenceWatch`: one that keeps working, however slowly, is waited for).
    public static let hangLimit: Duration = .seconds(2)
    /// Failed starts in a row after which no worker is tried again for
    /// `WorkerSupervision.restartPause` (the eSpeak worker: after which synthesis stays in process).
    static let startAttempts = 3

    struct Job: Sendable {
        let request: Utterance
        let sink: SynthesisSink
        let cancellation: CancellationFlag
    }

    struct Question: Sendable {
        let question: WorkerQuestion
        let reply: @Sendable (Result<WorkerAnswer, SpeechError>) -> Void
    }

    /// A request, synthesis or question: both take the one path, `run`.
    enum Work: Sendable {
        case synthesis(Job)
        case question(Question)
    }

    /// What the link thread and the callers share.
    struct Link {
        var supervision: WorkerSupervision<WorkerProcess>
        /// Requests not yet taken by the link thread, in the order asked.
        var work: [Work] = []
        /// The request id in the worker's hands, with its consumer's flag (to send it a cancel).
        var active: (id: UInt32, cancellation: CancellationFlag)?
        var nextID: UInt32 = 1

        mutating func takeID() -> UInt32 {
            defer { nextID &+= 1 }
            return nextID
        }
    }

    let link: Mutex<Link>
    /// eSpeak in a11yd's own process, made only once `link`'s state is `inProcess`.
    let inProcessEngine = Mutex<InProcessEngine?>(nil)
    /// A socket pair used as a pipe: `submit` writes a byte to its end 1 to wake the link thread,
    /// which sleeps in poll on end 0 and on the worker's channel, so that it sees a worker die
    /// even while idle, and wakes for nothing else.
    let wake: (read: Int32, write: Int32)

    /// What the link thread learns from the first worker before `init` can finish.
    private struct FirstWorker: Sendable {
        let worker: WorkerProcess
        let sampleRate: Int
        let voices: [VoiceEntry]
    }

    /// The engine `launch` describes, ready to serve: its first worker started, ready, and asked for
    /// the voices; or eSpeak in a11yd's own process from the start, where `WorkerSupervision` says so
    /// (`A11YD_ENGINE_IN_PROCESS=1`, or the first worker could not start), and the log says why.
    /// Throws if neither can speak.
    public static func start(_ launch: WorkerLaunch, logger: Logger) async throws -> WorkerEngine {
        var supervision = WorkerSupervision<WorkerProcess>(inProcess: launch.inProcess)
        if case .inProcess = supervision.state {
            logger.notice("synthesis in process, not in a sandboxed worker", metadata: ["reason": "\(inProcessSwitch)=1"])
            return try await inProcessFromTheStart(launch, logger: logger)
        }
        do {
            return try WorkerEngine(firstWorkerOf: launch, logger: logger)
        } catch {
            // Decided as for any worker that cannot start.
            guard supervision.startFailed(engine: launch.engine.rawValue, why: "\(error)", now: .now) == nil else { throw error }
            logger.error("no engine worker: synthesis in process, unprotected from what text does to eSpeak", metadata: ["error": "\(error)"])
            return try await inProcessFromTheStart(launch, logger: logger)
        }
    }

    /// Starts the first worker of `launch` on the link thread, waits until it is ready and asks it
    /// for the voices.
    private init(firstWorkerOf launch: WorkerLaunch, logger: Logger) throws {
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
        precondition(thread == 0, "cannot start the engine link thread: \(Errno(rawValue: thread).description)")
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
        var supervision = WorkerSupervision<WorkerProcess>(inProcess: launch.inProcess)
        supervision.started(first.worker)
        link = Mutex(Link(supervision: supervision))
        handoff.withLock { $0 = self }
        ready.signal()
    }

    /// An engine whose voices and format the caller knows (Piper's, found on disk): nothing waits
    /// for a worker here. Its first worker starts at once in the background when `startNow` (a
    /// default voice is this engine's), else with the first request.
    public convenience init(launch: WorkerLaunch, format: AudioFormat, voices: [VoiceEntry], startNow: Bool, logger: Logger) throws {
        try self.init(launch: launch, format: format, catalog: VoiceCatalog(voices), logger: logger)
        let thread = DetachedThread.start(name: "a11yd.\(launch.engine.rawValue)") { [self] in
            if startNow { startWorker() }
            serve()
        }
        precondition(thread == 0, "cannot start the engine link thread: \(Errno(rawValue: thread).description)")
    }

    /// The engine without its link thread: `inProcess` state, or before the caller starts the thread.
    init(launch: WorkerLaunch, format: AudioFormat, catalog: VoiceCatalog, logger: Logger) throws {
        self.logger = logger
        self.launch = launch
        self.format = format
        self.catalog = catalog
        link = Mutex(Link(supervision: WorkerSupervision(inProcess: launch.inProcess)))
        wake = try Self.wakePair()
    }

    /// The link thread holds the engine until it ends (`shutDown()`), so nothing can use the wake-up
    /// pair any more.
    deinit {
        close(wake.read)
        close(wake.write)
    }

    private static func wakePair() throws(WorkerFailure) -> (read: Int32, write: Int32) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0 else {
            throw WorkerFailure("socketpair: \(SystemCall.lastError.description)")
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
        link.withLock { $0.supervision.shutDown() }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// Hands `work` to the link thread, or to the in-process engine once the engine runs in process.
    private func submit(_ work: Work) {
        enum Taken { case queued, inProcess, shutDown }
        let taken = link.withLock { link -> Taken in
            switch link.supervision.state {
            case .inProcess: return .inProcess
            case .shutDown: return .shutDown
            case .notStarted, .ready, .retired, .unstartable:
                link.work.append(work)
                return .queued
            }
        }
        switch taken {
        case .shutDown:
            work.fail(shutDownError)
        case .inProcess:
            doInProcess(work)
        case .queued:
            var byte: UInt8 = 1
            // Non-blocking: a full socket already wakes the thread, so a failed write loses nothing.
            _ = write(wake.write, &byte, 1)
        }
    }

    var shutDownError: SpeechError {
        SpeechError(.shuttingDown, "the \(launch.engine.rawValue) engine was shut down")
    }

    public func voices() async -> [VoiceInfo] {
        catalog.voices
    }

    public func resolveVoice(language: String) async throws -> String {
        if let known = resolved.withLock({ $0[language] }) { return known }
        let voice = try catalog.resolve(language: language)
        resolved.withLock { cache in
            // Bounded: a client can name any number of tags.
            if cache.count >= 256 { cache.removeAll() }
            cache[language] = voice
        }
        return voice
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
        let target = link.withLock { link -> (WorkerProcess, UInt32)? in
            guard let active = link.active, active.cancellation === cancellation, let worker = link.supervision.worker else { return nil }
            return (worker, active.id)
        }
        if let (worker, id) = target { _ = worker.sendIfReady(.cancel(id: id)) }
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

extension WorkerEngine.Work {
    /// The request, by what it asks: a request that keeps killing workers is known by this.
    var fingerprint: Int {
        switch self {
        case .synthesis(let job): return WorkerEngine.fingerprint(job.request)
        case .question(let question):
            var hasher = Hasher()
            hasher.combine(question.question)
            return hasher.finalize()
        }
    }

    /// What the log says the worker was doing.
    var doing: String {
        switch self {
        case .synthesis: "saying an item"
        case .question: "answering a request"
        }
    }

    /// Ends the request with `error`, whoever asked it.
    func fail(_ error: SpeechError) {
        switch self {
        case .synthesis(let job): job.sink.finish(throwing: error)
        case .question(let question): question.reply(.failure(error))
        }
    }

    /// The error of a request refused after it made `failures` workers fail.
    func refused(after failures: Int) -> SpeechError {
        let what = if case .synthesis = self { "text" } else { "request" }
        return SpeechError(.engineFailed, "refused: this \(what) made the speech engine fail \(failures) times; a11yd will not try it again")
    }

    /// The error of a request whose worker failed under it, or could not start (`why`).
    func failed(_ why: String) -> SpeechError {
        switch self {
        case .synthesis: SpeechError(.engineFailed, "the speech engine failed while saying this (\(why)); a new one takes the next item")
        case .question: SpeechError(.engineFailed, "the speech engine failed while answering this (\(why)); a new one takes the next request")
        }
    }
}
