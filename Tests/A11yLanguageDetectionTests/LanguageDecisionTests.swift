// SPDX-License-Identifier: GPL-3.0-or-later
import A11yPronunciation
import Testing

@Suite("The language decision's rules, row by row")
struct LanguageDecisionTests {
    let decision = LanguageDecision(listed: ["fr", "en-GB", "de", "es", "it"])

    private func evidence(_ cld2: String?, reliable: Bool = true, score: Double, _ distances: [String: Int]) -> LanguageEvidence {
        LanguageEvidence(
            candidates: cld2.map { [.init(language: $0, percent: 97, score: score)] } ?? [], reliable: reliable, distances: distances)
    }

    struct Row: Sendable, CustomStringConvertible {
        let description: String
        let cld2: String?
        let reliable: Bool
        let distances: [String: Int]
        let own: String
        let words: Int
        var clause = false
        var score = LanguageDecision.fullScore
        let expected: String?
    }

    static let rows: [Row] = [
        Row(description: "a sentence both detectors place in English", cld2: "en", reliable: true,
            distances: ["fr": 50_000, "en": 45_000, "de": 52_000], own: "fr", words: 8, expected: "en-GB"),
        Row(description: "the listed tag is said, not the base code", cld2: nil, reliable: false,
            distances: ["fr": 50_000, "en": 45_000], own: "fr", words: 8, expected: "en-GB"),
        Row(description: "the text's own language nearest: stays", cld2: "en", reliable: true,
            distances: ["fr": 40_000, "en": 45_000], own: "fr", words: 8, expected: nil),
        Row(description: "CLD2's vote tips a near tie", cld2: "de", reliable: true,
            distances: ["fr": 50_000, "de": 50_500], own: "fr", words: 8, expected: "de"),
        Row(description: "CLD2's vote at full score tips a wider tie", cld2: "de", reliable: true,
            distances: ["fr": 50_000, "de": 51_500], own: "fr", words: 8, expected: "de"),
        Row(description: "CLD2's vote at a low score counts less: the same tie stays", cld2: "de", reliable: true,
            distances: ["fr": 50_000, "de": 51_500], own: "fr", words: 8, score: 300, expected: nil),
        Row(description: "a score above the full one counts as full", cld2: "de", reliable: true,
            distances: ["fr": 50_000, "de": 53_500], own: "fr", words: 8, score: 5000, expected: nil),
        Row(description: "a sentence another language is barely ahead in moves", cld2: "fr", reliable: false,
            distances: ["fr": 50_000, "en": 49_500], own: "fr", words: 6, expected: "en-GB"),
        Row(description: "a clause on the same evidence stays in its sentence's language", cld2: "fr", reliable: false,
            distances: ["fr": 50_000, "en": 49_500], own: "fr", words: 6, clause: true, expected: nil),
        Row(description: "a clause moves on the short text's evidence", cld2: "en", reliable: true,
            distances: ["fr": 50_000, "en": 42_000], own: "fr", words: 6, clause: true, expected: "en-GB"),
        Row(description: "an unreliable CLD2 does not vote", cld2: "de", reliable: false,
            distances: ["fr": 50_000, "de": 50_500], own: "fr", words: 8, expected: nil),
        Row(description: "CLD2 naming an unlisted language does not vote", cld2: "gl", reliable: true,
            distances: ["fr": 50_000, "es": 50_500], own: "fr", words: 8, expected: nil),
        Row(description: "a short text needs CLD2 to agree", cld2: "fr", reliable: true,
            distances: ["fr": 20_000, "en": 15_000], own: "fr", words: 3, expected: nil),
        Row(description: "a short text needs a wide margin", cld2: "en", reliable: true,
            distances: ["fr": 20_000, "en": 19_900], own: "fr", words: 3, expected: nil),
        Row(description: "a short text moves on overwhelming evidence", cld2: "en", reliable: true,
            distances: ["fr": 20_000, "en": 16_000], own: "fr", words: 3, expected: "en-GB"),
        Row(description: "no distances: nothing to decide", cld2: "en", reliable: true,
            distances: [:], own: "fr", words: 8, expected: nil),
        Row(description: "a locale as the own language", cld2: "fr", reliable: true,
            distances: ["fr": 40_000, "en": 45_000], own: "fr_FR.UTF-8", words: 8, expected: nil),
        Row(description: "an unlisted own language moves only when both agree", cld2: "en", reliable: true,
            distances: ["fr": 50_000, "en": 45_000], own: "pt", words: 8, expected: "en-GB"),
        Row(description: "an unlisted own language, the detectors disagreeing: stays", cld2: "fr", reliable: true,
            distances: ["fr": 50_000, "en": 45_000], own: "pt", words: 8, expected: nil),
        Row(description: "a distance for an unlisted language is ignored", cld2: nil, reliable: false,
            distances: ["fr": 50_000, "pt": 10_000], own: "fr", words: 8, expected: nil),
    ]

    @Test(arguments: rows)
    func decides(_ row: Row) {
        let chosen = decision.choose(
            evidence(row.cld2, reliable: row.reliable, score: row.score, row.distances), own: row.own, words: row.words, clause: row.clause)
        #expect(chosen == row.expected)
    }

    @Test(arguments: [(1, 10, false), (2, 3, false), (2, 4, true), (5, 30, true), (0, 0, false)])
    func aSingleWordOrCharacterIsNeverDetected(words: Int, letters: Int, detected: Bool) {
        #expect(LanguageDecision.isWorthDetecting(words: words, letters: letters) == detected)
    }

    @Test func listedBasesAreEachOnceInOrder() {
        #expect(LanguageDecision(listed: ["en-GB", "fr", "en-US"]).listedBases == ["en", "fr"])
    }
}
