// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Logging
import Synchronization

/// An engine asked first (`primary`), and another (`fallback`) for what `primary` refuses as
/// unavailable (`SpeechError.Code.engineUnavailable`: no worker of it can start) before it produced
/// anything: eSpeak's `WorkerEngine` with eSpeak in a11yd's own process behind it (`espeak`), so that
/// a11yd still speaks, unprotected, while no worker can start. The log says so each time it comes to
/// that (once, until `primary` serves again).
///
/// Only that refusal goes to the fallback: a request whose worker failed under it, or that had its
/// first chunks, ends with its own failure (sent again, the text that broke a worker could take a11yd
/// down with it). Each request ends once, as the engine that took it ends it: a refused one never
/// reached a worker. The fallback is made the first time it is needed, once; a failure to make it is
/// kept, and told with every request it leaves unserved. It writes at `primary`'s rate, or fails.
/// Voices, voice resolution and the format are `primary`'s: its catalog answers without a worker.
public final class EngineFallback<Primary: SpeechEngine & PronunciationEngine, Fallback: SpeechEngine & PronunciationEngine>: SpeechEngine,
    PronunciationEngine
{
    public let primary: Primary
    private let fallback: MadeOnce<Fallback>
    /// What the log calls the fallback's engine ("eSpeak").
    private let name: String
    private let logger: Logger
    /// Whether the last request `primary` refused went to the fallback, and `primary` has served
    /// none since: the log tells the first of each such run.
    private let fallingBack: Atomic<Bool>

    /// `fallingBack`: the fallback already took over (at the engine's start), and the log said so.
    init(primary: Primary, fallback: MadeOnce<Fallback>, name: String, logger: Logger, fallingBack: Bool = false) {
        self.primary = primary
        self.fallback = fallback
        self.name = name
        self.logger = logger
        self.fallingBack = Atomic(fallingBack)
    }

    public var format: AudioFormat { primary.format }

    public func voices() async -> [VoiceInfo] {
        await primary.voices()
    }

    public func resolveVoice(language: String) async throws -> String {
        try await primary.resolveVoice(language: language)
    }

    /// `primary`'s chunks, or the fallback's when `primary` refused the request as unavailable; pulled
    /// in the consumer's own task (no task between them, so the first chunk comes no later). A
    /// consumer that leaves, or lets the stream go, ends whichever engine's stream it was taking,
    /// which stops that engine.
    public func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        let chunks = FallingBackChunks(primary.synthesize(request).makeAsyncIterator()) { [self] unavailable in
            try engine(after: unavailable).synthesize(request).makeAsyncIterator()
        } served: { [self] in
            served()
        }
        return AsyncThrowingStream { try await chunks.next() }
    }

    // MARK: - PronunciationEngine

    public func phonemeInventory(voice: String) async throws -> [PhonemeEntry] {
        try await answer { try await $0.phonemeInventory(voice: voice) }
    }

    public func allMnemonics() async throws -> [String] {
        try await answer { try await $0.allMnemonics() }
    }

    public func ipa(ofText text: String, voice: String) async throws -> String {
        try await answer { try await $0.ipa(ofText: text, voice: voice) }
    }

    public func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String {
        try await answer { try await $0.ipa(ofMnemonics: mnemonics, voice: voice) }
    }

    public func ipa(ofLetter character: String, voice: String) async throws -> String {
        try await answer { try await $0.ipa(ofLetter: character, voice: voice) }
    }

    /// `primary`'s answer, or the fallback's when `primary` refused the question as unavailable.
    private func answer<Answer>(_ ask: (any PronunciationEngine) async throws -> Answer) async throws -> Answer {
        let answer: Answer
        do {
            answer = try await ask(primary)
        } catch let error as SpeechError where error.code == .engineUnavailable {
            return try await ask(try engine(after: error))
        } catch {
            served()
            throw error
        }
        served()
        return answer
    }

    // MARK: - Falling back

    /// `primary` served a request (or failed on it for a reason of its own): the next refusal is
    /// told again.
    private func served() {
        if fallingBack.load(ordering: .relaxed) { fallingBack.store(false, ordering: .relaxed) }
    }

    /// The fallback, for a request `primary` refused as `unavailable`; the log says so if `primary`
    /// served since it last did.
    private func engine(after unavailable: SpeechError) throws(SpeechError) -> Fallback {
        let engine = try Self.made(fallback, after: unavailable, name: name)
        guard engine.format.sampleRate == primary.format.sampleRate else {
            throw SpeechError(
                .engineFailed, "the in-process engine's sample rate \(engine.format.sampleRate) is not the worker's \(primary.format.sampleRate)")
        }
        if !fallingBack.exchange(true, ordering: .relaxed) { Self.logFallingBack(after: unavailable, name: name, logger: logger) }
        return engine
    }

    /// The fallback made (the first time), or why it cannot be, with why `primary` could not serve.
    static func made(_ fallback: MadeOnce<Fallback>, after unavailable: SpeechError, name: String) throws(SpeechError) -> Fallback {
        do throws(SpeechError) {
            return try fallback.get()
        } catch {
            throw SpeechError(.engineUnavailable, "\(unavailable.message); nor can \(name) run in a11yd's own process (\(error.message))")
        }
    }

    static func logFallingBack(after unavailable: SpeechError, name: String, logger: Logger) {
        logger.error(
            "no engine worker: synthesis in process, unprotected from what text does to \(name)", metadata: ["error": "\(unavailable.message)"])
    }
}

extension EngineFallback where Primary == WorkerEngine, Fallback == EspeakEngine {
    /// eSpeak as a11yd speaks with it: in its sandboxed worker (`launch`), and in a11yd's own process
    /// while no worker can start, the log saying why. So from the start when none can start then: the
    /// voices and format are the in-process engine's, and workers started later must write at its
    /// rate. Throws when neither can run.
    public static func espeak(_ launch: WorkerLaunch, logger: Logger) async throws -> EngineFallback {
        let name = "eSpeak"
        let inProcess = MadeOnce { try EspeakEngine(logger: logger) }
        let worker = try await WorkerEngine.start(launch, logger: logger) { unavailable in
            let engine = try Self.made(inProcess, after: unavailable, name: name)
            Self.logFallingBack(after: unavailable, name: name, logger: logger)
            return (engine.format, try await engine.voiceEntries())
        }
        return EngineFallback(primary: worker, fallback: inProcess, name: name, logger: logger, fallingBack: inProcess.isMade)
    }
}

/// An engine made the first time it is asked for, then kept; so is a failure to make it, which
/// would fail again. Made under the lock: whoever asks meanwhile waits for the same engine.
final class MadeOnce<Engine: Sendable>: Sendable {
    private let make: @Sendable () throws -> Engine
    private let made = Mutex<Result<Engine, SpeechError>?>(nil)

    init(_ make: @escaping @Sendable () throws -> Engine) {
        self.make = make
    }

    func get() throws(SpeechError) -> Engine {
        try made.withLock { made in
            if let made { return made }
            let result = Result { try make() }.mapError(SpeechError.init(wrapping:))
            made = result
            return result
        }.get()
    }

    /// Whether it was asked for (and made, or failed).
    var isMade: Bool { made.withLock { $0 != nil } }
}

/// The chunks of `primary`'s stream, or of the fallback's once `primary` refused the request as
/// unavailable before its first chunk (then that refusal is never seen by the consumer: one end).
///
/// `@unchecked Sendable`: only the closure of one `AsyncThrowingStream(unfolding:)` uses it, and
/// that stream calls its closure for one `next()` at a time, never two at once.
private final class FallingBackChunks: @unchecked Sendable {
    typealias Iterator = AsyncThrowingStream<SynthesisChunk, any Error>.AsyncIterator
    private var iterator: Iterator
    /// Until `primary` answered, or was refused.
    private var fallback: ((SpeechError) throws -> Iterator)?
    private let served: () -> Void

    init(_ primary: Iterator, fallback: @escaping (SpeechError) throws -> Iterator, served: @escaping () -> Void) {
        iterator = primary
        self.fallback = fallback
        self.served = served
    }

    func next() async throws -> SynthesisChunk? {
        guard let fallback else { return try await iterator.next() }
        // `primary`'s first answer: a chunk, its end, or its failure.
        self.fallback = nil
        do {
            let chunk = try await iterator.next()
            served()
            return chunk
        } catch let error as SpeechError where error.code == .engineUnavailable {
            iterator = try fallback(error)
            return try await iterator.next()
        } catch {
            served()
            throw error
        }
    }
}
