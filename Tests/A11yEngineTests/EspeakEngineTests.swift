// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Testing

extension EngineTests {
    @Suite("synthesis")
    struct Synthesis {
        let engine: EspeakEngine

        init() throws { engine = try makeEngine() }

        @Test func formatIsMonoAtEspeakRate() {
            #expect(engine.format.channels == 1)
            #expect(engine.format.sampleRate == 22050)
        }

        @Test func bonjourHasAudibleAudioOfPlausibleLength() async throws {
            let rendered = try await render(engine, text("bonjour tout le monde"))
            #expect(rendered.rms > 1000, "RMS \(rendered.rms) is too close to silence")
            let seconds = rendered.seconds(engine.format)
            #expect((0.5...3.0).contains(seconds), "duration \(seconds) s")
        }

        @Test func audioIsStreamedInSeveralChunks() async throws {
            let rendered = try await render(engine, text("phrase numéro 3 de la voix synthétisée."))
            #expect(rendered.chunkCount > 5)
        }

        @Test func leadingSilenceIsTrimmed() async throws {
            for (voice, phrase) in [("fr", "bonjour tout le monde"), ("en-us", "hello world"), ("de", "guten Tag")] {
                let rendered = try await render(engine, text(phrase, voice: voice))
                let onset = try #require(firstLoudSample(rendered.samples))
                #expect(onset <= engine.format.frames(milliseconds: 2), "\(voice): onset at frame \(onset)")
            }
        }

        @Test func wordMarksMatchTheWordsInUnicodeScalars() async throws {
            let phrase = "phrase numéro 3 de la voix synthétisée."
            let rendered = try await render(engine, text(phrase))
            let expected = wordRanges(phrase)
            #expect(expected.count == 7)
            #expect(rendered.words.map(\.start) == expected.map(\.start))
            #expect(rendered.words.map(\.length) == expected.map(\.length))
            checkFrames(rendered)
        }

        @Test func sourceStartShiftsWordOffsets() async throws {
            let phrase = "phrase numéro 3 de la voix synthétisée."
            let plain = try await render(engine, text(phrase))
            let shifted = try await render(engine, text(phrase, sourceStart: 10))
            #expect(shifted.words.map(\.start) == plain.words.map { $0.start + 10 })
            #expect(shifted.words.map(\.length) == plain.words.map(\.length))
            #expect(!shifted.words.isEmpty)
        }

        @Test func twoSegmentsGiveMarksFromBothInOrder() async throws {
            // Client text: "bonjour le monde hello world"
            let french = segment("bonjour le monde", voice: "fr", sourceStart: 0)
            let english = segment("hello world", voice: "en-us", sourceStart: 17)
            let rendered = try await render(
                engine, Utterance(segments: [french, english], rate: 175, pitch: 50, volume: 100))
            #expect(rendered.words.map(\.start) == [0, 8, 11, 17, 23])
            #expect(rendered.words.map(\.length) == [7, 2, 5, 5, 5])
            checkFrames(rendered)
            // The English words start after the French audio has been heard: well into the utterance.
            let hello = try #require(rendered.words.first { $0.start == 17 })
            #expect(hello.frame > engine.format.frames(milliseconds: 500))
        }

        @Test func markupInTextIsReadLiterally() async throws {
            let ssml = "<speak>bonjour</speak>"
            let spoken = try await render(engine, text(ssml))
            #expect(spoken.rms > 1000)
            // "speak" in both tags was read as a word: SSML was not interpreted.
            #expect(spoken.words.contains { $0.start == 1 && $0.length == 5 })
            #expect(spoken.words.contains { $0.start == 7 && $0.length == 7 })
            #expect(spoken.words.contains { $0.start == 16 && $0.length == 5 })

            let entity = "&amp; x"
            let entitySpoken = try await render(engine, text(entity, voice: "en-us"))
            // "amp" was spoken: the entity was not decoded.
            #expect(entitySpoken.words.contains { $0.start == 1 && $0.length == 3 })
        }

        @Test func doubleBracketsInTextAreNotPhonemes() async throws {
            // A phoneme segment first sets eSpeak's (global) phoneme-input flag; the text that follows
            // must still be read as text. "[[42]]" read as text says "forty-two"; as phoneme
            // mnemonics "42" says nothing at all.
            let asPhonemes = try await render(engine, Utterance(
                segments: [SpeechSegment(content: .phonemes("42"), voice: "en-us", sourceStart: 0, sourceLength: 2)],
                rate: 175, pitch: 50, volume: 100))
            let request = Utterance(
                segments: [
                    SpeechSegment(content: .phonemes("h@l'oU"), voice: "en-us", sourceStart: 0, sourceLength: 5),
                    segment("[[42]] & b", voice: "en-us", sourceStart: 6),
                ],
                rate: 175, pitch: 50, volume: 100)
            let mixed = try await render(engine, request)
            let plain = try await render(engine, text("42 & b", voice: "en-us"))
            #expect(asPhonemes.samples.count < engine.format.frames(milliseconds: 100))
            #expect(mixed.words.first.map { [$0.start, $0.length] } == [0, 5])
            // "42" at client offset 6 + 2, "&" at 6 + 7, "b" at 6 + 9.
            #expect(mixed.words.contains { $0.start == 8 && $0.length == 2 })
            #expect(mixed.words.contains { $0.start == 13 && $0.length == 1 })
            #expect(mixed.words.contains { $0.start == 15 && $0.length == 1 })
            #expect(mixed.samples.count > plain.samples.count)
            checkFrames(mixed)
        }

        /// A look-up after a synthesis reads only its own text: not the "!" that ended a sentence said
        /// with its punctuation ("point d'exclamation bonjour"), nor what a cancelled one had read
        /// ahead ("zbonjour"). The engine worker answers the pronouncer's look-ups between syntheses.
        @Test(arguments: [("Bonjour !", true, false), ("Bonjour ! Salut ! Ça va ?", false, true)])
        func aLookUpAfterASynthesisReadsOnlyItsOwnText(said: String, punctuation: Bool, cancelled: Bool) async throws {
            let request = Utterance(
                segments: [SpeechSegment(content: .text(said), voice: "fr", sourceStart: 0, sourceLength: said.count, options: .init(punctuation: punctuation))],
                rate: 175, pitch: 50, volume: 100)
            for try await _ in engine.synthesize(request) where cancelled { break }
            #expect(try await engine.ipa(ofText: "bonjour", voice: "fr") == "bɔ̃ʒˈuʁ")
        }

        @Test func phonemeSegmentGivesAudioAndOneMark() async throws {
            let mnemonics = try await engine.phonemes(for: "bonjour", voice: "fr")
            #expect(!mnemonics.isEmpty)
            let request = Utterance(
                segments: [SpeechSegment(content: .phonemes(mnemonics), voice: "fr", sourceStart: 4, sourceLength: 7)],
                rate: 175, pitch: 50, volume: 100)
            let rendered = try await render(engine, request)
            #expect(rendered.rms > 1000)
            #expect(rendered.seconds(engine.format) > 0.2)
            #expect(rendered.words == [WordMark(frame: 0, start: 4, length: 7)])
        }

        @Test func phonemeSegmentMarkSitsAtItsFirstFrame() async throws {
            let request = Utterance(
                segments: [
                    segment("bonjour", voice: "fr", sourceStart: 0),
                    SpeechSegment(content: .phonemes("mO~d"), voice: "fr", sourceStart: 8, sourceLength: 5),
                ],
                rate: 175, pitch: 50, volume: 100)
            let rendered = try await render(engine, request)
            let alone = try await render(engine, text("bonjour"))
            #expect(rendered.words.map(\.start) == [0, 8])
            let mark = try #require(rendered.words.last)
            // Where the first segment's audio ended (eSpeak's output varies slightly run to run).
            let tolerance = engine.format.frames(milliseconds: 30)
            #expect(abs(mark.frame - alone.samples.count) < tolerance, "\(mark.frame) vs \(alone.samples.count)")
            checkFrames(rendered)
        }

        @Test func unknownVoiceInSegmentFailsTheStream() async throws {
            await #expect(throws: SpeechError.self) {
                _ = try await render(engine, text("bonjour", voice: "no-such-voice"))
            }
            // And the engine carries on.
            let rendered = try await render(engine, text("bonjour"))
            #expect(rendered.rms > 1000)
        }

        @Test func rateChangesDuration() async throws {
            let phrase = "Ceci est une phrase de longueur moyenne pour mesurer le débit."
            let slow = try await render(engine, text(phrase, rate: 150))
            let fast = try await render(engine, text(phrase, rate: 350))
            let ratio = Double(fast.samples.count) / Double(slow.samples.count)
            #expect(ratio < 0.6, "fast/slow duration ratio \(ratio)")
        }

        private func checkFrames(_ rendered: Rendered, sourceLocation: SourceLocation = #_sourceLocation) {
            let frames = rendered.words.map(\.frame)
            #expect(zip(frames, frames.dropFirst()).allSatisfy { $0 < $1 }, "frames \(frames)", sourceLocation: sourceLocation)
            #expect(frames.allSatisfy { $0 >= 0 && $0 < rendered.samples.count }, sourceLocation: sourceLocation)
            // Delivered in the chunk where the frame falls, or earlier: never after it.
            for (frame, chunkStart) in zip(frames, rendered.deliveredAt) {
                #expect(frame >= chunkStart, "mark at \(frame) delivered in chunk from \(chunkStart)", sourceLocation: sourceLocation)
            }
        }
    }
}
