// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// What the detectors say of one piece of text (a sentence or a clause): CLD2's best languages and
/// each listed language's n-gram fingerprint distance (libexttextcat). Plain values, so that the
/// rules below are tested row by row without a detector.
public struct LanguageEvidence: Sendable, Equatable {
    /// One of CLD2's (at most three) best languages.
    public struct Candidate: Sendable, Equatable {
        /// ISO 639 code as CLD2 names it ("fr", "en"; "un": none).
        public var language: String
        /// Share of the text's letters, 0...100.
        public var percent: Int
        /// CLD2's normalized score: how well the text matches the language's model, about 1000
        /// for real text in it, lower for a few words or a language it only resembles.
        public var score: Double
        public init(language: String, percent: Int, score: Double = LanguageDecision.fullScore) {
            self.language = language
            self.percent = percent
            self.score = score
        }
    }

    /// CLD2's best languages, best first.
    public var candidates: [Candidate]
    /// CLD2's own judgement that its first language is clearly ahead.
    public var reliable: Bool
    /// For each listed language (its base code, "fr") that has a fingerprint: how far the text's
    /// n-grams are from that language's, lower nearer. Empty when the text had too little to compare.
    public var distances: [String: Int]

    public init(candidates: [Candidate], reliable: Bool, distances: [String: Int]) {
        self.candidates = candidates
        self.reliable = reliable
        self.distances = distances
    }
}

/// Says which language a piece of text is in, among the languages a user listed. A detector that
/// cannot tell says nil, and the text keeps its own language.
public protocol LanguageDetecting: Sendable {
    /// The evidence for `text` (at most `LanguageDecision.maximumBytes` of it are read).
    func evidence(for text: String) -> LanguageEvidence?
}

/// The rules that turn evidence into a decision: pure, tested row by row (LanguageDecisionTests).
///
/// The fingerprint distances rank every listed language (and only those: a user reading French,
/// English and German is never told Galician); CLD2, which knows the words of 80 languages, adds a
/// vote for its first language when it is listed and CLD2 calls it reliable, weighed by CLD2's own
/// score: a low score is CLD2 guessing from a few words (English ones in an Italian sentence), a
/// full one is CLD2 knowing the language. The text's own language keeps it unless another listed
/// language is ahead of it:
/// - a sentence (5 words or more): ahead at all;
/// - a short text (2-4 words: a label, a button, a menu item), and a clause of a sentence whose
///   language is decided: ahead by `shortMargin` *and* CLD2's reliable first language, so that
///   "Option incorrecte" stays French and a clause of five words does not leave its sentence on
///   a near tie;
/// - a single word or character: never looked at (`minimumWords`, `minimumLetters`): key echo and
///   a word read alone never move.
/// Measured on bench/language/sentences.tsv (docs/architecture.md, "Language detection").
public struct LanguageDecision: Sendable, Equatable {
    /// The languages the user reads, as configured (`["fr", "en-GB"]`), in their order.
    public var listed: [String]
    /// What CLD2's vote takes off its language's relative distance, at `fullScore` or above.
    public static let cld2Vote = 0.06
    /// The CLD2 score at which its vote counts whole; below, it counts in proportion.
    public static let fullScore = 1000.0
    /// How far ahead another language must be, on a short text.
    public static let shortMargin = 0.15
    /// At most this many words is a short text.
    public static let shortWords = 4
    /// Fewer words than this is never detected.
    public static let minimumWords = 2
    /// Fewer letters than this is never detected.
    public static let minimumLetters = 4
    /// The most bytes of one piece a detector reads: the start of a long clause says its language.
    public static let maximumBytes = 1024

    public init(listed: [String]) {
        self.listed = listed
    }

    /// The listed bases, each once, in order.
    public var listedBases: [String] {
        var seen: [String] = []
        for tag in listed {
            let base = LanguageTag.base(tag)
            if !base.isEmpty, !seen.contains(base) { seen.append(base) }
        }
        return seen
    }

    /// Whether a piece of `words` words and `letters` letters is sent to the detector at all.
    public static func isWorthDetecting(words: Int, letters: Int) -> Bool {
        words >= minimumWords && letters >= minimumLetters
    }

    /// The listed tag (as configured, "en-GB") of the language `evidence` says a piece of `words`
    /// words is in, when that is not `own` (a tag: "fr", "fr_FR.UTF-8"); nil keeps `own`. A
    /// `clause` is part of a sentence whose language (`own`) was decided on the whole sentence.
    public func choose(_ evidence: LanguageEvidence, own: String, words: Int, clause: Bool = false) -> String? {
        let ownBase = LanguageTag.base(own)
        let bases = listedBases
        var relative: [String: Double] = [:]
        guard let nearest = evidence.distances.filter({ bases.contains($0.key) }).values.min(), nearest > 0 else { return nil }
        for (language, distance) in evidence.distances where bases.contains(language) {
            relative[language] = Double(distance) / Double(nearest)
        }
        let first = evidence.candidates.first
        let cld2Says = evidence.reliable ? first.map({ LanguageTag.base($0.language) }).flatMap { relative[$0] != nil ? $0 : nil } : nil
        if let cld2Says, let first {
            relative[cld2Says, default: 1] -= Self.cld2Vote * min(max(first.score, 0), Self.fullScore) / Self.fullScore
        }
        // The best listed language; ties go to the text's own, then to the list's order.
        guard let best = bases.filter({ relative[$0] != nil }).min(by: { a, b in
            if relative[a]! != relative[b]! { return relative[a]! < relative[b]! }
            return a == ownBase
        }) else { return nil }
        if best == ownBase { return nil }
        let short = words <= Self.shortWords || clause
        if let ownScore = relative[ownBase] {
            let margin = ownScore - relative[best]!
            if short {
                guard cld2Says == best, margin >= Self.shortMargin else { return nil }
            } else {
                guard margin > 0 else { return nil }
            }
        } else {
            // The text's own language is not listed (or has no fingerprint): only both detectors
            // agreeing move it.
            guard cld2Says == best else { return nil }
        }
        return listed.first { LanguageTag.base($0) == best }
    }
}
