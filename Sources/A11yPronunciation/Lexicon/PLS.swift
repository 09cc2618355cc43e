// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// W3C Pronunciation Lexicon Specification 1.0, the subset a11yd reads and writes.
///
/// Read with the same care as SSML (`MarkupReader`: no DTD, no entities beyond the five and
/// numeric references, size, depth and count limits). Accepted: `<lexicon>` (`version` 1.0,
/// `alphabet` ipa, optional `xml:lang`), `<meta>`, `<metadata>` (text only), `<lexeme>` (optional
/// `xml:lang`, `role` ignored) with `<grapheme>`s, `<phoneme>`s, `<alias>`es and `<example>`s.
/// Case sensitivity, which PLS leaves open, is `a11yd:case-sensitive="true"` on a lexeme or the
/// lexicon, with `xmlns:a11yd` bound to `PLS.a11ydNamespace`.
public enum PLS {
    public static let namespace = "http://www.w3.org/2005/01/pronunciation-lexicon"
    public static let a11ydNamespace = "urn:a11yd:pls"
    static let caseSensitive = "a11yd:case-sensitive"

    /// Bounds on one file.
    static let limits = MarkupLimits(maxInputBytes: 1024 * 1024, maxDepth: 8, maxElements: 100_000)
    /// Longest grapheme, IPA or alias, in Unicode scalars.
    static let maxTextLength = 1000

    static let vocabulary = MarkupVocabulary(
        root: "lexicon",
        attributes: [
            "lexicon": ["version", "xml:lang", "alphabet", "xmlns", "xml:base", caseSensitive],
            "meta": ["name", "content", "http-equiv"],
            "metadata": [],
            "lexeme": ["role", "xml:lang", caseSensitive],
            "grapheme": ["orthography"],
            "phoneme": ["alphabet", "prefer"],
            "alias": ["prefer"],
            "example": [],
        ],
        textOnly: ["metadata", "grapheme", "phoneme", "alias", "example"],
        empty: ["meta"])

    /// Reads a PLS document. `path` only names the file in errors.
    public static func parse(_ document: String, path: String) throws(LexiconFileError) -> Lexicon {
        let root: MarkupElement
        do {
            root = try MarkupReader.read(document, vocabulary, limits: limits)
        } catch {
            throw LexiconFileError(path: path, line: error.line, column: error.column, message: error.message)
        }
        func refuse(_ element: MarkupElement, _ message: String) -> LexiconFileError {
            LexiconFileError(path: path, line: element.line, column: element.column, message: "<\(element.name)> \(message)")
        }
        let attributes = root.attributes
        if let version = attributes["version"], version != "1.0" { throw refuse(root, "version '\(version)': only 1.0") }
        if let xmlns = attributes["xmlns"], xmlns != namespace { throw refuse(root, "xmlns must be \(namespace)") }
        let declaresA11yd = attributes["xmlns:a11yd"] == a11ydNamespace
        if let bound = attributes["xmlns:a11yd"], !declaresA11yd { throw refuse(root, "xmlns:a11yd must be \(a11ydNamespace), not '\(bound)'") }
        try checkAlphabet(attributes["alphabet"], root, refuse)
        let language = attributes["xml:lang"].flatMap(LanguageTag.normalized)
        let lexiconCase = try flag(root, declaresA11yd, refuse) ?? false

        var entries: [LexiconEntry] = []
        for child in root.children {
            switch child {
            case .text(let text):
                guard text.trimmed.isEmpty else { throw refuse(root, "holds text outside any <lexeme>") }
            case .element(let element) where element.name == "lexeme":
                entries.append(try lexeme(element, language: language, caseSensitive: lexiconCase, declaresA11yd, refuse))
            case .element(let element):
                guard element.name == "meta" || element.name == "metadata" else {
                    throw refuse(element, "may not be a child of <lexicon>")
                }
            }
        }
        return Lexicon(entries: entries)
    }

    private static func lexeme(
        _ element: MarkupElement, language: String?, caseSensitive: Bool, _ declaresA11yd: Bool,
        _ refuse: (MarkupElement, String) -> LexiconFileError
    ) throws(LexiconFileError) -> LexiconEntry {
        var graphemes: [String] = []
        // PLS: the first pronunciation with prefer="true", else the first one.
        var pronunciation: LexiconEntry.Pronunciation?
        var preferred = false
        for child in element.children {
            guard case .element(let part) = child else {
                if case .text(let text) = child, !text.trimmed.isEmpty { throw refuse(element, "holds text outside its children") }
                continue
            }
            let text = part.textContent.trimmed
            if part.name != "example" {
                guard !text.isEmpty else { throw refuse(part, "is empty") }
                guard text.unicodeScalars.count <= maxTextLength else { throw refuse(part, "is longer than \(maxTextLength) characters") }
            }
            let prefer = part.attributes["prefer"]
            if let prefer, prefer != "true", prefer != "false" { throw refuse(part, "prefer must be true or false") }
            switch part.name {
            case "grapheme":
                graphemes.append(text)
            case "phoneme", "alias":
                if part.name == "phoneme" { try checkAlphabet(part.attributes["alphabet"], part, refuse) }
                let candidate: LexiconEntry.Pronunciation = part.name == "phoneme" ? .ipa(text) : .alias(text)
                if pronunciation == nil || (!preferred && prefer == "true") {
                    pronunciation = candidate
                    preferred = prefer == "true"
                }
            case "example":
                break
            default:
                throw refuse(part, "may not be a child of <lexeme>")
            }
        }
        guard !graphemes.isEmpty else { throw refuse(element, "needs at least one <grapheme>") }
        guard let pronunciation else { throw refuse(element, "needs a <phoneme> or an <alias>") }
        let own = element.attributes["xml:lang"].flatMap(LanguageTag.normalized)
        return LexiconEntry(
            graphemes: graphemes, pronunciation: pronunciation, language: own ?? language,
            caseSensitive: try flag(element, declaresA11yd, refuse) ?? caseSensitive)
    }

    private static func checkAlphabet(
        _ alphabet: String?, _ element: MarkupElement, _ refuse: (MarkupElement, String) -> LexiconFileError
    ) throws(LexiconFileError) {
        if let alphabet, alphabet.trimmed != "ipa" { throw refuse(element, "alphabet '\(alphabet)': only ipa") }
    }

    private static func flag(
        _ element: MarkupElement, _ declaresA11yd: Bool, _ refuse: (MarkupElement, String) -> LexiconFileError
    ) throws(LexiconFileError) -> Bool? {
        guard let value = element.attributes[caseSensitive] else { return nil }
        guard declaresA11yd else { throw refuse(element, "uses \(caseSensitive) without xmlns:a11yd=\"\(a11ydNamespace)\" on <lexicon>") }
        switch value.trimmed {
        case "true": return true
        case "false": return false
        default: throw refuse(element, "\(caseSensitive) must be true or false")
        }
    }

    /// The lexicon as a PLS document, as a11yd writes the user's lexicon.pls: one lexeme per entry,
    /// each with its own `xml:lang` (none for entries that apply to every voice).
    public static func document(_ lexicon: Lexicon) -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- The user's pronunciations, kept by a11yd (the lexicon request, a11ysay); see docs/pronunciation.md. -->
            <lexicon version="1.0" xmlns="\(namespace)" xmlns:a11yd="\(a11ydNamespace)" alphabet="ipa">

            """
        for entry in lexicon.entries {
            var attributes = ""
            if let language = entry.language { attributes += " xml:lang=\"\(escape(language))\"" }
            if entry.caseSensitive { attributes += " \(caseSensitive)=\"true\"" }
            out += "  <lexeme\(attributes)>\n"
            for grapheme in entry.graphemes { out += "    <grapheme>\(escape(grapheme))</grapheme>\n" }
            switch entry.pronunciation {
            case .ipa(let ipa): out += "    <phoneme>\(escape(ipa))</phoneme>\n"
            case .alias(let alias): out += "    <alias>\(escape(alias))</alias>\n"
            }
            out += "  </lexeme>\n"
        }
        return out + "</lexicon>\n"
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
