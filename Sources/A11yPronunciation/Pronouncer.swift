// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Synchronization

/// The entry point of the pronunciation library: IPA conversion per voice (cached), planning
/// of text with spans or SSML into engine segments, and "what will eSpeak say" as IPA.
public final class Pronouncer: Sendable {
    public let engine: any PronunciationEngine
    private let converters = Mutex<[String: IPAConverter]>([:])

    public init(engine: any PronunciationEngine) {
        self.engine = engine
    }

    /// The converter for an eSpeak voice name ("fr", "en-us"), learnt once per voice from
    /// the engine's phoneme tables (for eSpeak about 1,200 `espeak_TextToPhonemes` calls, a few tens of ms).
    public func converter(voice: String) async throws -> IPAConverter {
        let key = voice.lowercased()
        if let cached = converters.withLock({ $0[key] }) { return cached }
        let inventory = try await engine.phonemeInventory(voice: voice)
        let all = try await engine.allMnemonics()
        let converter = IPAConverter(
            voice: voice, language: LanguageTag.base(voice), inventory: inventory, allMnemonics: all)
        converters.withLock { $0[key] = converter }
        return converter
    }

    /// IPA → the voice's mnemonics (`.phonemes` segment content). Throws `invalid_ipa`.
    public func mnemonics(forIPA ipa: String, voice: String) async throws -> String {
        try await converter(voice: voice).mnemonics(forIPA: ipa)
    }

    /// The IPA eSpeak will pronounce for `segments`, segment by segment as they are spoken
    /// (`espeak_TextToPhonemes` in IPA mode; `.phonemes` segments with `[[…]]` honoured, `.text`
    /// read literally). Segments are joined by " | "; a voice change is shown as "(voice) ".
    public func showIPA(_ segments: [SpeechSegment], annotated: Bool = true) async throws -> String {
        var pieces: [String] = []
        var voice: String?
        for segment in segments {
            var piece = ""
            if annotated, segment.voice.lowercased() != voice?.lowercased() {
                piece += "(\(segment.voice)) "
                voice = segment.voice
            }
            if annotated, segment.options.pauseBeforeMilliseconds > 0 {
                piece += "(\(segment.options.pauseBeforeMilliseconds) ms) "
            }
            piece += try await ipa(of: segment)
            pieces.append(piece)
        }
        return pieces.joined(separator: annotated ? " | " : " ")
    }

    /// The IPA of one segment as eSpeak will say it.
    public func ipa(of segment: SpeechSegment) async throws -> String {
        switch segment.content {
        case .phonemes(let mnemonics):
            return try await engine.ipa(ofMnemonics: mnemonics, voice: segment.voice)
        case .text(let text) where segment.options.spellOut:
            // Spelled: each character as eSpeak names it.
            var names: [String] = []
            for scalar in text.unicodeScalars where !scalar.properties.isWhitespace {
                names.append(try await engine.ipa(ofLetter: String(scalar), voice: segment.voice))
            }
            return names.joined(separator: " ")
        case .text(let text):
            return try await engine.ipa(ofText: text, voice: segment.voice)
        }
    }
}
