// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yCore
import A11yTestSupport
import Testing

/// What `SpeechMemory` keeps of short utterances said, and what it lets go, row by row.
@Suite struct SpeechMemoryTests {
    func utterance(_ text: String, rate: Int = 175) -> Utterance {
        Utterance(
            segments: [SpeechSegment(content: .text(text), voice: "fr", sourceStart: 0, sourceLength: text.unicodeScalars.count)],
            rate: rate, pitch: 50, volume: 100)
    }

    /// `samples` samples of `value`, in two chunks, the second with a word and a mark.
    func said(_ value: Int16, samples: Int = 10) -> [SynthesisChunk] {
        [
            SynthesisChunk(samples: Array(repeating: value, count: samples / 2), words: [WordMark(frame: 0, start: 0, length: 1)]),
            SynthesisChunk(
                samples: Array(repeating: value, count: samples - samples / 2),
                marks: [NamedMark(frame: samples / 2, name: "m")]),
        ]
    }

    /// 20 bytes per utterance of `said`'s default: room for three.
    let small = SpeechMemory.Limits(samplesPerUtterance: 100, bytes: 60)

    @Test func whatWasSaidIsRecalledWholeAndNothingElse() {
        var memory = SpeechMemory(limits: small)
        #expect(memory.recall(utterance("a")) == nil)
        memory.remember(said(1), of: utterance("a"))
        #expect(same(memory.recall(utterance("a")), said(1)), "samples, words and marks")
        #expect(memory.recall(utterance("b")) == nil)
        #expect(memory.recall(utterance("a", rate: 176)) == nil, "another rate is another utterance")
        #expect(memory.bytes == 20 && memory.count == 1)
    }

    @Test func theLeastRecentlySaidGoFirstToMakeRoom() {
        var memory = SpeechMemory(limits: small)
        memory.remember(said(1), of: utterance("a"))
        memory.remember(said(2), of: utterance("b"))
        memory.remember(said(3), of: utterance("c"))
        #expect(same(memory.bytes, 60))
        _ = memory.recall(utterance("a"))  // "a" is now the most recently said; "b" the least
        memory.remember(said(4), of: utterance("d"))
        #expect(memory.recall(utterance("b")) == nil)
        #expect(same(memory.recall(utterance("a")), said(1)))
        #expect(same(memory.recall(utterance("c")), said(3)))
        #expect(same(memory.recall(utterance("d")), said(4)))
        #expect(memory.bytes == 60 && memory.count == 3)
        // A larger one takes as many as it needs.
        memory.remember(said(5, samples: 30), of: utterance("e"))
        #expect(memory.count == 1 && memory.bytes == 60)
    }

    @Test func sayingAgainReplacesWhatWasKept() {
        var memory = SpeechMemory(limits: small)
        memory.remember(said(1), of: utterance("a"))
        memory.remember(said(7, samples: 20), of: utterance("a"))
        #expect(same(memory.recall(utterance("a")), said(7, samples: 20)))
        #expect(memory.bytes == 40 && memory.count == 1)
    }

    @Test func tooLongIsNeverKept() {
        var memory = SpeechMemory(limits: small)
        memory.remember(said(1), of: utterance("a"))
        memory.remember(said(2, samples: 101), of: utterance("b"))
        #expect(memory.recall(utterance("b")) == nil, "longer than an utterance may be")
        // Short enough, but more than the whole memory: kept neither, and nothing else goes for it.
        var tight = SpeechMemory(limits: .init(samplesPerUtterance: 100, bytes: 30))
        tight.remember(said(1), of: utterance("a"))
        tight.remember(said(2, samples: 16), of: utterance("b"))
        #expect(tight.recall(utterance("b")) == nil)
        #expect(same(tight.recall(utterance("a")), said(1)))
        #expect(same(memory.recall(utterance("a")), said(1)))
    }

    @Test func onlyShortTextsMayBeKeptAndNothingWithoutRoom() {
        let memory = SpeechMemory(limits: small)
        #expect(memory.mayKeep(utterance("a")))
        #expect(memory.mayKeep(utterance(String(repeating: "é", count: SpeechMemory.longestText))))
        #expect(!memory.mayKeep(utterance(String(repeating: "é", count: SpeechMemory.longestText + 1))))
        #expect(!SpeechMemory(limits: .init(samplesPerUtterance: 0, bytes: 60)).mayKeep(utterance("a")))
    }

    @Test func forgettingDropsEverything() {
        var memory = SpeechMemory(limits: small)
        memory.remember(said(1), of: utterance("a"))
        memory.remember(said(2), of: utterance("b"))
        memory.forgetAll()
        #expect(memory.recall(utterance("a")) == nil && memory.recall(utterance("b")) == nil)
        #expect(memory.bytes == 0 && memory.count == 0)
    }

    /// Two seconds per utterance; a sample rate no server would give does not trap.
    @Test func standardLimits() {
        #expect(same(SpeechMemory.Limits.standard(sampleRate: 22_050), .init(samplesPerUtterance: 44_100, bytes: 1 << 20)))
        #expect(same(SpeechMemory.Limits.standard(sampleRate: .max).samplesPerUtterance, 0))
        #expect(same(SpeechMemory.Limits.standard(sampleRate: -5).samplesPerUtterance, 0))
    }
}
