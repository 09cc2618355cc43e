// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Logging
import Synchronization

/// Synthesis and every phoneme look-up in a sandboxed worker process (`a11yd --engine-worker`,
/// `EngineWorkerProcess`, or Piper's Python worker) behind `SpeechEngine` and `PronunciationEngine`,
/// so that no text can take a11yd down and a11yd itself never loads eSpeak: a crash, a hang or a
/// kill of the worker ends only the utterance it was saying or the question it was answering
/// (`engine_failed`), and a new worker takes the next one.
///
/// Every request, synthesis or question, is handed to the engine's `WorkerLink`, which serves them
/// one at a time, as eSpeak would, on an event loop of its own; what it does is decided by
/// `WorkerSupervisor`, one pure state machine. Nothing here knows which engine runs behind the
/// frames but its `WorkerLaunch`. Voices are asked of the first worker once (they do not change
/// under a running a11yd), or given by the caller (Piper's, found on disk; eSpeak's in-process
/// engine's when no worker can start at a11yd's start), and voice resolution is answered from that
/// list here. While no worker can start, every request fails as `engineUnavailable`, and what
/// speaks instead is the caller's (for eSpeak, `EngineFallback`: eSpeak in a11yd's own process).
public final class WorkerEngine: SpeechEngine, PronunciationEngine {
    public let format: AudioFormat
    /// The installed voices, as the first worker listed them (or as the caller found them).
    let catalog: VoiceCatalog
    /// `resolveVoice`'s answers by the tag asked: the catalog does not change, and every item asks.
    private let resolved = Mutex(ResolvedVoices())
    let link: WorkerLink

    /// `A11YD_ENGINE_WORKER=PROGRAM` starts PROGRAM instead of a11yd itself (to test what happens
    /// when no worker can start; a11yd's Landlock lets it execute nothing else anyway).
    public static let executableSwitch = "A11YD_ENGINE_WORKER"

    /// The variables of a11yd's environment a worker gets: those that tell eSpeak where its data is.
    public static let passedEnvironment = ["ESPEAK_DATA_PATH", "HOME"]

    /// How long the eSpeak worker saying something may stay silent, spending no CPU, before it is
    /// taken for hung (`SilenceWatch`: one that keeps working, however slowly, is waited for).
    public static let hangLimit: Duration = .seconds(2)

    struct Job: Sendable {
        let request: Utterance
        let sink: SynthesisSink
    }

    struct Question: Sendable {
        let question: WorkerQuestion
        let reply: @Sendable (Result<WorkerAnswer, SpeechError>) -> Void
    }

    /// A request, synthesis or question: both take the one path, `WorkerSupervisor`'s.
    enum Work: Sendable {
        case synthesis(Job)
        case question(Question)
    }

    /// The one initializer: every entry point makes the link, then the engine over it.
    private init(link: WorkerLink, format: AudioFormat, catalog: VoiceCatalog) {
        self.link = link
        self.format = format
        self.catalog = catalog
    }

    /// What an engine is when no worker can start at its start: its format and voices as another
    /// engine has them (`unavailable`, the reason no worker can start).
    public typealias Otherwise = @Sendable (_ unavailable: SpeechError) async throws -> (format: AudioFormat, voices: [VoiceEntry])

    /// The engine `launch` describes, ready to serve: the voices and format asked of its first worker
    /// (started for the question). When no worker can start (`engineUnavailable`), `otherwise`'s
    /// instead, if given, and the workers started later must write at its format's rate; without
    /// it, or if it throws, this throws.
    public static func start(_ launch: WorkerLaunch, logger: Logger, otherwise: Otherwise? = nil) async throws -> WorkerEngine {
        let link = WorkerLink(launch: launch, sampleRate: nil, logger: logger)
        do {
            let format: AudioFormat, voices: [VoiceEntry]
            do {
                guard case .voices(let listed) = try await ask(.voices, of: link) else { throw wrongAnswer }
                // A worker answered, so one was ready and said its rate.
                guard let rate = await link.sampleRate() else { throw SpeechError(.internal, "the engine answered before its worker was ready") }
                (format, voices) = (AudioFormat(sampleRate: rate, channels: 1), listed)
            } catch let error as SpeechError where error.code == .engineUnavailable {
                guard let otherwise else { throw error }
                (format, voices) = try await otherwise(error)
                link.expect(sampleRate: format.sampleRate)
            }
            return WorkerEngine(link: link, format: format, catalog: VoiceCatalog(voices))
        } catch {
            link.shutDown()
            throw error
        }
    }

    /// An engine whose voices and format the caller knows (Piper's, found on disk): nothing waits
    /// for a worker here. Its first worker starts at once in the background when `startNow` (a
    /// default voice is this engine's), else with the first request.
    public convenience init(launch: WorkerLaunch, format: AudioFormat, voices: [VoiceEntry], startNow: Bool, logger: Logger) {
        let link = WorkerLink(launch: launch, sampleRate: format.sampleRate, logger: logger)
        self.init(link: link, format: format, catalog: VoiceCatalog(voices))
        if startNow { link.startNow() }
    }

    /// The consumer that leaves (the stream ended early, or let go) cancels the request: a waiting
    /// one ends at once, the worker saying it is sent a `cancel`.
    public func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SynthesisChunk.self, throwing: (any Error).self)
        let sink = SynthesisSink(yield: { continuation.yield($0) }, finish: { continuation.finish(throwing: $0) })
        let ticket = link.nextTicket()
        continuation.onTermination = { [link] _ in link.cancel(ticket) }
        link.submit(ticket, .synthesis(Job(request: request, sink: sink)))
        return stream
    }

    /// Ends the worker and the link's event loop (a daemon inside a test process, which does not
    /// exit when its speech shuts down); what is asked afterwards fails. a11yd itself never calls
    /// it: its workers die with it.
    public func shutDown() {
        link.shutDown()
    }

    public func voices() async -> [VoiceInfo] {
        catalog.voices
    }

    public func resolveVoice(language: String) async throws -> String {
        if let known = resolved.withLock({ $0[tag: language] }) { return known }
        let voice = try catalog.resolve(language: language)
        resolved.withLock { $0.remember(voice, for: language) }
        return voice
    }

    // MARK: - Phoneme look-ups (PronunciationEngine), answered by the worker

    /// Asks the worker; the answer is of the kind the question expects (the supervisor checked).
    func ask(_ question: WorkerQuestion) async throws -> WorkerAnswer {
        try await Self.ask(question, of: link)
    }

    private static func ask(_ question: WorkerQuestion, of link: WorkerLink) async throws -> WorkerAnswer {
        try await withCheckedThrowingContinuation { continuation in
            link.submit(link.nextTicket(), .question(Question(question: question) { continuation.resume(with: $0.mapError { $0 as any Error }) }))
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

    /// Cannot happen: the supervisor ends a worker whose answer is not of the question's kind.
    private static let wrongAnswer = SpeechError(.internal, "the engine answered another question")

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

    /// Ends the request with `error`, whoever asked it.
    func fail(_ error: SpeechError) {
        finish(.failed(error))
    }
}
