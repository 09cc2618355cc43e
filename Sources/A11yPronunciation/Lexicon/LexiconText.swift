// SPDX-License-Identifier: GPL-3.0-or-later
/// A text cut into the tokens lexicon matching compares: words (runs of letters, marks and
/// digits), single other symbols, and whitespace runs. Apostrophes and hyphens are symbols, so
/// "iPhone" is found in "l'iPhone" and "Wi-Fi" matches as written.
struct LexiconText: Sendable {
    enum Kind: Sendable, Equatable { case word, symbol, space }

    struct Token: Sendable, Equatable {
        var kind: Kind
        var range: Range<Int>
        /// As written.
        var text: String
        /// Compared when case does not matter: lower-cased (`text` for symbols and spaces).
        var key: String
    }

    let scalars: [Unicode.Scalar]
    let tokens: [Token]

    init(_ text: String) {
        self.init(scalars: Array(text.unicodeScalars))
    }

    init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
        var tokens: [Token] = []
        var i = 0
        while i < scalars.count {
            let kind = Self.kind(of: scalars[i])
            var end = i + 1
            if kind != .symbol {
                while end < scalars.count, Self.kind(of: scalars[end]) == kind { end += 1 }
            }
            let text = String(String.UnicodeScalarView(scalars[i..<end]))
            tokens.append(Token(kind: kind, range: i..<end, text: text, key: kind == .word ? text.lowercased() : (kind == .space ? " " : text)))
            i = end
        }
        self.tokens = tokens
    }

    static func kind(of scalar: Unicode.Scalar) -> Kind {
        if scalar.properties.isWhitespace { return .space }
        return isWordScalar(scalar) ? .word : .symbol
    }

    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isAlphabetic { return true }
        switch scalar.properties.generalCategory {
        case .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// Neither end of `range` touches a word character outside it ("cat" is not in "cats").
    func isWholeWord(_ range: Range<Int>) -> Bool {
        if range.lowerBound > 0, Self.isWordScalar(scalars[range.lowerBound - 1]) { return false }
        if range.upperBound < scalars.count, Self.isWordScalar(scalars[range.upperBound]) { return false }
        return true
    }
}

/// One grapheme as tokens, for matching against a `LexiconText`.
struct LexiconPattern: Sendable {
    let tokens: [LexiconText.Token]
    /// Index of its entry in the lexicon (its precedence).
    let entry: Int
    let caseSensitive: Bool

    /// nil for a grapheme with nothing to match.
    init?(_ grapheme: String, entry: Int, caseSensitive: Bool) {
        let tokens = LexiconText(grapheme.trimmed).tokens
        guard !tokens.isEmpty else { return nil }
        self.tokens = tokens
        self.entry = entry
        self.caseSensitive = caseSensitive
    }

    /// The index key: the first token's folded form.
    var key: String { tokens[0].key }

    /// The index after the last text token it matches, starting at `start`; nil when it does not.
    /// A space in the grapheme matches any whitespace run.
    func match(_ text: [LexiconText.Token], at start: Int) -> Int? {
        guard start + tokens.count <= text.count else { return nil }
        for (offset, token) in tokens.enumerated() {
            let candidate = text[start + offset]
            guard candidate.kind == token.kind else { return nil }
            let same = caseSensitive ? candidate.text == token.text : candidate.key == token.key
            guard token.kind == .space || same else { return nil }
        }
        return start + tokens.count
    }
}
