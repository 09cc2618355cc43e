// SPDX-License-Identifier: GPL-3.0-or-later
/// The words of SSML a11yd's translator refused, so that the message is still said.
enum SSMLText {
    /// `markup` without its tags, with the five XML entities decoded.
    static func plainText(_ markup: String) -> String {
        var text = ""
        var inTag = false
        for character in markup {
            switch character {
            case "<": inTag = true
            case ">" where inTag:
                inTag = false
                text.append(" ")
            default:
                if !inTag { text.append(character) }
            }
        }
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&amp;", "&")] {
            text = text.replacing(entity, with: character)
        }
        return text.trimmed
    }
}
