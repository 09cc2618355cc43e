// SPDX-License-Identifier: GPL-3.0-or-later

/// Languages as a11yd compares them, whatever their source: a BCP 47 tag (`en-GB`), a POSIX locale
/// (`fr_FR.UTF-8@euro`) or an eSpeak voice name (`fr-be`). The one place such text is read; every
/// edge that takes a language (a post's `lang`, SSIP's `SET LANGUAGE`, a lexicon entry, a voice's
/// description, the configuration) compares what these give.
public enum LanguageTag {
    /// Lower case, `-` between its parts, without a locale's codeset or modifier, trimmed:
    /// "fr_FR.UTF-8@euro" → "fr-fr". Nil when nothing is left.
    public static func normalized(_ text: String) -> String? {
        var tag = Substring(text.trimmed)
        if let at = tag.firstIndex(of: "@") { tag = tag[..<at] }
        if let dot = tag.firstIndex(of: ".") { tag = tag[..<dot] }
        let normalized = String(tag.lowercased().map { $0 == "_" ? "-" : $0 })
        return normalized.isEmpty ? nil : normalized
    }

    /// The language alone, without region or variant: "en-GB" → "en", "fr_FR.UTF-8" → "fr"; "" for
    /// a blank one.
    public static func base(_ text: String) -> String {
        String(normalized(text)?.split(separator: "-").first ?? "")
    }
}
