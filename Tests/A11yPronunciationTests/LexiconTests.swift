// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

@testable import A11yPronunciation
import Testing

/// Matching and the PLS format alone: no engine, milliseconds.
@Suite("Lexicon matching and PLS")
struct LexiconTests {
    func found(_ lexicon: Lexicon, _ text: String, languages: Set<String> = []) -> [String] {
        let scanned = LexiconText(text)
        return lexicon.matches(in: scanned, within: 0..<scanned.scalars.count) { entry in
            entry.language.map(languages.contains) ?? true
        }.map { String(String.UnicodeScalarView(scanned.scalars[$0.range])) }
    }

    func alias(_ grapheme: String, _ said: String = "x", language: String? = nil, caseSensitive: Bool = false) -> LexiconEntry {
        LexiconEntry(grapheme: grapheme, pronunciation: .alias(said), language: language, caseSensitive: caseSensitive)
    }

    @Test func wholeWordsOnly() {
        let lexicon = Lexicon(entries: [alias("cat"), alias("Wi-Fi"), alias("C++")])
        #expect(found(lexicon, "cat cats concat cat.") == ["cat", "cat"])
        #expect(found(lexicon, "le Wi-Fi, du C++ et C++x") == ["Wi-Fi", "C++"])
        // An apostrophe or a hyphen ends a word: "iPhone" is found in "l'iPhone".
        #expect(found(Lexicon(entries: [alias("iPhone")]), "l'iPhone d'iPhone-man iPhones") == ["iPhone", "iPhone"])
    }

    @Test func caseIsIgnoredUnlessTheEntrySaysSo() {
        let lexicon = Lexicon(entries: [alias("iphone"), alias("US", caseSensitive: true), alias("Éric")])
        #expect(found(lexicon, "IPHONE iPhone iphone") == ["IPHONE", "iPhone", "iphone"])
        #expect(found(lexicon, "US us Us") == ["US"])
        // Case folding and canonical equivalence beyond ASCII (é precomposed or not).
        #expect(found(lexicon, "ÉRIC e\u{301}ric") == ["ÉRIC", "e\u{301}ric"])
    }

    @Test func longestMatchWinsAndMultiWordGraphemesMatchAnySpacing() {
        let lexicon = Lexicon(entries: [alias("New"), alias("New York"), alias("New York Times"), alias("York")])
        #expect(found(lexicon, "the new  york\ntimes, New York, new, York") == ["new  york\ntimes", "New York", "new", "York"])
    }

    @Test func tiesGoToCaseSensitiveThenLanguageThenEarlierEntries() {
        let lexicon = Lexicon(entries: [
            alias("SNCF", "first"), alias("SNCF", "second"), alias("SNCF", "french", language: "fr"),
            alias("SNCF", "exact", caseSensitive: true),
        ])
        let scanned = LexiconText("SNCF sncf")
        let said = lexicon.matches(in: scanned, within: 0..<9) { entry in entry.language == nil || entry.language == "fr" }
            .map(\.entry.pronunciation)
        #expect(said == [.alias("exact"), .alias("french")])
        let english = lexicon.matches(in: scanned, within: 0..<9) { $0.language == nil }.map(\.entry.pronunciation)
        #expect(english == [.alias("exact"), .alias("first")])
    }

    @Test func regionLimitsMatches() {
        let lexicon = Lexicon(entries: [alias("ab cd")])
        let scanned = LexiconText("ab cd ab cd")
        #expect(lexicon.matches(in: scanned, within: 0..<4) { _ in true }.isEmpty, "cut by the region's end")
        #expect(lexicon.matches(in: scanned, within: 1..<11) { _ in true }.map(\.range) == [6..<11], "starts in a word")
    }

    @Test func editingIsPureAndNewestWins() {
        var lexicon = Lexicon()
        lexicon = lexicon.adding(LexiconEntry(grapheme: "pomme", pronunciation: .ipa("ʃa"), language: "fr"))
        lexicon = lexicon.adding(LexiconEntry(grapheme: "Pomme", pronunciation: .ipa("ʃjɛ̃"), language: "FR"))
        lexicon = lexicon.adding(LexiconEntry(grapheme: "pomme", pronunciation: .alias("apple")))
        #expect(lexicon.entries.count == 2)
        #expect(lexicon.entries[0].pronunciation == .ipa("ʃjɛ̃") && lexicon.entries[0].language == "fr")
        let removed = lexicon.removing(grapheme: "POMME", language: "fr")
        #expect(removed.removed.count == 1 && removed.lexicon.entries.map(\.language) == [nil])
        #expect(lexicon.removing(grapheme: "pomme", language: "en").removed.isEmpty)
    }

    // MARK: PLS

    let sample = """
        <?xml version="1.0" encoding="UTF-8"?>
        <lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon"
                 xmlns:a11yd="urn:a11yd:pls" alphabet="ipa" xml:lang="fr">
          <meta name="author" content="me"/>
          <!-- English brand names in French speech -->
          <lexeme xml:lang="en">
            <grapheme>iPhone</grapheme>
            <grapheme>i-Phone</grapheme>
            <phoneme>ˈaɪfəʊn</phoneme>
          </lexeme>
          <lexeme a11yd:case-sensitive="true">
            <grapheme>ONU</grapheme>
            <alias>Onu</alias>
            <phoneme prefer="true">ɔny</phoneme>
            <example>L'ONU a voté.</example>
          </lexeme>
          <lexeme><grapheme>R&amp;D</grapheme><alias>recherche et développement</alias></lexeme>
        </lexicon>
        """

    @Test func readsPLS() throws {
        let lexicon = try PLS.parse(sample, path: "lexicon.pls")
        #expect(lexicon.entries == [
            LexiconEntry(graphemes: ["iPhone", "i-Phone"], pronunciation: .ipa("ˈaɪfəʊn"), language: "en"),
            LexiconEntry(grapheme: "ONU", pronunciation: .ipa("ɔny"), language: "fr", caseSensitive: true),
            LexiconEntry(grapheme: "R&D", pronunciation: .alias("recherche et développement"), language: "fr"),
        ])
    }

    @Test func writesWhatItReads() throws {
        let lexicon = try PLS.parse(sample, path: "a")
        let written = PLS.document(lexicon)
        #expect(try PLS.parse(written, path: "b") == lexicon)
        #expect(written.contains("<grapheme>R&amp;D</grapheme>"))
    }

    func refused(_ document: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: LexiconFileError.self, sourceLocation: sourceLocation) { try PLS.parse(document, path: "u.pls") }
        #expect(
            error?.description.contains(fragment) == true, "\(error?.description ?? "no error") lacks '\(fragment)'",
            sourceLocation: sourceLocation)
    }

    @Test func badFilesAreRefusedWithLineAndColumn() {
        let open = #"<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa">"#
        refused(open + "\n  <lexeme>\n    <grapheme>a</grapheme>\n  </lexeme>\n</lexicon>", "u.pls:2:3: <lexeme> needs a <phoneme> or an <alias>")
        refused(open + "\n<lexeme><phoneme>a</phoneme></lexeme></lexicon>", "u.pls:2:1: <lexeme> needs at least one <grapheme>")
        refused(open + "\n<lexeme><grapheme>a</grapheme><phoneme>a</phoneme>", "u.pls:2:")
        refused(open + "<lexeme><grapheme>a</grapheme><phoneme alphabet=\"x-sampa\">a</phoneme></lexeme></lexicon>", "only ipa")
        refused(open + "<lexeme a11yd:case-sensitive=\"true\"><grapheme>a</grapheme><alias>b</alias></lexeme></lexicon>", "without xmlns:a11yd")
        refused(open + "<lexeme><grapheme>a</grapheme><alias>b</alias><b/></lexeme></lexicon>", "u.pls:1:")
        refused(open + "<lexeme><grapheme> </grapheme><alias>b</alias></lexeme></lexicon>", "<grapheme> is empty")
        refused(open + "hello</lexicon>", "holds text outside any <lexeme>")
        refused("<speak/>", "u.pls:1:1: unknown element <speak>")
        refused(#"<lexicon version="2.0"/>"#, "only 1.0")
        refused(#"<lexicon xmlns="http://example.com"/>"#, "xmlns must be")
    }

    @Test func hostileFilesAreRefused() {
        refused("<?xml version=\"1.0\"?>\n<!DOCTYPE lexicon [<!ENTITY a \"b\">]><lexicon/>", "u.pls:2:1: DOCTYPE and ENTITY declarations are refused")
        refused("<lexicon>&ent;</lexicon>", "unknown entity")
        refused("<lexicon>" + String(repeating: "<lexeme>", count: 9), "nested more than 8 deep")
        refused("<lexicon>" + String(repeating: " ", count: 1024 * 1024) + "</lexicon>", "at most 1048576")
        let long = String(repeating: "a", count: 1001)
        refused("<lexicon><lexeme><grapheme>\(long)</grapheme><alias>b</alias></lexeme></lexicon>", "longer than 1000")
    }
}

/// A pronouncer needs no real engine: a fake with two phonemes plans a lexicon entry.
@Suite("Pronouncer on a fake engine")
struct FakeEngineTests {
    struct TwoPhonemes: PronunciationEngine {
        func resolveVoice(language: String) async throws -> String {
            guard language.hasPrefix("fr") else { throw SpeechError(.unknownVoice, "no voice for '\(language)'") }
            return "fr"
        }
        func phonemeInventory(voice: String) async throws -> [PhonemeEntry] {
            [PhonemeEntry(mnemonic: "S", ipa: "ʃ"), PhonemeEntry(mnemonic: "a", ipa: "a")]
        }
        func allMnemonics() async throws -> [String] { ["S", "a"] }
        func ipa(ofText text: String, voice: String) async throws -> String { text }
        func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String { mnemonics }
        func ipa(ofLetter character: String, voice: String) async throws -> String { character }
    }

    @Test func plansAndChecksWithoutEspeak() async throws {
        let pronouncer = Pronouncer(engine: TwoPhonemes())
        let lexicon = Lexicon(entries: [LexiconEntry(grapheme: "pomme", pronunciation: .ipa("ʃa"), language: "fr")])
        let plan = try await pronouncer.plan(text: "la pomme", defaultVoice: "fr", lexicon: lexicon)
        #expect(plan.segments.map(\.content) == [.text("la "), .phonemes("S'a")])
        await #expect(throws: SpeechError.self) {
            try await pronouncer.check(LexiconEntry(grapheme: "x", pronunciation: .ipa("ʒ")), defaultVoice: "fr")
        }
    }
}
