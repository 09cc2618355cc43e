import Foundation

/// The canonical form both the dictionary IPA and eSpeak's IPA are reduced to before comparing
/// (docs/pronunciation.md, "Benchmark canonicalisation"). Only transcription conventions are
/// erased, never a difference of sound that the language distinguishes.
struct Canon {
    let language: String

    /// Symbols written differently by the lexicon and by eSpeak for the same sound, per language.
    var equivalences: [String: String] {
        var map: [String: String] = ["g": "ɡ", "ɫ": "l"]
        switch language {
        case "fr": map["ʀ"] = "ʁ"; map["r"] = "ʁ"
        case "en": map["r"] = "ɹ"; map["ɝ"] = "ɜɹ"; map["ɚ"] = "əɹ"
        case "de": map["ʁ"] = "r"; map["χ"] = "x"; map["ɾ"] = "r"
        case "es": map["β"] = "b"; map["ð"] = "d"; map["ɣ"] = "ɡ"
        default: break
        }
        return map
    }

    /// Languages whose lexicon does not mark vowel length: length marks are not compared.
    var ignoresLength: Bool { ["fr", "en", "es", "it", "pt", "nl"].contains(language) }

    func apply(_ ipa: String, reference: String) -> String {
        let referenceHasStress = reference.contains("ˈ") || reference.contains("'")
        var out: [Unicode.Scalar] = []
        var pendingStress = false
        for s in ipa.decomposedStringWithCanonicalMapping.unicodeScalars {
            switch s {
            case ".", "\u{0361}", "\u{035C}", " ", "_", "-", "ˌ", ",", "²": continue
            case "ˈ", "'":
                if referenceHasStress { pendingStress = true }
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
        if language == "en" {
            // eSpeak's linking r after an r-coloured vowel (ɚ, ʊɹ…) before a vowel: English has no
            // geminate ɹ, so ɹɹ is one ɹ.
            while result.contains("ɹɹ") { result = result.replacingOccurrences(of: "ɹɹ", with: "ɹ") }
        }
        return result
    }

    static let vowels: Set<Unicode.Scalar> = Set("iyɨʉɯuɪʏʊeøɘɵɤoəɛœɜɞʌɔæɐaɶɑɒɚɝ".unicodeScalars)
}
