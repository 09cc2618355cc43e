// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Testing

/// What the render fuzzer (Fuzz/, docs/fuzzing.md) caught, kept as tests: `EspeakEngine` is a
/// public API and takes any Int and any scale without trapping.
extension EngineTests {
    @Suite struct EngineFuzzTests {
        /// fuzz-render: a rate of Int.max (or a scale that made the product pass Int.max, or NaN)
        /// trapped in "Double value cannot be converted to Int" inside synthesis.
        @Test func extremeSettingsAreClampedNotTrapped() async throws {
            let engine = try makeEngine()
            var wild = segment("bonjour", voice: "fr")
            wild.options.rateScale = .infinity
            wild.options.pitchScale = .nan
            wild.options.volumeScale = 1e300
            let loud = try await render(engine, Utterance(segments: [segment("bonjour", voice: "fr"), wild], rate: .max, pitch: .min, volume: .max))
            #expect(loud.rms > 1000, "spoken at the loudest volume")
            // Volume 0: silence, which the engine trims away; what matters is that it ends.
            _ = try await render(engine, Utterance(segments: [segment("bonjour", voice: "fr"), wild], rate: .min, pitch: .max, volume: .min))
        }

        /// fuzz-render: "A.B.C. et" and 188 letters aborted the process inside libespeak-ng 1.51
        /// ("stack smashing detected"; any voice, any settings: "a.b. " then a word of 165 bytes).
        @Test func aVeryLongWordAfterAnAbbreviationIsSpokenNotFatal() async throws {
            let engine = try makeEngine()
            let text = "A.B. " + String(repeating: "a", count: 300) + " fin " + String(repeating: "é", count: 90)
            let rendered = try await render(engine, Utterance(segments: [segment(text, voice: "en")], rate: 175, pitch: 50, volume: 100))
            #expect(rendered.rms > 1000)
            let length = text.unicodeScalars.count
            #expect(rendered.words.allSatisfy { $0.start >= 0 && $0.start + $0.length <= length })
            #expect(rendered.words.contains { $0.start == 306 && $0.length == 3 }, "'fin' keeps its place in the client's text")
            #expect(rendered.words.contains { $0.start == 105 }, "the long word is read in pieces, each where it stands")
        }

        /// fuzz-render: a Bengali digit made libespeak-ng 1.51 read freed memory, in every voice. Only
        /// AddressSanitizer sees that (`make asan`: this test fails there on the old code); in a
        /// plain build it checks that the digits are still spoken, as their numbers.
        @Test func bengaliDigitsAreSpokenAsTheirNumbers() async throws {
            let engine = try makeEngine()
            let rendered = try await render(engine, text("১২৩ ৯", voice: "en"))
            let ascii = try await render(engine, text("123 9", voice: "en"))
            #expect(rendered.rms > 1000)
            #expect(rendered.words.map { [$0.start, $0.length] } == ascii.words.map { [$0.start, $0.length] })
            #expect(abs(rendered.samples.count - ascii.samples.count) < ascii.samples.count / 10)
        }
    }
}
