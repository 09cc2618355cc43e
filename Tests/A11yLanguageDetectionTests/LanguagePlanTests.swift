// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yLanguageDetection
import A11yPronunciation
import Testing

@Suite("Each sentence in its own language: the plan, with the real detectors")
struct LanguagePlanTests {
    let pronouncer = Pronouncer(engine: VoicePerLanguage())

    private func languages(_ detector: any LanguageDetecting = LanguageDetector(languages: fiveLanguages), own: String = "fr") -> LanguageSwitch {
        LanguageSwitch(detector: detector, decision: LanguageDecision(listed: fiveLanguages), own: own)
    }

    static let mixed = "Le conseil municipal s'est réuni hier soir pour discuter du budget de l'année prochaine. "
        + "The committee will publish its final report on the new railway line next month. "
        + "Die Bürgerinnen und Bürger können ihre Meinung bis Ende des Monats schriftlich einreichen. "
        + "La séance a été levée à vingt-deux heures après un long débat."

    @Test func aFrenchTextWithAnEnglishAndAGermanSentenceIsSaidInThreeVoicesAtTheClientsOffsets() async throws {
        let plan = try await pronouncer.plan(text: Self.mixed, defaultVoice: "voice-fr", languages: languages())
        #expect(plan.voicedPieces.map(\.voice) == ["voice-fr", "voice-en", "voice-de", "voice-fr"])
        #expect(plan.voicedPieces.map(\.text).joined() == Self.mixed)
        #expect(plan.voicedPieces[1].text == "The committee will publish its final report on the new railway line next month. ")
        for (a, b) in zip(plan.segments, plan.segments.dropFirst()) { #expect(a.sourceStart + a.sourceLength == b.sourceStart) }
    }

    @Test func withoutListedLanguagesNothingChanges() async throws {
        let off = LanguageSwitch(detector: LanguageDetector(languages: []), decision: LanguageDecision(listed: []), own: "fr")
        let plan = try await pronouncer.plan(text: Self.mixed, defaultVoice: "voice-fr", languages: off)
        #expect(plan.voicedPieces.map(\.voice) == ["voice-fr"])
    }

    @Test func aTextAllInItsOwnLanguageIsPlannedAsBefore() async throws {
        let text = "Le conseil municipal s'est réuni hier soir. La séance a été levée à vingt-deux heures."
        let plain = try await pronouncer.plan(text: text, defaultVoice: "voice-fr")
        let detected = try await pronouncer.plan(text: text, defaultVoice: "voice-fr", languages: languages())
        #expect(detected == plain)
    }

    @Test func aSpansLanguageWinsOverTheDetector() async throws {
        let english = "The committee will publish its final report next month."
        let text = "Il a dit : \(english)"
        let start = "Il a dit : ".unicodeScalars.count
        let spans = [SpeechSpan(start: start, length: english.unicodeScalars.count, lang: "fr")]
        let plan = try await pronouncer.plan(text: text, spans: spans, defaultVoice: "voice-fr", languages: languages())
        #expect(plan.segments.allSatisfy { $0.voice == "voice-fr" })
    }

    @Test func ssmlLangWinsAndUnmarkedSentencesAreDetected() async throws {
        let ssml = """
            <speak>Bonjour à tous et bienvenue dans cette émission consacrée aux sciences. \
            <lang xml:lang="fr">The committee will publish its final report next month.</lang> \
            <mark name="m"/>The weather will be sunny and warm for the rest of the week.</speak>
            """
        let plan = try await pronouncer.plan(ssml: ssml, defaultVoice: "voice-fr", languages: languages())
        let voices = plan.voicedPieces.filter { !$0.text.isEmpty }.map(\.voice)
        #expect(voices == ["voice-fr", "voice-fr", "voice-en"])
        let mark = try #require(plan.marks.first)
        #expect(plan.segments[mark.segmentIndex].options.markBefore == "m")
    }

    @Test(arguments: ["a", "é", "Z", "?", " ", "OK", "Fichier", "Option incorrecte", "Mises à jour suggérées", "Nom accessible"])
    func aKeyAWordOrAShortLabelStaysInItsOwnLanguage(_ text: String) async throws {
        let detector = CountingDetector(languages: fiveLanguages)
        let plan = try await pronouncer.plan(text: text, defaultVoice: "voice-fr", languages: languages(detector))
        #expect(plan.segments.allSatisfy { $0.voice == "voice-fr" })
        if text.unicodeScalars.count <= 1 || !text.contains(" ") {
            // A character or a word is never even shown to the detector.
            #expect(detector.asked.withLock { $0 }.isEmpty)
        }
    }

    @Test func anyTextIsPlannedSafelyAndTheDetectorReadsABoundedPart() async throws {
        let detector = CountingDetector(languages: fiveLanguages)
        let sentence = "The committee will publish its final report on the new railway line next month. "
        let huge = String(repeating: sentence, count: 20_000) + String(repeating: "x", count: 100_000)
        let plan = try await pronouncer.plan(text: huge, defaultVoice: "voice-fr", languages: languages(detector))
        let read = detector.asked.withLock { $0.reduce(0) { $0 + $1.utf8.count } }
        #expect(read <= LanguageSwitch.maximumDetectedBytes + LanguageDecision.maximumBytes)
        #expect(plan.voicedPieces.map(\.text).joined() == huge)
        for text in ["🙂🙂 🙂. 🙂", "שלום עולם, מה שלומך היום? Hello.", "Привет, как дела у тебя сегодня?", "中文文本没有空格也可以。", String(repeating: "é", count: 5000)] {
            let plan = try await pronouncer.plan(text: text, defaultVoice: "voice-fr", languages: languages())
            #expect(plan.voicedPieces.map(\.text).joined() == text)
        }
    }

    @Test func aLongSentenceChangesLanguageAtAClause() async throws {
        let text = "Le directeur a expliqué longuement aux journalistes présents dans la salle de conférence, "
            + "and then he said that the company would open three new offices in the United States next year."
        let plan = try await pronouncer.plan(text: text, defaultVoice: "voice-fr", languages: languages())
        #expect(plan.voicedPieces.map(\.voice) == ["voice-fr", "voice-en"])
    }

    /// Short sentences with no longer one beside them are decided together: each alone is a short
    /// text, which keeps its own language, so "Try again." could never move.
    @Test(arguments: [
        ("File name not specified. Try again.", "voice-en"),
        ("Nom de fichier absent. Réessayez plus tard.", "voice-fr"),
    ])
    func shortSentencesTogetherAreOneText(_ text: String, _ voice: String) async throws {
        let plan = try await pronouncer.plan(text: text, defaultVoice: "voice-fr", languages: languages())
        #expect(plan.voicedPieces.map(\.voice) == [voice], "\(plan.voicedPieces)")
        #expect(plan.voicedPieces.map(\.text).joined() == text)
    }

    /// Orca's SSML: a mark before every word (`<mark name="start:end"/>`, offsets into Orca's string).
    @Test func orcasMarkBeforeEveryWordStillSwitchesBySentence() async throws {
        var ssml = "<speak>"
        var offset = 0
        for word in Self.mixed.split(separator: " ", omittingEmptySubsequences: false) {
            let length = word.unicodeScalars.count
            ssml += "<mark name=\"\(offset):\(offset + length)\"/>\(word) "
            offset += length + 1
        }
        ssml += "</speak>"
        let plan = try await pronouncer.plan(ssml: ssml, defaultVoice: "voice-fr", languages: languages())
        var voices: [String] = []
        for piece in plan.voicedPieces where !piece.text.trimmed.isEmpty && voices.last != piece.voice { voices.append(piece.voice) }
        #expect(voices == ["voice-fr", "voice-en", "voice-de", "voice-fr"], "\(plan.voicedPieces.map { "[\($0.voice)] \($0.text)" })")
        #expect(plan.marks.count == Self.mixed.split(separator: " ").count)
    }
}
