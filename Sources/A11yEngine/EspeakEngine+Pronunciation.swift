// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// eSpeak-NG as the pronouncer sees it: its phoneme tables and `espeak_TextToPhonemes`.
extension EspeakEngine: PronunciationEngine {
    /// Every phoneme `voice` can say, learnt from eSpeak's own data: each mnemonic of the compiled
    /// phoneme tables that the voice parses as a single phoneme, with the IPA eSpeak prints for it.
    public func phonemeInventory(voice: String) async throws -> [PhonemeEntry] {
        try await worker.run { session in try session.phonemeInventory(voice: voice) }
    }

    /// Every mnemonic of eSpeak's compiled phoneme tables, all languages.
    public func allMnemonics() async throws -> [String] {
        try await worker.run { session in try session.allMnemonics() }
    }

    public func ipa(ofText text: String, voice: String) async throws -> String {
        try await phonemes(for: text, voice: voice, ipa: true, phonemeInput: false)
    }

    public func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String {
        try await phonemes(for: "[[" + mnemonics + "]]", voice: voice, ipa: true, phonemeInput: true)
    }

    /// eSpeak's letter-name rules are reached by the `_` prefix its dictionaries use ("_a").
    public func ipa(ofLetter character: String, voice: String) async throws -> String {
        try await worker.run { session in try session.letterIPA(character, voice: voice) }
    }
}

/// The same look-ups for a thread that may block and has nothing else to do meanwhile: the engine
/// worker's main thread, where the sandbox allows no new thread (so no Swift concurrency pool).
/// Each waits for eSpeak's thread to answer.
extension EspeakEngine {
    public func voiceEntriesWaiting() throws -> [VoiceEntry] {
        try worker.runAndWait { session in try session.voices() }
    }

    public func phonemeInventoryWaiting(voice: String) throws -> [PhonemeEntry] {
        try worker.runAndWait { session in try session.phonemeInventory(voice: voice) }
    }

    public func allMnemonicsWaiting() throws -> [String] {
        try worker.runAndWait { session in try session.allMnemonics() }
    }

    public func ipaWaiting(ofText text: String, voice: String) throws -> String {
        try worker.runAndWait { session in
            try session.textToPhonemes(text, voice: voice, ipa: true, separator: nil, phonemeInput: false)
        }
    }

    public func ipaWaiting(ofMnemonics mnemonics: String, voice: String) throws -> String {
        try worker.runAndWait { session in
            try session.textToPhonemes("[[" + mnemonics + "]]", voice: voice, ipa: true, separator: nil, phonemeInput: true)
        }
    }

    public func ipaWaiting(ofLetter character: String, voice: String) throws -> String {
        try worker.runAndWait { session in try session.letterIPA(character, voice: voice) }
    }
}
