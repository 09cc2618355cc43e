// SPDX-License-Identifier: GPL-3.0-or-later
/// The phoneme facts the pronouncer (A11yPronunciation) needs from a speech engine, and nothing
/// else: here, beside `SpeechEngine`, so that an engine implements both without depending on the
/// pronouncer. `EspeakEngine` implements it; test fakes can too. Voice names are the engine's own
/// ("fr", "en-us"), as in `SpeechSegment.voice`.
public protocol PronunciationEngine: VoiceResolving {
    /// Every phoneme `voice` can say: its mnemonic (what `.phonemes` segments take) and its IPA.
    /// The IPA converter of the voice is learnt from this.
    func phonemeInventory(voice: String) async throws -> [PhonemeEntry]

    /// Every mnemonic the engine knows, all languages: where the converter needs a `|` between two.
    func allMnemonics() async throws -> [String]

    /// The IPA the engine says for `text`, read literally (no markup).
    func ipa(ofText text: String, voice: String) async throws -> String

    /// The IPA the engine says for `.phonemes(mnemonics)` content.
    func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String

    /// The IPA of a character's name as the engine spells it (spell-out segments).
    func ipa(ofLetter character: String, voice: String) async throws -> String
}

/// One phoneme of a voice: the engine's mnemonic (what `.phonemes` segments take) and its IPA.
public struct PhonemeEntry: Sendable, Equatable, Hashable {
    public var mnemonic: String
    public var ipa: String
    /// The engine keeps it unchanged between vowels (no contextual substitution or insertion).
    public var stable: Bool
    public init(mnemonic: String, ipa: String, stable: Bool = true) {
        self.mnemonic = mnemonic
        self.ipa = ipa
        self.stable = stable
    }
}
