// SPDX-License-Identifier: GPL-3.0-or-later
/// One pronunciation the user keeps: the written forms it replaces and what to say instead.
///
/// A PLS `<lexeme>`: one or more graphemes, an IPA `<phoneme>` or an `<alias>`, the language of
/// the voices it applies to (`xml:lang` of the lexeme, else of its lexicon) and whether case
/// matters (`a11yd:case-sensitive`, default no). docs/pronunciation.md, "Lexicon", has the rules.
public struct LexiconEntry: Sendable, Hashable, CustomStringConvertible {
    public enum Pronunciation: Sendable, Hashable {
        /// IPA, converted per voice like an IPA span.
        case ipa(String)
        /// Text read instead of the grapheme (an acronym read as a word, a name spelled as said).
        case alias(String)
    }

    /// The written forms, whitespace trimmed; a grapheme may hold several words.
    public var graphemes: [String]
    public var pronunciation: Pronunciation
    /// A lower-case language tag ("fr", "en-us"): the entry applies to voices of that language.
    /// nil: to every voice.
    public var language: String?
    public var caseSensitive: Bool

    public init(graphemes: [String], pronunciation: Pronunciation, language: String? = nil, caseSensitive: Bool = false) {
        self.graphemes = graphemes.map(\.trimmed)
        self.pronunciation = pronunciation
        self.language = language.flatMap(LanguageTag.normalized)
        self.caseSensitive = caseSensitive
    }

    public init(grapheme: String, pronunciation: Pronunciation, language: String? = nil, caseSensitive: Bool = false) {
        self.init(graphemes: [grapheme], pronunciation: pronunciation, language: language, caseSensitive: caseSensitive)
    }

    /// What `a11ysay --lexicon-list` prints: `iPhone → /ˈaɪfəʊn/ [en]`, `SNCF → "esse enne cé èf" [fr, case-sensitive]`.
    public var description: String {
        let said: String
        switch pronunciation {
        case .ipa(let ipa): said = "/\(ipa)/"
        case .alias(let alias): said = "\"\(alias)\""
        }
        var notes: [String] = [language ?? "all languages"]
        if caseSensitive { notes.append("case-sensitive") }
        return "\(graphemes.joined(separator: ", ")) → \(said) [\(notes.joined(separator: ", "))]"
    }

    /// Whether `grapheme` names one of this entry's graphemes (case ignored unless case-sensitive).
    public func hasGrapheme(_ grapheme: String) -> Bool {
        let wanted = grapheme.trimmed
        return graphemes.contains { caseSensitive ? $0 == wanted : $0.lowercased() == wanted.lowercased() }
    }
}
