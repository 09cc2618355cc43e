// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yTestSupport
import Logging
import Synchronization
import Testing

@testable import A11yEngineWorker

/// `EngineFallback` with fake engines: only what the worker engine refused as unavailable before
/// its first chunk goes to the fallback, once; the fallback is made once, and its failure told.
@Suite struct EngineFallbackTests {
    /// An engine that does to each request what its text says, when `scripted` (the worker engine),
    /// else speaks it: `speak` (two chunks of `tag`), `unavailable` (refused at once, as a worker
    /// engine while no worker can start), `crash` (failed at once, as when its worker died under it),
    /// `half` (a chunk, then refused as unavailable), `endless` (a chunk, then nothing until its
    /// consumer leaves; so is every request of an `endless` engine). A question is answered `tag`,
    /// or done to as its text says.
    final class Scripted: SpeechEngine, PronunciationEngine {
        let tag: Int16
        let sampleRate: Int
        let scripted: Bool
        let endless: Bool
        let requests = Mutex<[String]>([])
        /// How many of its streams ended by their consumer leaving.
        let left = Count()

        init(tag: Int16, scripted: Bool = false, sampleRate: Int = 22_050, endless: Bool = false) {
            self.tag = tag
            self.scripted = scripted
            self.sampleRate = sampleRate
            self.endless = endless
        }

        var format: AudioFormat { AudioFormat(sampleRate: sampleRate, channels: 1) }

        static let unavailable = SpeechError(.engineUnavailable, "the espeak worker cannot start (no exec); a11yd tries again in 30.0 seconds")
        static let crashed = SpeechError(.engineFailed, "the speech engine failed while saying this (its worker failed)")

        func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
            guard case .text(let text) = request.segments.first?.content else { fatalError("a text") }
            requests.withLock { $0.append(text) }
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: SynthesisChunk.self, throwing: (any Error).self)
            continuation.onTermination = { [left] termination in
                if case .cancelled = termination { left.add() }
            }
            let chunk = SynthesisChunk(samples: [tag, tag])
            switch endless ? "endless" : scripted ? text : "speak" {
            case "unavailable": continuation.finish(throwing: Self.unavailable)
            case "crash": continuation.finish(throwing: Self.crashed)
            case "half":
                continuation.yield(chunk)
                continuation.finish(throwing: Self.unavailable)
            case "endless": continuation.yield(chunk)
            default:
                continuation.yield(chunk)
                continuation.yield(chunk)
                continuation.finish()
            }
            return stream
        }

        func voices() async -> [VoiceInfo] { [VoiceInfo(identifier: "v\(tag)", name: "v\(tag)", languages: ["fr"])] }
        func resolveVoice(language: String) async throws -> String { "v\(tag)" }

        func ipa(ofText text: String, voice: String) async throws -> String {
            requests.withLock { $0.append("ipa " + text) }
            switch scripted ? text : "" {
            case "unavailable": throw Self.unavailable
            case "crash": throw Self.crashed
            default: return "\(tag)"
            }
        }
        func phonemeInventory(voice: String) async throws -> [PhonemeEntry] { throw Self.unavailable }
        func allMnemonics() async throws -> [String] { throw Self.unavailable }
        func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String { throw Self.unavailable }
        func ipa(ofLetter character: String, voice: String) async throws -> String { throw Self.unavailable }
    }

    typealias Fallback = EngineFallback<Scripted, Scripted>

    let worker = Scripted(tag: 1, scripted: true)
    let inProcess: Scripted
    let log = RecordedLog()
    /// How many times the fallback was made.
    let made = Count()

    final class Count: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
    let engine: Fallback

    init() {
        self.init(inProcess: Scripted(tag: 2), failing: false)
    }

    init(inProcess: Scripted, failing: Bool = false) {
        self.inProcess = inProcess
        engine = Fallback(primary: worker, fallback: MadeOnce { [made] in
            made.add()
            if failing { throw SpeechError(.engineFailed, "no eSpeak data") }
            return inProcess
        }, name: "eSpeak", logger: log.logger())
    }

    static func utterance(_ text: String) -> Utterance {
        Utterance(segments: [SpeechSegment(content: .text(text), voice: "fr", sourceStart: 0, sourceLength: text.count)], rate: 175, pitch: 50, volume: 100)
    }

    /// The samples `text` came back as, and how it ended.
    func said(_ text: String) async -> (samples: [Int16], failure: SpeechError?) {
        var samples: [Int16] = []
        do {
            for try await chunk in engine.synthesize(Self.utterance(text)) { samples += chunk.samples }
            return (samples, nil)
        } catch {
            return (samples, error as? SpeechError)
        }
    }

    var fallingBackLogged: Int { log.all.filter { $0.message == "no engine worker: synthesis in process, unprotected from what text does to eSpeak" }.count }

    /// Refused as unavailable: said by the fallback instead, once, ending once (spoken); the
    /// fallback made once for all; the log says so once for a run of refusals, and again after the
    /// worker engine served in between.
    @Test func aRequestRefusedAsUnavailableGoesToTheFallbackOnce() async {
        let first = await said("unavailable")
        #expect(first.samples == [2, 2, 2, 2] && first.failure == nil, "\(first)")
        #expect(worker.requests.withLock { $0 } == ["unavailable"])
        #expect(inProcess.requests.withLock { $0 } == ["unavailable"])
        #expect(fallingBackLogged == 1)
        #expect(log.all.first?.metadata["error"] == Scripted.unavailable.message)
        _ = await said("unavailable")
        #expect(fallingBackLogged == 1, "once for a run of refusals")
        #expect(await said("speak").samples == [1, 1, 1, 1], "the worker engine serves again")
        _ = await said("unavailable")
        #expect(fallingBackLogged == 2, "told again")
        #expect(made.value == 1)
        #expect(inProcess.requests.withLock { $0 } == ["unavailable", "unavailable", "unavailable"])
    }

    /// A request whose worker failed under it ends with that failure: it is not sent again, and no
    /// fallback is made for it.
    @Test func aRequestFailedOtherwiseIsNotSentAgain() async {
        let crashed = await said("crash")
        #expect(crashed.samples.isEmpty && crashed.failure == Scripted.crashed)
        #expect(inProcess.requests.withLock { $0 }.isEmpty)
        #expect(made.value == 0)
    }

    /// A request the worker engine said part of, then refused, ends with the refusal: never said again.
    @Test func aRequestThatProducedChunksIsNotSentAgain() async {
        let half = await said("half")
        #expect(half.samples == [1, 1] && half.failure == Scripted.unavailable, "\(half)")
        #expect(inProcess.requests.withLock { $0 }.isEmpty)
    }

    /// A fallback that cannot be made fails the refused request with both reasons, as unavailable,
    /// and is not tried again.
    @Test func aFallbackThatCannotBeMadeIsToldOnceMade() async {
        let failing = EngineFallbackTests(inProcess: Scripted(tag: 2), failing: true)
        for _ in 1...2 {
            let refused = await failing.said("unavailable")
            #expect(refused.failure?.code == .engineUnavailable)
            #expect(refused.failure?.message == Scripted.unavailable.message + "; nor can eSpeak run in a11yd's own process (no eSpeak data)")
        }
        #expect(failing.made.value == 1)
        await #expect(throws: SpeechError.self) { try await failing.engine.ipa(ofText: "unavailable", voice: "fr") }
        #expect(failing.made.value == 1)
    }

    /// A fallback at another sample rate than the worker engine's fails the request, saying so.
    @Test func aFallbackAtAnotherRateFailsClearly() async {
        let other = EngineFallbackTests(inProcess: Scripted(tag: 2, sampleRate: 16_000))
        let refused = await other.said("unavailable")
        #expect(refused.failure == SpeechError(.engineFailed, "the in-process engine's sample rate 16000 is not the worker's 22050"))
        #expect(other.inProcess.requests.withLock { $0 }.isEmpty)
    }

    /// Questions likewise: refused as unavailable, answered by the fallback; failed otherwise, not asked again.
    @Test func aQuestionRefusedAsUnavailableIsAnsweredByTheFallback() async throws {
        #expect(try await engine.ipa(ofText: "unavailable", voice: "fr") == "2")
        #expect(try await engine.ipa(ofText: "bonjour", voice: "fr") == "1")
        await #expect(throws: Scripted.crashed) { try await engine.ipa(ofText: "crash", voice: "fr") }
        #expect(inProcess.requests.withLock { $0 } == ["ipa unavailable"])
        #expect(try await engine.resolveVoice(language: "fr") == "v1", "voices are the worker engine's")
    }

    /// A consumer that leaves, or lets its stream go, stops whichever engine is saying its request:
    /// that engine's stream is ended too.
    @Test func aConsumerThatLeavesEndsTheEngineSayingItsRequest() async throws {
        var iterator = Optional(engine.synthesize(Self.utterance("endless")).makeAsyncIterator())
        #expect(try await iterator?.next()?.samples == [1, 1])
        iterator = nil
        #expect(worker.left.value == 1, "the worker engine's stream ended with its consumer")

        let endless = EngineFallbackTests(inProcess: Scripted(tag: 2, endless: true))
        var fellBack = Optional(endless.engine.synthesize(Self.utterance("unavailable")).makeAsyncIterator())
        #expect(try await fellBack?.next()?.samples == [2, 2])
        fellBack = nil
        #expect(endless.inProcess.left.value == 1, "the fallback's stream ended with its consumer")

        let consumer = Task { [engine = endless.engine] in
            for try await _ in engine.synthesize(Self.utterance("unavailable")) {
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        _ = await consumer.result
        #expect(endless.inProcess.left.value == 2, "and with its consumer's task cancelled")
    }
}
