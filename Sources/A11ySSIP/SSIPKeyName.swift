// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// What `KEY` says for a key name of the SSIP manual ("shift_a", "control_alt_delete", "kp-enter").
enum SSIPKeyName {
    /// The words to say, with single characters spelled (so "a" is the letter, not the article).
    static func utterance(_ name: String) -> (text: String, spans: [SpeechSpan]) {
        // Prefixes are auxiliary keys joined by "_"; a lone "_" can only be the key itself.
        let parts = name == "_" ? ["_"] : name.split(separator: "_", omittingEmptySubsequences: true).map(String.init)
        var text = ""
        var spans: [SpeechSpan] = []
        for part in parts {
            if !text.isEmpty { text += " " }
            let (words, spelled) = say(part)
            if spelled {
                spans.append(SpeechSpan(start: text.unicodeScalars.count, length: words.unicodeScalars.count, spellOut: true))
            }
            text += words
        }
        return (text, spans)
    }

    /// One part: its words, and whether they are to be spelled.
    private static func say(_ part: String) -> (String, Bool) {
        if part.count == 1 { return (part, true) }
        switch part {
        case "double-quote": return ("\"", true)
        case "underscore": return ("_", true)
        case "kp-enter": return ("keypad enter", false)
        case "num-lock": return ("num lock", false)
        case "scroll-lock": return ("scroll lock", false)
        case "prior": return ("page up", false)
        case "next": return ("page down", false)
        default:
            if part.hasPrefix("kp-"), part.count == 4 { return ("keypad " + part.dropFirst(3), false) }
            return (part, false)
        }
    }
}
