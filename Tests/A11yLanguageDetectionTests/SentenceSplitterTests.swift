// SPDX-License-Identifier: GPL-3.0-or-later
import A11yPronunciation
import Testing

@Suite("Sentences and clauses: where a text is cut to find each piece's language")
struct SentenceSplitterTests {
    private func sentences(_ text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        return SentenceSplitter.sentences(of: scalars, in: 0..<scalars.count).map { String(String.UnicodeScalarView(scalars[$0])) }
    }

    private func clauses(_ text: String, minimumWords: Int = 16) -> [String] {
        let scalars = Array(text.unicodeScalars)
        return SentenceSplitter.clauses(of: scalars, in: 0..<scalars.count, minimumWords: minimumWords)
            .map { String(String.UnicodeScalarView(scalars[$0])) }
    }

    @Test(arguments: [
        ("Bonjour. Hello there.", ["Bonjour. ", "Hello there."]),
        ("Vraiment ? Oui ! Bien…  Et puis", ["Vraiment ? ", "Oui ! ", "Bien…  ", "Et puis"]),
        // An abbreviation before a lower-case word is not a sentence's end.
        ("Voir p. 12 et e.g. this one. Next", ["Voir p. 12 et e.g. this one. ", "Next"]),
        ("M. Dupont arrive.", ["M. ", "Dupont arrive."]),
        ("Fin.\nNew line\n\nAgain", ["Fin.\n", "New line\n\n", "Again"]),
        ("He said \"stop.\" Then left.", ["He said \"stop.\" ", "Then left."]),
        ("你好。世界！", ["你好。", "世界！"]),
        ("no end", ["no end"]),
        ("", []),
        ("...", ["..."]),
    ])
    func sentences(_ text: String, _ expected: [String]) {
        #expect(sentences(text) == expected)
    }

    @Test func piecesCoverTheTextWithoutGapsWhateverItHolds() {
        for text in ["a. b. c.", "  . . .  ", "\n\n\n", "🙂. 🙂! x", "שלום. עולם? Hello.", String(repeating: "Mot. ", count: 200)] {
            let scalars = Array(text.unicodeScalars)
            let pieces = SentenceSplitter.sentences(of: scalars, in: 0..<scalars.count)
            #expect(pieces.first?.lowerBound ?? 0 == 0)
            #expect(pieces.last?.upperBound ?? 0 == scalars.count)
            for (a, b) in zip(pieces, pieces.dropFirst()) { #expect(a.upperBound == b.lowerBound && !a.isEmpty) }
        }
    }

    @Test func aShortSentenceIsOneClause() {
        #expect(clauses("Je pense, donc je suis, dit-il.") == ["Je pense, donc je suis, dit-il."])
    }

    @Test func aLongSentenceIsCutAtItsClauseMarksIntoClausesOfFiveWordsOrMore() {
        let text = "Le rapport dit clairement ceci aujourd'hui: the results were better than expected this year, mais pas partout, selon nous."
        #expect(clauses(text, minimumWords: 10) == [
            "Le rapport dit clairement ceci aujourd'hui: ",
            "the results were better than expected this year, ",
            // Five words: a clause of its own.
            "mais pas partout, selon nous.",
        ])
    }

    @Test(arguments: [("l'homme est là", 3), ("C'est-à-dire 12 fois", 3), ("", 0), ("— … —", 0), ("a b", 2)])
    func words(_ text: String, _ count: Int) {
        let scalars = Array(text.unicodeScalars)
        #expect(SentenceSplitter.wordCount(scalars, in: 0..<scalars.count) == count)
    }
}
