// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
// The standard library's own canonical decomposition (its Unicode data), without Foundation's.
@_spi(_Unicode) import Swift

/// One scalar of normalised IPA with the position (Unicode scalars, from 0) of the symbol of
/// the client's IPA it comes from, so errors can point at it.
struct IPAScalar: Sendable, Equatable {
    var scalar: Unicode.Scalar
    var position: Int
}

extension IPAConverter {
    static let primaryStress: Unicode.Scalar = "\u{02C8}"   // ˈ
    static let secondaryStress: Unicode.Scalar = "\u{02CC}" // ˌ
    static let long: Unicode.Scalar = "\u{02D0}"            // ː
    static let halfLong: Unicode.Scalar = "\u{02D1}"        // ˑ

    /// Scalars dropped everywhere: syllable dots, tie bars (above and below), the undertie
    /// linking words, zero-width joiners, and the intonation/foot bars.
    static let dropped: Set<Unicode.Scalar> = [".", "\u{0361}", "\u{035C}", "\u{203F}", "\u{200D}", "|", "\u{2016}"]

    /// ASCII stand-ins people type for IPA symbols.
    static let asciiEquivalents: [Unicode.Scalar: Unicode.Scalar] = [
        ":": long, "'": primaryStress, "\u{2019}": primaryStress, "g": "\u{0261}",
    ]

    /// The IPA vowels (base letters); a unit is a vowel when its first scalar is one of these.
    static let vowelLetters: Set<Unicode.Scalar> = Set(
        "iyɨʉɯuɪʏʊeøɘɵɤoəɛœɜɞʌɔæɐaɶɑɒɚɝᵻᵿ".unicodeScalars)

    /// The key form of an IPA string: NFD, dots and ties removed, ASCII stand-ins replaced, no
    /// stress marks (stress is carried separately).
    static func normalizeKey(_ ipa: String) -> String {
        var scalars = String.UnicodeScalarView()
        for s in ipa._nfd {
            let m = asciiEquivalents[s] ?? s
            if dropped.contains(m) || m == primaryStress || m == secondaryStress || m.properties.isWhitespace { continue }
            scalars.append(m)
        }
        return String(scalars)
    }

    /// Splits client IPA into words of normalised scalars (NFD, dots and ties removed, ASCII
    /// stand-ins replaced), keeping each scalar's original position.
    static func normalize(_ ipa: String) throws -> [[IPAScalar]] {
        var words: [[IPAScalar]] = [[]]
        for (position, original) in ipa.unicodeScalars.enumerated() {
            if original.properties.isWhitespace {
                if !words[words.count - 1].isEmpty { words.append([]) }
                continue
            }
            for s in String(original)._nfd {
                if dropped.contains(s) { continue }
                if s == "[" || s == "]" || s == "/" {
                    throw SpeechError(.invalidIPA, "'\(s)' at position \(position): give the IPA without brackets or slashes")
                }
                words[words.count - 1].append(IPAScalar(scalar: asciiEquivalents[s] ?? s, position: position))
            }
        }
        return words.filter { !$0.isEmpty }
    }
}
