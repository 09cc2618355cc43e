// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

extension IPAConverter {
    /// A piece of a converted word.
    enum Unit: Equatable {
        case stress(primary: Bool)
        case phoneme(mnemonic: String, vowel: Bool)
    }

    /// Narrow-transcription diacritics that no eSpeak voice distinguishes: dropped when the voice
    /// has no phoneme spelled with them (non-syllabic, syllabic, aspiration, unreleased, advanced,
    /// retracted, raised, lowered, more/less rounded, extra-short, dental, voiceless ring).
    static let droppableMarks: Set<Unicode.Scalar> = [
        "\u{032F}", "\u{0311}", "\u{0329}", "\u{030D}", "\u{02B0}", "\u{031A}", "\u{031F}", "\u{0320}",
        "\u{031D}", "\u{031E}", "\u{0339}", "\u{031C}", "\u{0306}", "\u{032A}", "\u{0325}", "\u{030A}",
        "\u{0318}", "\u{0319}", long, halfLong,
    ]

    /// Longest match of normalised scalars against the table; stress marks become units of their own.
    func segment(_ word: [IPAScalar]) throws -> [Unit] {
        var units: [Unit] = []
        var i = 0
        let n = word.count
        while i < n {
            let s = word[i].scalar
            if s == Self.primaryStress || s == Self.secondaryStress {
                units.append(.stress(primary: s == Self.primaryStress))
                i += 1
                continue
            }
            var matched = false
            var length = min(longestKey, n - i)
            while length > 0 {
                let piece = word[i..<i + length]
                if !piece.contains(where: { $0.scalar == Self.primaryStress || $0.scalar == Self.secondaryStress }),
                   !splitsLongGlide(word, i, length) {
                    var key = String.UnicodeScalarView()
                    key.append(contentsOf: piece.map(\.scalar))
                    let text = String(key)
                    if let mnemonic = table[text] ?? table[text + String(Self.long)] ?? lengthless[text] {
                        units.append(.phoneme(mnemonic: mnemonic, vowel: Self.isVowel(text)))
                        i += length
                        matched = true
                        break
                    }
                }
                length -= 1
            }
            if matched { continue }
            // A nasalised glide after a nasal vowel (Portuguese ẽj̃, ɐ̃w̃): the nasality spreads from
            // the vowel by itself, so the glide's tilde adds nothing the voice can say otherwise.
            if s == "\u{0303}", i >= 2, word[i - 1].scalar == "j" || word[i - 1].scalar == "w",
                word[i - 2].scalar == "\u{0303}" {
                i += 1
                continue
            }
            if Self.droppableMarks.contains(s) {
                i += 1
                continue
            }
            if s == "\u{00B2}" || s == "\u{00B9}" {
                // Swedish/Norwegian word accents (²'anden): no eSpeak 1.51 voice has tonal accents.
                throw SpeechError(
                    .invalidIPA,
                    "voice '\(voice)' has no tonal word accent '\(Character(s))' at position \(word[i].position)")
            }
            throw SpeechError(
                .invalidIPA,
                "voice '\(voice)' has no sound for '\(Character(s))' (U+\(String(s.value, radix: 16, uppercase: true))) at position \(word[i].position)")
        }
        return units
    }

    /// Whether `word[start..<start + length]` would take a long vowel as the glide of a diphthong:
    /// Czech "auː" (saúdský) is a then a long ú, as eSpeak reads it, not its diphthong aʊ.
    func splitsLongGlide(_ word: [IPAScalar], _ start: Int, _ length: Int) -> Bool {
        let end = start + length
        guard end < word.count, word[end].scalar == Self.long || word[end].scalar == Self.halfLong else { return false }
        return word[start..<end].filter { Self.vowelLetters.contains($0.scalar) }.count >= 2
    }

    static func isVowel(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first else { return false }
        return vowelLetters.contains(first)
            || key.unicodeScalars.contains("\u{0329}") || key.unicodeScalars.contains("\u{030D}")
    }

    /// Languages whose words carry stress eSpeak needs: when a word has no primary stress at all,
    /// one is given to its last vowel (French), its penultimate vowel, or its first vowel.
    enum DefaultStress { case last, penultimate, first, none }

    static func defaultStress(for language: String) -> DefaultStress {
        switch language {
        case "fr": return .last
        case "es", "it", "pt", "pl", "ca", "gl", "ro", "ru", "uk", "be", "bg", "el", "sw": return .penultimate
        case "cs", "sk", "fi", "hu", "is", "lv", "et", "de", "nl", "sv", "da", "nb", "no", "en", "af", "lb": return .first
        default: return .none
        }
    }

    func applyDefaultStress(_ units: [Unit]) -> [Unit] {
        if units.contains(.stress(primary: true)) { return units }
        let vowels = units.indices.filter { if case .phoneme(_, true) = units[$0] { return true } else { return false } }
        guard !vowels.isEmpty else { return units }
        let target: Int
        switch Self.defaultStress(for: language) {
        case .none: return units
        case .last: target = vowels[vowels.count - 1]
        case .first: target = vowels[0]
        case .penultimate: target = vowels.count >= 2 ? vowels[vowels.count - 2] : vowels[0]
        }
        var result = units
        // A secondary stress already on that vowel is promoted.
        if target > 0, result[target - 1] == .stress(primary: false) {
            result[target - 1] = .stress(primary: true)
        } else {
            result.insert(.stress(primary: true), at: target)
        }
        return result
    }

    /// Writes units as mnemonics: each stress mark moved from where it stood (syllable start)
    /// onto the next vowel, `|` between two mnemonics that eSpeak would otherwise read as one.
    func render(_ units: [Unit]) -> String {
        var out = ""
        var pending: Bool?
        var previous: String?
        for unit in units {
            switch unit {
            case .stress(let primary):
                pending = (pending ?? false) || primary
            case .phoneme(let mnemonic, let vowel):
                if vowel, let primary = pending {
                    out += primary ? "'" : ","
                    pending = nil
                    previous = nil
                }
                if let previous, needsSeparator(previous, mnemonic) { out += "|" }
                out += mnemonic
                previous = mnemonic
            }
        }
        return out
    }

    /// Whether `a` followed by `b` could be read by eSpeak as a longer mnemonic starting with `a`.
    func needsSeparator(_ a: String, _ b: String) -> Bool {
        guard let next = b.first else { return false }
        let prefix = a + String(next)
        return parseable.contains { $0.count > a.count && $0.hasPrefix(prefix) }
    }
}
