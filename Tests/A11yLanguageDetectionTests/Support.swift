// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yLanguageDetection
import A11yPronunciation
import Synchronization

/// A pronunciation engine whose voice for a language is "voice-" and its base code: the plan's
/// voices say which language each piece was given.
struct VoicePerLanguage: PronunciationEngine {
    func resolveVoice(language: String) async throws -> String { "voice-\(LanguageTag.base(language))" }
    func phonemeInventory(voice: String) async throws -> [PhonemeEntry] { [] }
    func allMnemonics() async throws -> [String] { [] }
    func ipa(ofText text: String, voice: String) async throws -> String { text }
    func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String { mnemonics }
    func ipa(ofLetter character: String, voice: String) async throws -> String { character }
}

/// The real detector, counting what it is asked.
final class CountingDetector: LanguageDetecting {
    let detector: LanguageDetector
    let asked = Mutex<[String]>([])
    init(languages: [String]) { detector = LanguageDetector(languages: languages) }
    func evidence(for text: String) -> LanguageEvidence? {
        asked.withLock { $0.append(text) }
        return detector.evidence(for: text)
    }
}

let fiveLanguages = ["fr", "en", "de", "es", "it"]

extension SpeechPlan {
    /// Each segment's voice and the text it stands for.
    var voicedPieces: [(voice: String, text: String)] {
        let scalars = Array(spokenText.unicodeScalars)
        return segments.map { ($0.voice, String(String.UnicodeScalarView(scalars[$0.sourceStart..<$0.sourceStart + $0.sourceLength]))) }
    }
}
