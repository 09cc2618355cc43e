// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import CEspeakNG
import Testing

@testable import A11yEngine

extension EngineTests {
    /// eSpeak starts every utterance with about 12 ms of silence (about 49 ms before a plosive,
    /// whose closure is silent too), which the engine cuts (`SynthesisContext`); the cut must
    /// never reach the first phoneme. Each word is rendered once by the real
    /// libespeak-ng and seen both ways: the library's own samples, untrimmed, and what the
    /// engine's synth callback makes of the very same buffers (renders of the same text differ
    /// slightly from one call to the next, so two renders could only be compared loosely).
    @Suite("leading-silence trim")
    struct LeadingSilenceTrim {
        let engine: EspeakEngine

        init() throws { engine = try makeEngine() }

        /// Fricative- and plosive-initial words, whose onsets are the quietest; and one word
        /// eSpeak starts without any lead-in.
        static let words: [(voice: String, word: String)] = [
            ("fr", "salut"), ("fr", "pont"), ("fr", "stop"), ("fr", "fée"), ("fr", "chat"), ("fr", "tapis"),
            ("fr", "cas"), ("fr", "hibou"), ("en-us", "stop"), ("en-us", "fish"), ("en-us", "think"), ("en-us", "pit"),
        ]

        @Test(arguments: words)
        func theFirstPhonemeIsNeverCut(voice: String, word: String) async throws {
            let (raw, trimmed) = try await bothWays(word, voice: voice)
            let cut = raw.count - trimmed.count
            try #require(cut >= 0, "the trim only removes: \(raw.count) samples became \(trimmed.count)")
            // Nothing but the head is removed: the rest is the library's audio, sample for sample.
            #expect(Array(raw[cut...]) == trimmed, "\(voice) \(word): the trimmed audio is the untrimmed audio from frame \(cut) on")
            // And the head holds none of the word: eSpeak-NG's lead-in (and a plosive's closure) is
            // digital silence, so every frame the trim drops must be 0; the word starts at the
            // library's first non-zero sample.
            let firstSound = raw.firstIndex { $0 != 0 } ?? raw.count
            let dropped = Self.energy(raw[..<cut])
            let kept = Self.energy(raw[cut..<min(raw.count, cut + engine.format.frames(milliseconds: 50))])
            #expect(kept > 0, "\(voice) \(word): the word is kept")
            #expect(
                cut <= firstSound,
                """
                \(voice) \(word): the trim cut \(cut) frames, into the word, which starts at frame \(firstSound) \
                (\(raw[firstSound..<min(cut, raw.count)].map { Int($0) }) dropped, \(dropped / max(kept, 1)) of the \
                first 50 ms' energy)
                """)
            // Nor does it keep any of that silence: a zero before the word only delays it (issue
            // 29: the 1 ms kept before every onset was most often zeros, a millisecond of every
            // key echo).
            let zerosKept = trimmed.prefix { $0 == 0 }.count
            #expect(zerosKept == 0, "\(voice) \(word): the trimmed audio starts with \(zerosKept) zero samples")
            print("trim \(voice) \(word): cut \(cut) frames (\(cut * 1000 / engine.format.sampleRate) ms), first non-zero sample at \(firstSound), dropped energy \(dropped)")
        }

        static func energy(_ samples: ArraySlice<Int16>) -> Double {
            samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        }

        /// One `espeak_Synth` call, as `EspeakSession.synthesize` makes it for a one-word
        /// utterance (same voice, parameters, flags; on the engine's own thread: the library is not
        /// reentrant), with a synth callback of the test's own for that call: it keeps a copy of
        /// every buffer, then hands buffer and events to the engine's callback, addressed to a
        /// `SynthesisContext` (which does the trimming). Returns the library's samples and the
        /// context's.
        func bothWays(_ word: String, voice: String) async throws -> (raw: [Int16], trimmed: [Int16]) {
            let (stream, raw) = try await EspeakWorker.shared.run { session in
                guard let sampleRate = session.sampleRate else { throw SpeechError(.engineFailed, "not initialized") }
                let (stream, continuation) = AsyncThrowingStream.makeStream(of: SynthesisChunk.self, throwing: (any Error).self)
                let tap = Tap(SynthesisContext(continuation: SynthesisSink(continuation), cancellation: CancellationFlag(), sampleRate: sampleRate))
                try session.selectVoice(voice)
                session.setParameters(rate: 175, pitch: 50, volume: 100)
                session.setPunctuation(false)
                espeak_SetSynthCallback { wav, count, events in
                    guard let events, let userData = events.pointee.user_data else { return 0 }
                    let tap = Unmanaged<Tap>.fromOpaque(userData).takeUnretainedValue()
                    if let wav, count > 0 { tap.raw += UnsafeBufferPointer(start: wav, count: Int(count)) }
                    var event = events
                    while true {
                        event.pointee.user_data = Unmanaged.passUnretained(tap.context).toOpaque()
                        if event.pointee.type == espeakEVENT_LIST_TERMINATED { break }
                        event += 1
                    }
                    return SynthesisContext.callback(wav: wav, count: Int(count), events: events)
                }
                // The engine's callback again, whatever happens (the same closure as `initialize`'s).
                defer {
                    espeak_SetSynthCallback { wav, count, events in
                        SynthesisContext.callback(wav: wav, count: Int(count), events: events)
                    }
                }
                let status = withExtendedLifetime(tap) {
                    tap.context.beginSegment(segment(word, voice: voice))
                    return word.withCString { text in
                        espeak_Synth(
                            text, word.utf8.count + 1, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil,
                            Unmanaged.passUnretained(tap).toOpaque())
                    }
                }
                session.phonemeInput = false
                guard status == EE_OK else { throw SpeechError(.engineFailed, "espeak_Synth failed (\(status.rawValue))") }
                tap.context.endSegment()
                tap.context.finish()
                return (stream, tap.raw)
            }
            var trimmed: [Int16] = []
            for try await chunk in stream { trimmed += chunk.samples }
            return (raw, trimmed)
        }
    }
}

/// What the test's synth callback needs: where it copies the library's samples, and the context
/// it forwards them to. Only the worker thread touches it.
private final class Tap {
    let context: SynthesisContext
    var raw: [Int16] = []

    init(_ context: SynthesisContext) { self.context = context }
}
