extension IPAConverter {
    /// Hand-made equivalences, used only when the voice has no phoneme printed as the symbol on the
    /// left: (symbol people write, what eSpeak prints for the same sound in this voice).
    /// Each is a transcription convention, not a change of sound; docs/pronunciation.md justifies them.
    static func aliases(for language: String) -> [(String, String)] {
        var list: [(String, String)] = [
            // One rhotic per voice: whatever r people write, the voice's own r.
            ("ɫ", "l"), ("ʀ", "ʁ"), ("ɹ", "r"), ("r", "ɹ"), ("ʁ", "r"), ("ɾ", "r"), ("r", "ɾ"),
            ("ɡ", "g"), ("ɐ", "a"),
        ]
        switch language {
        case "fr":
            list += [("ʀ", "ʁ"), ("r", "ʁ"), ("ɾ", "ʁ"), ("ɥ", "y"), ("ɑ", "a"), ("ʁ", "r")]
        case "de":
            list += [("χ", "x"), ("ʁ", "r"), ("ɐ", "ɜ")]
        case "en":
            list += [("ɝ", "ɜː"), ("ɚ", "ɚ"), ("r", "ɹ")]
        default:
            break
        }
        return list
    }

    /// Equivalences applied even when the voice has a phoneme printed as the left symbol.
    static func overrides(for language: String) -> [(String, String)] {
        switch language {
        case "fr": return [("ʀ", "ʁ"), ("r", "ʁ")]
        default: return []
        }
    }
}
