// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Testing

@testable import A11yEngineWorker

/// Punctuation spoken by name on the natural voice (issue 27: "spell-out and punctuation as eSpeak
/// does them"): piper-tts's eSpeak cannot name it, so the router says each name as IPA, where the
/// character stands in the client's text.
struct PiperPunctuationTests {
    static func segment(_ text: String, at start: Int = 10, punctuation: Bool = true, pause: Int = 0, mark: String? = nil) -> SpeechSegment {
        SpeechSegment(
            content: .text(text), voice: "piper:en_US-joe-medium", sourceStart: start, sourceLength: text.unicodeScalars.count,
            options: .init(punctuation: punctuation, pauseBeforeMilliseconds: pause, markBefore: mark))
    }

    static let names: [Character: String] = [",": "kˈɑːmə", "!": "ɛkskləmˈeɪʃən", "€": "jˈʊɹoʊ", "-": "dˈæʃ"]

    /// (content, sourceStart, sourceLength) of each part.
    static func parts(_ segment: SpeechSegment) -> [String] {
        EngineRouter.punctuationSaid(in: segment, espeakVoice: "en-us") { names[$0] ?? "" }.map { part in
            let content: String
            switch part.content {
            case .text(let text): content = part.voice == "en-us" ? "espeak(\(text))" : "text(\(text))"
            case .phonemes(let ipa): content = "ipa(\(ipa))"
            }
            return "\(content)@\(part.sourceStart)+\(part.sourceLength)"
        }
    }

    @Test func eachNamedCharacterBecomesItsNameWhereItStands() {
        #expect(Self.parts(Self.segment("hi, you!")) == ["text(hi)@10+2", "ipa(kˈɑːmə)@12+1", "text( you)@13+4", "ipa(ɛkskləmˈeɪʃən)@17+1"])
    }

    @Test func symbolsAreNamedAndOffsetsCountScalars() {
        #expect(Self.parts(Self.segment("é 5€")) == ["text(é 5)@10+3", "ipa(jˈʊɹoʊ)@13+1"])
    }

    /// eSpeak names `,` `.` `;`… only while it speaks: it says them itself, its punctuation spoken.
    @Test func aCharacterWithoutANameInTheDictionaryIsSaidByESpeak() {
        #expect(Self.parts(Self.segment("a ; b")) == ["text(a )@10+2", "espeak(;)@12+1", "text( b)@13+2"])
        let parts = EngineRouter.punctuationSaid(in: Self.segment(";"), espeakVoice: "en-us") { _ in "" }
        #expect(parts.map(\.options.punctuation) == [true], "eSpeak speaks it with its punctuation named")
    }

    @Test func onlyTheFirstPartKeepsThePauseAndTheMark() {
        let parts = EngineRouter.punctuationSaid(in: Self.segment(", ok", pause: 200, mark: "m"), espeakVoice: "en-us") { Self.names[$0] ?? "" }
        #expect(parts.map(\.options.pauseBeforeMilliseconds) == [200, 0])
        #expect(parts.map(\.options.markBefore) == ["m", nil])
        #expect(parts.allSatisfy { !$0.options.punctuation && $0.voice.hasPrefix("piper:") }, "Piper is not asked for what it cannot do")
    }

    @Test func otherSegmentsAreLeftAsTheyAre() {
        let plain = Self.segment("hi, you!", punctuation: false)
        #expect(EngineRouter.punctuationSaid(in: plain, espeakVoice: "en-us") { Self.names[$0] ?? "" } == [plain])
        var spelled = Self.segment("a,b")
        spelled.options.spellOut = true
        #expect(EngineRouter.namedPunctuation(in: spelled).isEmpty, "spell-out names its characters itself")
    }
}
