// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
@testable import A11yPronunciation
import Testing

/// SSML documents planned against the real libespeak-ng (voices resolved, IPA converted).
@Suite("SSML plans", .serialized)
struct SSMLPlanTests {
    let p = sharedPronouncer

    func planned(_ ssml: String, voice: String = "fr", sourceLocation: SourceLocation = #_sourceLocation) async throws -> SpeechPlan {
        let plan = try await p.plan(ssml: ssml, defaultVoice: voice)
        checkConsistent(plan, sourceLocation: sourceLocation)
        return plan
    }

    /// Every `.text` segment is the slice of `spokenText` it claims; marks agree with segments.
    func checkConsistent(_ plan: SpeechPlan, sourceLocation: SourceLocation = #_sourceLocation) {
        let scalars = Array(plan.spokenText.unicodeScalars)
        for segment in plan.segments {
            #expect(segment.sourceStart >= 0 && segment.sourceStart + segment.sourceLength <= scalars.count, sourceLocation: sourceLocation)
            if case .text(let text) = segment.content {
                var view = String.UnicodeScalarView()
                view.append(contentsOf: scalars[segment.sourceStart..<segment.sourceStart + segment.sourceLength])
                #expect(String(view) == text, sourceLocation: sourceLocation)
            }
        }
        #expect(plan.marks.map(\.name) == plan.segments.compactMap(\.options.markBefore), sourceLocation: sourceLocation)
        for mark in plan.marks {
            #expect(plan.segments[mark.segmentIndex].options.markBefore == mark.name, sourceLocation: sourceLocation)
            #expect(plan.segments[mark.segmentIndex].sourceStart == mark.offset, sourceLocation: sourceLocation)
        }
    }

    func texts(_ plan: SpeechPlan) -> [String] {
        plan.segments.map {
            switch $0.content {
            case .text(let text): text
            case .phonemes(let mnemonics): "[[\(mnemonics)]]"
            }
        }
    }

    func refused(_ ssml: String, _ fragment: String, code: SpeechError.Code = .invalidSSML, sourceLocation: SourceLocation = #_sourceLocation) async {
        let error = await #expect(throws: SpeechError.self, sourceLocation: sourceLocation) {
            _ = try await p.plan(ssml: ssml, defaultVoice: "fr")
        }
        #expect(error?.code == code, sourceLocation: sourceLocation)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "-") lacks '\(fragment)'", sourceLocation: sourceLocation)
    }

    @Test func plainTextWhitespaceCollapsed() async throws {
        let plan = try await planned("<speak>\n  Bonjour   le\n monde  \n</speak>")
        #expect(plan.spokenText == "Bonjour le monde")
        #expect(plan.segments == [SpeechSegment(content: .text("Bonjour le monde"), voice: "fr", sourceStart: 0, sourceLength: 16)])
        #expect(plan.marks.isEmpty)
    }

    @Test func speakLangAndVoiceSwitchVoices() async throws {
        let english = try await planned(#"<speak xml:lang="en-US">Hello</speak>"#)
        #expect(english.segments.map(\.voice) == [try await p.engine.resolveVoice(language: "en-US")])

        let mixed = try await planned(#"<speak>Ouvrez <lang xml:lang="en">README</lang> maintenant</speak>"#)
        #expect(mixed.spokenText == "Ouvrez README maintenant")
        #expect(texts(mixed) == ["Ouvrez", "README", "maintenant"])
        #expect(mixed.segments.map(\.voice) == ["fr", "en", "fr"])
        #expect(mixed.segments.map(\.sourceStart) == [0, 7, 14])
        #expect(try await p.showIPA(mixed.segments).contains("(en) "))

        let voices = try await planned(#"<speak><voice name="de">Hallo</voice> <voice language="es">hola</voice> <voice xml:lang="it" gender="female">ciao</voice></speak>"#)
        #expect(voices.segments.map(\.voice) == ["de", "es", "it"])
        #expect(voices.spokenText == "Hallo hola ciao")
    }

    @Test func paragraphsAndSentencesAreSeparateSegments() async throws {
        let plan = try await planned("<speak><p><s>Un.</s><s>Deux.</s></p><p>Trois.</p></speak>")
        #expect(plan.spokenText == "Un. Deux. Trois.")
        #expect(texts(plan) == ["Un.", "Deux.", "Trois."])
        #expect(plan.segments.map(\.sourceStart) == [0, 4, 10])
    }

    @Test func phonemeUsesTheConverterForTheVoiceInForce() async throws {
        let ipa = "mɔ̃.daj.fɔ.nə.fɔ̃.ksjɔ.nə.paʀ.fɛ.tə.ˈmɑ̃"
        let plan = try await planned(#"<speak>Le <phoneme alphabet="ipa" ph="\#(ipa)">blablabla</phoneme> !</speak>"#)
        #expect(plan.spokenText == "Le blablabla !")
        let expected = try await p.mnemonics(forIPA: ipa, voice: "fr")
        #expect(plan.segments[1].content == .phonemes(expected))
        #expect((plan.segments[1].sourceStart, plan.segments[1].sourceLength) == (3, 9))

        let english = try await planned(#"<speak><lang xml:lang="en-US"><phoneme ph="ˈkæt">cat</phoneme></lang></speak>"#)
        #expect(english.segments.first?.content == .phonemes(try await p.mnemonics(forIPA: "ˈkæt", voice: english.segments[0].voice)))
    }

    @Test func showIPAOfTheSeedExample() async throws {
        let plan = try await planned(#"<speak><phoneme alphabet="ipa" ph="mɔ̃.daj.fɔ.nə.fɔ̃.ksjɔ.nə.paʀ.fɛ.tə.ˈmɑ̃">blablabla</phoneme></speak>"#)
        // The same IPA as the span test gives: dots dropped, ʀ is /ʁ/, stress on its vowel.
        #expect(try await p.showIPA(plan.segments, annotated: false) == "mɔ̃dajfɔnəfɔ̃ksjɔnəpaʁfɛtəmˈɑ̃")
    }

    @Test func telephoneInFrenchIsReadInPairs() async throws {
        let plan = try await planned(#"<speak>Appelez le <say-as interpret-as="telephone">06.11.22.33.06</say-as>.</speak>"#)
        #expect(plan.spokenText == "Appelez le zéro six, onze, vingt-deux, trente-trois, zéro six.")
        // Same style as the text around it: one segment, no extra pause.
        #expect(texts(plan) == ["Appelez le zéro six, onze, vingt-deux, trente-trois, zéro six."])
        #expect(SSMLTelephone.reading("06.11.22.33.06", language: "fr") == "zéro six, onze, vingt-deux, trente-trois, zéro six")
        #expect(SSMLTelephone.reading("+33 6 71 80 91 00", language: "fr") == "plus, trente-trois, six, soixante et onze, quatre-vingts, quatre-vingt-onze, zéro zéro")
        #expect(SSMLTelephone.reading("3615", language: "fr") == "trente-six, quinze")
        #expect(SSMLTelephone.reading("112", language: "fr") == "un, douze")
    }

    @Test func telephoneInEnglishIsDigitByDigitGroupedAsWritten() async throws {
        let plan = try await planned(#"<speak xml:lang="en-US"><say-as interpret-as="telephone">(555) 010-4477</say-as></speak>"#)
        #expect(plan.spokenText == "five five five, zero one zero, four four seven seven")
        #expect(SSMLTelephone.reading("06 11", language: "de") == "0 6, 1 1")
    }

    @Test func sayAsCharactersSpells() async throws {
        let plan = try await planned(#"<speak>la <say-as interpret-as="characters">SNCF</say-as> et <say-as interpret-as="spell-out">RATP</say-as></speak>"#)
        #expect(texts(plan) == ["la", "SNCF", "et", "RATP"])
        #expect(plan.segments.map(\.options.spellOut) == [false, true, false, true])
        #expect(plan.spokenText == "la SNCF et RATP")
    }

    @Test func breaksBecomePausesBeforeTheNextSegment() async throws {
        let plan = try await planned(#"<speak>un <break time="500ms"/>deux<break time="1.5s"/> trois <break strength="strong"/><break/></speak>"#)
        #expect(texts(plan) == ["un", "deux", "trois", ""])
        #expect(plan.segments.map(\.options.pauseBeforeMilliseconds) == [0, 500, 1500, 1100])
        #expect(plan.spokenText == "un deux trois")
        let none = try await planned(#"<speak>a<break strength="none"/>b</speak>"#)
        #expect(none.segments.map(\.options.pauseBeforeMilliseconds) == [0, 0])
    }

    @Test func prosodyScalesMultiply() async throws {
        let plan = try await planned("""
            <speak><prosody rate="x-slow">lent</prosody> <prosody rate="+20%" pitch="-10%" volume="50%">\
            a<prosody rate="150%" volume="+6dB">b</prosody></prosody> <prosody rate="2">vite</prosody> \
            <prosody pitch="x-high" volume="silent">c</prosody></speak>
            """)
        let options = plan.segments.map(\.options)
        #expect(texts(plan) == ["lent", "a", "b", "vite", "c"])
        #expect(options[0].rateScale == 0.5)
        #expect(abs(options[1].rateScale - 1.2) < 1e-9 && abs(options[1].pitchScale - 0.9) < 1e-9 && options[1].volumeScale == 0.5)
        #expect(abs(options[2].rateScale - 1.8) < 1e-9 && abs(options[2].volumeScale - 0.5 * 1.9953) < 1e-3)
        #expect(options[3].rateScale == 2)
        #expect(options[4].pitchScale == 1.5 && options[4].volumeScale == 0)
    }

    @Test func marksGoBeforeTheirSegment() async throws {
        let plan = try await planned(#"<speak>Bonjour <mark name="m"/>le monde<mark name="a"/><mark name="end"/></speak>"#)
        #expect(texts(plan) == ["Bonjour", "le monde", "", ""])
        #expect(plan.segments.map(\.options.markBefore) == [nil, "m", "a", "end"])
        #expect(plan.marks == [
            SpeechPlan.Mark(name: "m", segmentIndex: 1, offset: 8), SpeechPlan.Mark(name: "a", segmentIndex: 2, offset: 16),
            SpeechPlan.Mark(name: "end", segmentIndex: 3, offset: 16),
        ])
        // A mark then a break: the mark is heard before the pause.
        let paused = try await planned(#"<speak>a <mark name="m"/><break time="1s"/>b</speak>"#)
        #expect(texts(paused) == ["a", "", "b"])
        #expect(paused.segments.map(\.options.markBefore) == [nil, "m", nil])
        #expect(paused.segments.map(\.options.pauseBeforeMilliseconds) == [0, 0, 1000])
    }

    @Test func subAndEmphasis() async throws {
        let plan = try await planned(#"<speak>la <sub alias="Société nationale des chemins de fer">SNCF</sub> est <emphasis level="strong">très</emphasis> ponctuelle</speak>"#)
        #expect(plan.spokenText == "la Société nationale des chemins de fer est très ponctuelle")
        // Emphasis changes nothing: one segment.
        #expect(texts(plan) == [plan.spokenText])
    }

    @Test func refusedValues() async {
        await refused(#"<speak><phoneme alphabet="x-sampa" ph="a">a</phoneme></speak>"#, "alphabet 'x-sampa'")
        await refused(#"<speak><phoneme alphabet="ipa">a</phoneme></speak>"#, "needs a non-empty ph")
        await refused(#"<speak><phoneme ph="baǂa">a</phoneme></speak>"#, "line 1, column 8: <phoneme> ph:", code: .invalidIPA)
        await refused(#"<speak><lang>a</lang></speak>"#, "needs xml:lang")
        await refused(#"<speak><lang xml:lang="tlh">a</lang></speak>"#, "<lang>", code: .unknownVoice)
        await refused(#"<speak><break time="5"/></speak>"#, "needs a unit")
        await refused(#"<speak><break time="2min"/></speak>"#, "needs a unit")
        await refused(#"<speak><break time="1.2.3s"/></speak>"#, "not a non-negative duration")
        await refused(#"<speak><break time="-1s"/></speak>"#, "not a non-negative duration")
        await refused(#"<speak><break time="90s"/></speak>"#, "over 60 s")
        await refused(#"<speak><break strength="huge"/></speak>"#, "strength 'huge'")
        await refused(#"<speak><prosody rate="quick">a</prosody></speak>"#, "rate 'quick'")
        await refused(#"<speak><prosody pitch="200Hz">a</prosody></speak>"#, "Hz and semitones")
        await refused(#"<speak><say-as interpret-as="date">1/2</say-as></speak>"#, "interpret-as 'date' is not supported")
        await refused(#"<speak><say-as>12</say-as></speak>"#, "needs interpret-as")
        await refused(#"<speak><mark/></speak>"#, "needs a non-empty name")
        await refused(#"<speak><sub>SNCF</sub></speak>"#, "needs alias")
        await refused("<speak>a<b>b</b></speak>", "unknown element <b>")
    }

    @Test func synthesisReportsTheMarkBetweenTheRightWords() async throws {
        let plan = try await planned(#"<speak>Bonjour tout <mark name="here"/>le monde</speak>"#)
        #expect(plan.spokenText == "Bonjour tout le monde")
        var words: [WordMark] = []
        var marks: [NamedMark] = []
        var frames = 0
        let request = Utterance(segments: plan.segments, rate: 175, pitch: 50, volume: 100)
        for try await chunk in sharedEngine.synthesize(request) {
            words += chunk.words
            marks += chunk.marks
            frames += chunk.samples.count
        }
        let scalars = Array(plan.spokenText.unicodeScalars)
        let said = words.map { word in
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[word.start..<word.start + word.length])
            return String(view)
        }
        #expect(said == ["Bonjour", "tout", "le", "monde"])
        #expect(marks.map(\.name) == ["here"])
        let mark = try #require(marks.first)
        #expect(words[1].frame < mark.frame && mark.frame <= words[2].frame, "tout \(words[1].frame) < here \(mark.frame) <= le \(words[2].frame)")
        #expect(mark.frame < frames)
    }

    @Test func telephoneWordEventsPointIntoSpokenText() async throws {
        let plan = try await planned(#"<speak><say-as interpret-as="telephone">06.11</say-as></speak>"#)
        var words: [WordMark] = []
        for try await chunk in sharedEngine.synthesize(Utterance(segments: plan.segments, rate: 175, pitch: 50, volume: 100)) {
            words += chunk.words
        }
        let scalars = Array(plan.spokenText.unicodeScalars)
        let said = words.map { String(String.UnicodeScalarView(scalars[$0.start..<$0.start + $0.length])) }
        #expect(said == ["zéro", "six", "onze"])
    }
}
