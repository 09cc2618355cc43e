// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yTestSupport
import Testing

/// `Utterance.resuming(at:)`: what is left to say of an item its client paused.
@Suite struct UtteranceResumingTests {
    func segment(_ text: String, at start: Int, mark: String? = nil, pause: Int = 0) -> SpeechSegment {
        SpeechSegment(
            content: .text(text), voice: "fr", sourceStart: start, sourceLength: text.unicodeScalars.count,
            options: .init(pauseBeforeMilliseconds: pause, markBefore: mark))
    }

    @Test func theSegmentItStoppedInIsCutAtTheWordAndTheRestKept() {
        // Orca's SSML: a mark before each word.
        let whole = Utterance(
            text: "Écran lecteur actif.",
            segments: [segment("Écran ", at: 0, mark: "0:5"), segment("lecteur actif.", at: 6, mark: "6:13", pause: 200)],
            rate: 175, pitch: 50, volume: 100)
        let rest = whole.resuming(at: 14)
        #expect(same(rest.text, whole.text), "events still point into the whole text")
        #expect(same(rest.segments, [
            SpeechSegment(content: .text("actif."), voice: "fr", sourceStart: 14, sourceLength: 6)
        ]), "its mark and pause were heard already")
        let fromAMark = whole.resuming(at: 6)
        #expect(same(fromAMark.segments, [whole.segments[1]]), "a segment starting there is said whole, with its mark")
        #expect(same(whole.resuming(at: 0), whole))
    }

    @Test func aPhonemeSegmentIsSaidWholeAgain() {
        let ipa = SpeechSegment(content: .phonemes("bOZ'uR"), voice: "fr", sourceStart: 0, sourceLength: 7)
        let whole = Utterance(text: "bonjour monde", segments: [ipa, segment(" monde", at: 7)], rate: 175, pitch: 50, volume: 100)
        #expect(same(whole.resuming(at: 3).segments, whole.segments))
    }
}
