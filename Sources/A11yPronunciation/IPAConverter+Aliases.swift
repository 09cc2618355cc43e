// SPDX-License-Identifier: GPL-3.0-or-later
extension IPAConverter {
    /// Hand-made equivalences, used only when the voice has no phoneme printed as the symbol on the
    /// left: (symbol people write, what eSpeak prints for the same sound in this voice).
    /// Each is a transcription convention, not a change of sound; docs/pronunciation.md justifies them.
    /// The language's own list comes first: it wins over the generic one.
    static func aliases(for language: String) -> [(String, String)] {
        var list: [(String, String)] = []
        switch language {
        case "fr":
            list += [("ʀ", "ʁ"), ("r", "ʁ"), ("ɾ", "ʁ"), ("ɥ", "y"), ("ɑ", "a"), ("ʁ", "r")]
        case "de":
            // eSpeak's German writes the vocalised -er vowel ɜ (mnemonic 3), the short ü y (its
            // long one is yː), the eu/äu diphthong ɔø.
            list += [("χ", "x"), ("ʁ", "r"), ("ɐ", "ɜ"), ("ʏ", "y"), ("ɔʏ", "ɔø"), ("ɔy", "ɔø")]
        case "en":
            list += [("ɝ", "ɜː"), ("ɚ", "ɚ"), ("r", "ɹ")]
        case "nl":
            // eSpeak's Dutch writes the short u of "hut" ɵ, the ui diphthong œy; ɱ is /m/
            // assimilated before f/v (eSpeak assimilates by itself). Long ʏː is eu before r
            // (zeurde, deur), an allophone of /øː/: eSpeak's Y:, printed øː.
            list += [("ʏː", "øː"), ("ʏ", "ɵ"), ("œːy", "œy"), ("œːʏ", "œy"), ("œʏ", "œy"), ("ɱ", "m"), ("ɹ", "r")]
        case "cs":
            // Czech short i is said [ɪ] (eSpeak writes i); Czech h is the voiced [ɦ] (eSpeak writes h);
            // the diphthongs ou, au, eu are eSpeak's oʊ, aʊ, eʊ.
            list += [("ɪ", "i"), ("ɦ", "h"), ("ou", "oʊ"), ("au", "aʊ"), ("eu", "eʊ"), ("ɱ", "m")]
        case "sv":
            // Swedish short y is [ʏ] (eSpeak: y); eSpeak's Swedish writes the sj-sound ɧ as sx.
            // Its long ʉ (mnemonic u-:) prints ʉʉ.
            list += [("ʏ", "y"), ("ɧ", "sx"), ("ʉː", "ʉʉ")]
        case "pt":
            // eSpeak 1.51's Portuguese prints its reduced a (`&`, the last vowel of "casa") as æ:
            // that phoneme is the ɐ people write (1.52 prints it ɐ). Nasal diphthongs: its ɐ̃ʊ̃, õɪ̃.
            list += [("ɐ", "æ"), ("ɐ̃w̃", "ɐ̃ʊ̃"), ("ɐ̃w", "ɐ̃ʊ̃"), ("õj̃", "õɪ̃"), ("õj", "õɪ̃")]
        default:
            break
        }
        list += [
            // One rhotic per voice: whatever r people write, the voice's own r.
            ("ɫ", "l"), ("ʀ", "ʁ"), ("ɹ", "r"), ("r", "ɹ"), ("ʁ", "r"), ("ɾ", "r"), ("r", "ɾ"),
            ("ɡ", "g"), ("ɐ", "a"),
        ]
        return list
    }

    /// Equivalences applied even when the voice has a phoneme printed as the left symbol.
    static func overrides(for language: String) -> [(String, String)] {
        switch language {
        case "fr": return [("ʀ", "ʁ"), ("r", "ʁ")]
        default: return []
        }
    }

    /// The ways people write the glide of a diphthong the voice prints as `key` (two vowels):
    /// with the non-syllabic mark, on the voice's glide letter or the tense one (aʊ̯, au̯; aɪ̯, ai̯).
    /// Without the mark, "au" stays two vowels (a hiatus in Spanish or Italian).
    static func diphthongSpellings(of key: String) -> [String] {
        let scalars = Array(key.unicodeScalars)
        guard scalars.count == 2, vowelLetters.contains(scalars[0]), vowelLetters.contains(scalars[1]) else { return [] }
        let nonSyllabic = "\u{032F}"
        var glides = [String(scalars[1])]
        switch scalars[1] {
        case "ʊ": glides.append("u")
        case "ɪ": glides.append("i")
        case "ø": glides.append("ʏ")
        default: break
        }
        var result: [String] = []
        for glide in glides { result.append(String(scalars[0]) + glide + nonSyllabic) }
        return result
    }
}
