// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import A11yCore

/// The SSML subset a11yd speaks, read by `MarkupReader`: the elements and attributes below and
/// nothing else. Every refusal is `SpeechError(.invalidSSML)` naming the line and column.
public struct SSMLParser {
    public struct Limits: Sendable {
        /// Whole document, UTF-8 bytes.
        public var maxInputBytes = 64 * 1024
        /// One attribute value, UTF-8 bytes, as written (before entity replacement).
        public var maxAttributeBytes = 4 * 1024
        /// Open elements at once, `speak` included.
        public var maxDepth = 32
        /// Elements in the document, `speak` included.
        public var maxElements = 1000
        public init() {}
    }

    static let vocabulary = MarkupVocabulary(
        root: "speak",
        attributes: [
            "speak": ["xml:lang", "version", "xmlns", "xml:base"],
            "p": ["xml:lang"], "s": ["xml:lang"],
            "paragraph": ["xml:lang"], "sentence": ["xml:lang"],
            "phoneme": ["alphabet", "ph"],
            "lang": ["xml:lang"],
            "voice": ["xml:lang", "language", "languages", "name", "gender", "age", "variant"],
            "say-as": ["interpret-as", "format", "detail"],
            "break": ["time", "strength"],
            "prosody": ["rate", "pitch", "volume"],
            "mark": ["name"],
            "sub": ["alias"],
            "emphasis": ["level"],
        ],
        textOnly: ["phoneme", "sub", "say-as"],
        empty: ["break", "mark"])

    /// Parses `document`, whose root must be `<speak>`.
    public static func parse(_ document: String, limits: Limits = Limits()) throws -> MarkupElement {
        let markupLimits = MarkupLimits(
            maxInputBytes: limits.maxInputBytes, maxAttributeBytes: limits.maxAttributeBytes,
            maxDepth: limits.maxDepth, maxElements: limits.maxElements)
        do {
            return try MarkupReader.read(document, vocabulary, limits: markupLimits)
        } catch {
            throw SpeechError(.invalidSSML, error.located)
        }
    }
}
