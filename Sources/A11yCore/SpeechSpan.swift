// SPDX-License-Identifier: GPL-3.0-or-later
/// A range of a `post`'s text with how to say it. Offsets count Unicode scalars of the text.
public struct SpeechSpan: Sendable, Equatable {
    public var start: Int
    public var length: Int
    /// IPA replacing the pronunciation of the range (converted for the voice in force).
    public var ipa: String?
    /// A language (BCP 47 or POSIX) whose voice speaks the range.
    public var lang: String?
    /// Spell the range letter by letter.
    public var spellOut: Bool?
    /// Speak the range's punctuation.
    public var punctuation: Bool?

    public init(
        start: Int, length: Int, ipa: String? = nil, lang: String? = nil, spellOut: Bool? = nil,
        punctuation: Bool? = nil
    ) {
        self.start = start
        self.length = length
        self.ipa = ipa
        self.lang = lang
        self.spellOut = spellOut
        self.punctuation = punctuation
    }

    /// One span per occurrence of `word` in `text` (whole words only), each with `ipa` or spelled
    /// out: what `a11ysay --ipa WORD=IPA` and `--spell WORD` mean.
    public static func occurrences(
        of word: String, in text: String, ipa: String? = nil, spellOut: Bool? = nil
    ) -> [SpeechSpan] {
        let scalars = Array(text.unicodeScalars)
        let needle = Array(word.unicodeScalars)
        guard !needle.isEmpty, needle.count <= scalars.count else { return [] }
        func isWordScalar(_ s: Unicode.Scalar) -> Bool { s.properties.isAlphabetic || ("0"..."9").contains(s) }
        var spans: [SpeechSpan] = []
        var i = 0
        while i + needle.count <= scalars.count {
            if Array(scalars[i..<i + needle.count]) == needle,
               i == 0 || !isWordScalar(scalars[i - 1]),
               i + needle.count == scalars.count || !isWordScalar(scalars[i + needle.count]) {
                spans.append(SpeechSpan(start: i, length: needle.count, ipa: ipa, spellOut: spellOut))
                i += needle.count
            } else {
                i += 1
            }
        }
        return spans
    }
}

extension SpeechSpan {
    /// Checks `spans` against a text of `count` Unicode scalars and returns them sorted by start.
    /// - Throws: `SpeechError(.invalidRequest)`: negative or zero length, out of range, overlap,
    ///   no option, empty `ipa` or `lang`.
    public static func validate(_ spans: [SpeechSpan], textLength count: Int) throws -> [SpeechSpan] {
        for (index, span) in spans.enumerated() {
            let name = "spans[\(index)] (start \(span.start), length \(span.length))"
            guard span.start >= 0 else { throw SpeechError(.invalidRequest, "\(name): start is negative") }
            guard span.length > 0 else { throw SpeechError(.invalidRequest, "\(name): length must be at least 1") }
            guard span.start <= count - span.length else {
                throw SpeechError(
                    .invalidRequest, "\(name): ends past the text, which has \(count) Unicode scalars")
            }
            guard span.ipa != nil || span.lang != nil || span.spellOut == true || span.punctuation == true else {
                throw SpeechError(.invalidRequest, "\(name): sets none of ipa, lang, spellOut, punctuation")
            }
            if let ipa = span.ipa, ipa.allSatisfy(\.isWhitespace) {
                throw SpeechError(.invalidRequest, "\(name): ipa is empty")
            }
            if let lang = span.lang, lang.allSatisfy(\.isWhitespace) {
                throw SpeechError(.invalidRequest, "\(name): lang is empty")
            }
            if span.ipa != nil, span.spellOut == true {
                throw SpeechError(.invalidRequest, "\(name): ipa and spellOut exclude each other")
            }
        }
        let sorted = spans.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
        for (a, b) in zip(sorted, sorted.dropFirst()) where b.element.start < a.element.start + a.element.length {
            throw SpeechError(
                .invalidRequest,
                "spans[\(a.offset)] (\(a.element.start)..<\(a.element.start + a.element.length)) and spans[\(b.offset)] (\(b.element.start)..<\(b.element.start + b.element.length)) overlap")
        }
        return sorted.map(\.element)
    }
}
