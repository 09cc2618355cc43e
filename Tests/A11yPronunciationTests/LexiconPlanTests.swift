// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

@testable import A11yPronunciation
import A11ySystem
import Foundation
import Testing

/// The lexicon applied by the planner and kept by the store, against the real libespeak-ng.
@Suite("Lexicon in plans and files", .serialized)
struct LexiconPlanTests {
    let p = sharedPronouncer

    /// "pomme" said "chat" in French; a French user's English brand; an acronym read as a word.
    let lexicon = Lexicon(entries: [
        LexiconEntry(grapheme: "pomme", pronunciation: .ipa("ʃa"), language: "fr"),
        LexiconEntry(grapheme: "iPhone", pronunciation: .ipa("ajfɔn")),
        LexiconEntry(grapheme: "ONU", pronunciation: .alias("Onu"), language: "fr", caseSensitive: true),
        LexiconEntry(grapheme: "README", pronunciation: .alias("read me")),
    ])

    func said(_ plan: SpeechPlan) async throws -> String {
        try await p.showIPA(plan.segments, annotated: false)
    }

    @Test func plainTextTakesTheLexiconAndKeepsClientOffsets() async throws {
        let text = "une pomme et un iPhone à l'ONU"
        let plan = try await p.plan(text: text, defaultVoice: "fr", lexicon: lexicon)
        let pieces = plan.segments.map { ($0.sourceStart, $0.sourceLength) }
        #expect(pieces.map(\.0) == [0, 4, 9, 16, 22, 27])
        #expect(plan.spokenText == text)
        #expect(plan.segments[1].content == .phonemes(try await p.mnemonics(forIPA: "ʃa", voice: "fr")))
        // The alias is spoken but stands for "ONU" (27..<30) in the client's text.
        #expect(plan.segments[5] == SpeechSegment(content: .text("Onu"), voice: "fr", sourceStart: 27, sourceLength: 3))
        let pomme = try await said(try await p.plan(text: "pomme", defaultVoice: "fr", lexicon: lexicon))
        let chat = try await said(try await p.plan(text: "chat", defaultVoice: "fr"))
        #expect(pomme == chat, "pomme said \(pomme), chat \(chat)")
    }

    @Test func languageLimitsFollowTheVoice() async throws {
        // The fr entry does not apply to English speech; the entry for every voice does.
        let english = try await p.plan(text: "pomme README", defaultVoice: "en-us", lexicon: lexicon)
        #expect(english.segments.map(\.content) == [.text("pomme "), .text("read me")])
        // "en" applies to en-us (a voice of that language); "en-us" not to British "en".
        let american = Lexicon(entries: [LexiconEntry(grapheme: "tomato", pronunciation: .alias("tomahto"), language: "en-US")])
        #expect(try await p.plan(text: "tomato", defaultVoice: "en-us", lexicon: american).segments[0].content == .text("tomahto"))
        #expect(try await p.plan(text: "tomato", defaultVoice: "en", lexicon: american).segments[0].content == .text("tomato"))
        let anyEnglish = Lexicon(entries: [LexiconEntry(grapheme: "tomato", pronunciation: .alias("tomahto"), language: "en")])
        #expect(try await p.plan(text: "tomato", defaultVoice: "en-us", lexicon: anyEnglish).segments[0].content == .text("tomahto"))
    }

    @Test func whatTheClientStatesWinsInSpans() async throws {
        let text = "pomme pomme pomme pomme"
        let spans = [
            SpeechSpan(start: 0, length: 5, ipa: "pɔm"),        // explicit IPA: kept
            SpeechSpan(start: 6, length: 5, spellOut: true),    // spelled: kept
            SpeechSpan(start: 12, length: 5, lang: "fr"),       // language only: the lexicon applies
        ]
        let plan = try await p.plan(text: text, spans: spans, defaultVoice: "fr", lexicon: lexicon)
        let chat = try await p.mnemonics(forIPA: "ʃa", voice: "fr")
        let pom = try await p.mnemonics(forIPA: "pɔm", voice: "fr")
        #expect(plan.segments.map(\.content) == [.phonemes(pom), .text(" "), .text("pomme"), .text(" "), .phonemes(chat), .text(" "), .phonemes(chat)])
        #expect(plan.segments.map(\.sourceStart) == [0, 5, 6, 11, 12, 17, 18])
        #expect(plan.segments[2].options.spellOut)
    }

    @Test func whatTheDocumentStatesWinsInSSML() async throws {
        let ssml = """
            <speak>une <mark name="m"/>pomme, <phoneme ph="pɔm">pomme</phoneme>, <sub alias="pomme">P.</sub>,
            <say-as interpret-as="characters">pomme</say-as> et <prosody rate="fast">pomme</prosody></speak>
            """
        let plan = try await p.plan(ssml: ssml, defaultVoice: "fr", lexicon: lexicon)
        let chat = try await p.mnemonics(forIPA: "ʃa", voice: "fr")
        let scalars = Array(plan.spokenText.unicodeScalars)
        let replaced = plan.segments.filter { $0.content == .phonemes(chat) }
            .map { String(String.UnicodeScalarView(scalars[$0.sourceStart..<$0.sourceStart + $0.sourceLength])) }
        #expect(replaced == ["pomme", "pomme"], "the text node and the prosody content, not phoneme, sub or say-as")
        // The mark still comes just before the first "pomme", now its own segment.
        let mark = try #require(plan.marks.first)
        #expect(plan.segments[mark.segmentIndex].options.markBefore == "m")
        #expect(plan.segments[mark.segmentIndex].content == .phonemes(chat))
        #expect(plan.segments[plan.segments.count - 1].options.rateScale > 1)
    }

    @Test func anEntryTheVoiceCannotSayIsSkippedNotFatal() async throws {
        let odd = Lexicon(entries: [LexiconEntry(grapheme: "chat", pronunciation: .ipa("ǂa"))])
        let plan = try await p.plan(text: "le chat", defaultVoice: "fr", lexicon: odd)
        #expect(plan.segments == [SpeechSegment(content: .text("le chat"), voice: "fr", sourceStart: 0, sourceLength: 7)])
    }

    @Test func wordEventsStayInTheClientsText() async throws {
        let text = "Mon iPhone marche"
        let plan = try await p.plan(text: text, defaultVoice: "fr", lexicon: lexicon)
        var words: [WordMark] = []
        for try await chunk in sharedEngine.synthesize(Utterance(segments: plan.segments, rate: 175, pitch: 50, volume: 100)) {
            words += chunk.words
        }
        let scalars = Array(text.unicodeScalars)
        #expect(words.map { String(String.UnicodeScalarView(scalars[$0.start..<$0.start + $0.length])) } == ["Mon", "iPhone", "marche"])
    }

    // MARK: The store

    func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("a11yd-lexicon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func addWritesAtomicallyAndRemoveUndoes() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = LexiconStore(location: .init(configurationDirectory: folder.path))
        #expect(store.reload().isEmpty, "no files yet is no error")
        try await store.add(LexiconEntry(grapheme: "pomme", pronunciation: .ipa("ʃa"), language: "fr"), checkedWith: p, defaultVoice: "fr")
        #expect(store.lexicon.entries.map(\.graphemes) == [["pomme"]])
        let file = folder.appendingPathComponent("lexicon.pls").path
        #expect(try PLS.parse(String(contentsOfFile: file, encoding: .utf8), path: file) == store.lexicon)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["lexicon.pls"], "no temporary file left")

        let error = #expect(throws: SpeechError.self) { try store.remove(grapheme: "pomme", language: nil) }
        #expect(error?.message.contains("there is one for fr") == true)
        #expect(try store.remove(grapheme: "POMME", language: "fr").count == 1)
        #expect(store.lexicon.isEmpty)
        #expect(try LexiconStore.read(file) == .empty)
    }

    @Test func addRefusesIPATheVoiceCannotSay() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = LexiconStore(location: .init(configurationDirectory: folder.path))
        let error = await #expect(throws: SpeechError.self) {
            try await store.add(LexiconEntry(grapheme: "chat", pronunciation: .ipa("ǂa"), language: "fr"), checkedWith: p, defaultVoice: "en")
        }
        #expect(error?.code == .invalidIPA)
        #expect(error?.message.contains("'chat'") == true && error?.message.contains("ǂ") == true)
        let unknown = await #expect(throws: SpeechError.self) {
            try await store.add(LexiconEntry(grapheme: "chat", pronunciation: .alias("cat"), language: "xx-yy"), checkedWith: p, defaultVoice: "en")
        }
        #expect(unknown?.code == .unknownVoice)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("lexicon.pls").path))
    }

    @Test func reloadKeepsTheLastGoodFileAndReadsTheFolder() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = LexiconStore(location: .init(configurationDirectory: folder.path))
        let lexicons = folder.appendingPathComponent("lexicons")
        try FileManager.default.createDirectory(at: lexicons, withIntermediateDirectories: true)
        let brands = lexicons.appendingPathComponent("brands.pls")
        try PLS.document(Lexicon(entries: [LexiconEntry(grapheme: "iPhone", pronunciation: .ipa("ˈaɪfoʊn"))]))
            .write(to: brands, atomically: true, encoding: .utf8)
        try await store.add(LexiconEntry(grapheme: "iPhone", pronunciation: .alias("aïe faune"), language: "fr"), checkedWith: p, defaultVoice: "fr")
        #expect(store.reload().isEmpty)
        #expect(store.sources.map { URL(fileURLWithPath: $0.path).lastPathComponent } == ["lexicon.pls", "brands.pls"])
        // Both are French-applicable at equal length: the language-limited user entry wins.
        let plan = try await p.plan(text: "iPhone", defaultVoice: "fr", lexicon: store.lexicon)
        #expect(plan.segments[0].content == .text("aïe faune"))

        // A hand edit that breaks the file: reported with its place, the last good version stays.
        try "<lexicon>\n  <lexeme>\n</lexicon>".write(to: brands, atomically: true, encoding: .utf8)
        let problems = store.reload()
        #expect(problems.map(\.description) == ["\(brands.path):3:1: </lexicon> does not close <lexeme> (opened at line 2, column 3)"])
        #expect(store.lexicon.entries.count == 2)
        // A broken user file is not overwritten by an add.
        let user = folder.appendingPathComponent("lexicon.pls")
        try "<lexicon><oops/></lexicon>".write(to: user, atomically: true, encoding: .utf8)
        await #expect(throws: LexiconFileError.self) {
            try await store.add(LexiconEntry(grapheme: "a", pronunciation: .alias("b")), checkedWith: p, defaultVoice: "fr")
        }
        #expect(try String(contentsOf: user, encoding: .utf8) == "<lexicon><oops/></lexicon>")
    }
}
