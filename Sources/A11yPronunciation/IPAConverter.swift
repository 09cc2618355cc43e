// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// IPA → eSpeak phoneme mnemonics for one voice.
///
/// The table comes from eSpeak's own data for the voice (`PronunciationEngine.phonemeInventory`:
/// each mnemonic with the IPA eSpeak prints for it), plus the few hand-made equivalences of
/// `IPAConverter.aliases` for symbols a voice lacks but has a near-identical phoneme for.
/// See docs/pronunciation.md for every rule.
public struct IPAConverter: Sendable {
    /// The eSpeak voice this converter writes for.
    public let voice: String
    /// The voice's base language ("fr", "en", "de"), for language rules (default stress, aliases).
    public let language: String
    /// Normalised IPA (see `normalizeKey`) → mnemonic.
    let table: [String: String]
    /// Fallback keys without length marks (`ɑɹ` for eSpeak's `ɑːɹ`): used when a piece of the
    /// client's IPA has no exact key, for lexicons that do not write length (en-us r-coloured vowels).
    let lengthless: [String: String]
    /// The longest key, in Unicode scalars.
    let longestKey: Int
    /// Every mnemonic the voice parses, to decide where a `|` separator is needed.
    let parseable: Set<String>

    /// Builds a converter from a voice's phoneme inventory (mnemonic + IPA pairs).
    public init(voice: String, language: String, inventory: [PhonemeEntry], allMnemonics: [String] = []) {
        self.voice = voice
        self.language = language
        var table: [String: String] = [:]
        var chosen: [String: PhonemeEntry] = [:]
        // Several mnemonics may print the same IPA: prefer one eSpeak keeps unchanged between
        // vowels (`stable`), then the shortest, then ASCII order (deterministic).
        for entry in inventory {
            let key = Self.normalizeKey(entry.ipa)
            guard !key.isEmpty else { continue }
            if let existing = chosen[key] {
                let better = (entry.stable ? 0 : 1, entry.mnemonic.count, entry.mnemonic)
                    < (existing.stable ? 0 : 1, existing.mnemonic.count, existing.mnemonic)
                if better { chosen[key] = entry; table[key] = entry.mnemonic }
            } else {
                chosen[key] = entry
                table[key] = entry.mnemonic
            }
        }
        for (from, to) in Self.aliases(for: language) where table[from] == nil {
            if let mnemonic = table[to] { table[from] = mnemonic }
        }
        // Diphthongs written with a non-syllabic glide (aʊ̯, au̯) or a tense glide letter (au):
        // the voice's diphthong, when it has one and no phoneme is printed so.
        for (key, mnemonic) in table.sorted(by: { $0.key < $1.key }) {
            for spelling in Self.diphthongSpellings(of: key) where table[spelling] == nil {
                table[spelling] = mnemonic
            }
        }
        // Conventions that must win even when the voice has the symbol (French: ʀ and r are
        // how people write the French r; eSpeak's `r"` is a trill nobody means).
        for (from, to) in Self.overrides(for: language) {
            if let mnemonic = table[to] { table[from] = mnemonic }
        }
        self.table = table
        var lengthless: [String: String] = [:]
        for key in table.keys.sorted(by: { ($0.unicodeScalars.count, $0) < ($1.unicodeScalars.count, $1) }) {
            let stripped = String(String.UnicodeScalarView(key.unicodeScalars.filter { $0 != Self.long }))
            if stripped != key, !stripped.isEmpty, table[stripped] == nil, lengthless[stripped] == nil {
                lengthless[stripped] = table[key]
            }
        }
        self.lengthless = lengthless
        self.longestKey = table.keys.map { $0.unicodeScalars.count }.max() ?? 1
        self.parseable = Set(inventory.map(\.mnemonic)).union(allMnemonics)
    }

    /// Whether the voice has a phoneme printed as `ipa`.
    public func knows(_ ipa: String) -> Bool { table[Self.normalizeKey(ipa)] != nil }

    /// The mnemonics (what goes inside `[[…]]`) for `ipa`.
    /// - Throws: `SpeechError(.invalidIPA)` naming the first symbol the voice cannot say and its
    ///   position (in Unicode scalars of `ipa`, from 0).
    public func mnemonics(forIPA ipa: String) throws -> String {
        let words = try Self.normalize(ipa)
        var out: [String] = []
        for word in words {
            let units = try segment(word)
            out.append(render(applyDefaultStress(units)))
        }
        let result = out.filter { !$0.isEmpty }.joined(separator: " ")
        if result.isEmpty {
            throw SpeechError(.invalidIPA, "the IPA '\(ipa)' holds no sound")
        }
        return result
    }
}
