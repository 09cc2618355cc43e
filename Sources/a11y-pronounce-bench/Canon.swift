// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The canonical form both the dictionary IPA and eSpeak's IPA are reduced to before comparing
/// (docs/pronunciation.md, "Benchmark canonicalisation"). Only transcription conventions and
/// allophones the language does not distinguish are erased, never a contrast of the language.
struct Canon {
    let language: String

    /// Symbols written differently by the lexicon and by eSpeak for the same sound, per language.
    var equivalences: [String: String] {
        var map: [String: String] = ["g": "ɡ", "ɫ": "l"]
        switch language {
        case "fr": map["ʀ"] = "ʁ"; map["r"] = "ʁ"; map["ɥ"] = "y"
        case "en": map["r"] = "ɹ"; map["ɝ"] = "ɜɹ"; map["ɚ"] = "əɹ"
        case "de": map["ʁ"] = "r"; map["χ"] = "x"; map["ɾ"] = "r"; map["ɜ"] = "ɐ"; map["ʏ"] = "y"
        case "es": map["β"] = "b"; map["ð"] = "d"; map["ɣ"] = "ɡ"
        case "it": map["ɪ"] = "i"; map["ʊ"] = "u"
        case "nl": map["ɹ"] = "r"; map["ʏ"] = "ɵ"; map["ɱ"] = "m"
        case "cs": map["ɪ"] = "i"; map["ɦ"] = "h"; map["ʊ"] = "u"; map["ɱ"] = "m"
        case "sv": map["ʏ"] = "y"
        case "pt": map["æ"] = "ɐ"; map["ɹ"] = "r"
        default: break
        }
        return map
    }

    /// Sequences written differently for one sound (after `equivalences`).
    var sequences: [(String, String)] {
        switch language {
        case "de": return [("ɔø", "ɔy")]
        case "nl": return [("œːy", "œy"), ("œːɵ", "œy"), ("œɵ", "œy")]
        case "sv": return [("sx", "ɧ"), ("ʉʉ", "ʉː")]
        case "pt": return [("ɐ̃ʊ̃", "ɐ̃w"), ("õɪ̃", "õj"), ("j̃", "j"), ("w̃", "w")]
        default: return []
        }
    }

    /// Languages whose lexicon does not mark vowel length: length marks are not compared.
    var ignoresLength: Bool { ["fr", "en", "es", "it", "pt", "nl"].contains(language) }

    func apply(_ ipa: String, reference: String) -> String {
        let referenceHasStress = reference.contains("ˈ") || reference.contains("'")
        var out: [Unicode.Scalar] = []
        var pendingStress = false
        for s in ipa.decomposedStringWithCanonicalMapping.unicodeScalars {
            switch s {
            // Syllable dots, ties, the non-syllabic mark of a diphthong's glide (eSpeak never
            // prints it: its diphthongs are single phonemes), spaces, secondary stress, tone.
            case ".", "\u{0361}", "\u{035C}", "\u{032F}", " ", "_", "-", "ˌ", ",", "²": continue
            case "ˈ", "'":
                pendingStress = true
                continue
            case "ː", "ˑ", ":":
                if ignoresLength { continue }
                out.append("ː")
                continue
            default:
                break
            }
            let mapped = equivalences[String(s)].map { Array($0.unicodeScalars) } ?? [s]
            for m in mapped {
                if pendingStress, Self.vowels.contains(m) {
                    out.append("ˈ")
                    pendingStress = false
                }
                out.append(m)
            }
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: out)
        var result = String(view)
        for (from, to) in sequences { result = result.replacingOccurrences(of: from, with: to) }
        if language == "en" {
            // eSpeak's linking r after an r-coloured vowel (ɚ, ʊɹ…) before a vowel: English has no
            // geminate ɹ, so ɹɹ is one ɹ.
            while result.contains("ɹɹ") { result = result.replacingOccurrences(of: "ɹɹ", with: "ɹ") }
        }
        if language == "it" {
            // Italian opposes ɛ/e and ɔ/o only under stress: unstressed, only e and o exist (each
            // side's own stress decides; eSpeak says ɛ ɔ only under stress).
            var scalars = Array(result.unicodeScalars)
            for i in scalars.indices where (scalars[i] == "ɛ" || scalars[i] == "ɔ") && (i == 0 || scalars[i - 1] != "ˈ") {
                scalars[i] = scalars[i] == "ɛ" ? "e" : "o"
            }
            var v = String.UnicodeScalarView()
            v.append(contentsOf: scalars)
            result = String(v)
        }
        if !referenceHasStress { result = result.replacingOccurrences(of: "ˈ", with: "") }
        // Foundation's replacements may recompose (õ): compare decomposed scalars.
        return result.decomposedStringWithCanonicalMapping
    }

    static let vowels: Set<Unicode.Scalar> = Set("iyɨʉɯuɪʏʊeøɘɵɤoəɛœɜɞʌɔæɐaɶɑɒɚɝ".unicodeScalars)
}
