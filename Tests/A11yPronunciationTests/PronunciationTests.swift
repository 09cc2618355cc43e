// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
@testable import A11yPronunciation
import Logging
import Testing

/// One real libespeak-ng for every suite (it is one per process anyway).
let sharedEngine = try! EspeakEngine(logger: Logger(label: "a11yd.pronunciation.tests"))
let sharedPronouncer = Pronouncer(engine: sharedEngine)

@Suite("Pronunciation against the real libespeak-ng", .serialized)
struct PronunciationTests {
    let p = sharedPronouncer

    func said(_ ipa: String, voice: String) async throws -> String {
        let plan = try await p.plan(text: "x", spans: [SpeechSpan(start: 0, length: 1, ipa: ipa)], defaultVoice: voice)
        return try await p.showIPA(plan.segments, annotated: false)
    }

    @Test func seedExampleRoundTrips() async throws {
        let out = try await said("mɔ̃.daj.fɔ.nə.fɔ̃.ksjɔ.nə.paʀ.fɛ.tə.ˈmɑ̃", voice: "fr")
        // Dots dropped, ʀ is French /ʁ/, the stress sits on its vowel.
        #expect(out == "mɔ̃dajfɔnəfɔ̃ksjɔnəpaʁfɛtəmˈɑ̃")
    }

    @Test(arguments: [
        ("fr", "ʃɑ̃tœʁ", "ʃɑ̃tˈœʁ"), ("en-us", "ˈkæt", "kˈæt"), ("de", "ˈhaʊs", "hˈaʊs"),
        ("es", "ˈkasa", "kˈasa"), ("it", "ˈkaza", "kˈaza"),
    ])
    func convertsPerLanguage(voice: String, ipa: String, expected: String) async throws {
        #expect(try await said(ipa, voice: voice) == expected)
    }

    /// Aliases and spellings added for the benchmark (docs/pronunciation.md): what eSpeak then says.
    @Test(arguments: [
        // German: ɐ is eSpeak's 3 (printed ɜ), short ü its y, eu its ɔø; aʊ̯ = aʊ.
        ("de", "ˈlɛkɐ", "lˈɛkɜ"), ("de", "ˈhʏtə", "hˈytə"), ("de", "ˈɔʏ̯lə", "ˈɔølə"), ("de", "ˈaʊ̯s", "ˈaʊs"),
        // English: r-coloured vowels written without length.
        ("en-us", "bˈɑɹk", "bˈɑːɹk"),
        // Dutch: ʏ is eSpeak's ɵ, ui (œːʏ) its œy, ɱ its m.
        ("nl", "ˈhʏt", "hˈɵt"), ("nl", "ˈœːʏt", "ˈœyt"), ("nl", "ˈaɱvɑl", "ˈamvɑl"),
        // Czech: ɪ is i, ɦ is h, ou̯ is eSpeak's oʊ.
        ("cs", "ˈʒɪla", "ʒˈila"), ("cs", "ˈɦrat", "hrˈat"), ("cs", "ˈmou̯ka", "mˈoʊka"),
        // Brazilian Portuguese: ɐ is eSpeak's & (printed æ), nasal diphthongs, nasalised glides.
        ("pt-br", "ˈkazɐ", "kˈazæ"), ("pt-br", "ˈsɐ̃w̃", "sˈɐ̃ʊ̃"), ("pt-br", "ˈbẽj̃", "bˈẽj"),
        // Swedish: long ʉ (u-:, printed ʉʉ), ɧ (sx), short y.
        ("sv", "ˈhʉːmʊr", "hˈʉʉmʊr"), ("sv", "ˈɧuː", "sxˈuː"), ("sv", "ˈhʏt", "hˈyt"),
        // Spanish: au without the non-syllabic mark stays a hiatus; with it, the diphthong.
        ("es", "ˈkausa", "kˈausa"), ("es", "ˈkau̯sa", "kˈaʊsa"),
    ])
    func languageAliases(voice: String, ipa: String, expected: String) async throws {
        #expect(try await said(ipa, voice: voice) == expected)
    }

    /// Words eSpeak's IPA once missed, compared with eSpeak reading the spelling (saúdský, zaútočili, zeurde).
    @Test(arguments: [
        // Czech: a vowel before a long ú is not the start of a diphthong (a long vowel is no glide).
        ("cs", "ˈsauːtskiː", "sˈauːtskiː"), ("cs", "ˈzauːtotʃɪlɪ", "zˈauːtotʃili"), ("cs", "ˈpouːt", "pˈouːt"),
        // …while a short glide still is one.
        ("cs", "ˈpoust", "pˈoʊst"),
        // Dutch: long ʏː (eu before r) is eSpeak's Y: (printed øː), not the short u of "hut".
        ("nl", "ˈzʏːrdə", "zˈøːrdə"), ("nl", "ˈdʏːr", "dˈøːr"),
    ])
    func issue12ConverterMisses(voice: String, ipa: String, expected: String) async throws {
        #expect(try await said(ipa, voice: voice) == expected)
    }

    @Test func diphthongSpellingsAndLengthlessKeys() async throws {
        #expect(IPAConverter.diphthongSpellings(of: "aʊ") == ["aʊ\u{032F}", "au\u{032F}"])
        #expect(IPAConverter.diphthongSpellings(of: "ɔø") == ["ɔø\u{032F}", "ɔʏ\u{032F}"])
        #expect(IPAConverter.diphthongSpellings(of: "ts").isEmpty)
        let en = try await p.converter(voice: "en-us")
        #expect(try en.mnemonics(forIPA: "ˈkɑɹ") == (try en.mnemonics(forIPA: "ˈkɑːɹ")), "length-less key")
        // The German alias wins over the generic ɐ → a.
        let de = try await p.converter(voice: "de")
        #expect(try de.mnemonics(forIPA: "ˈlɛkɐ") == "l'Ek3")
    }

    @Test func tonalAccentIsRefused() async throws {
        let sv = try await p.converter(voice: "sv")
        let error = #expect(throws: SpeechError.self) { try sv.mnemonics(forIPA: "²ˈanden") }
        #expect(error?.code == .invalidIPA)
        #expect(error?.message.contains("tonal word accent") == true && error?.message.contains("position 0") == true)
        // A Portuguese tilde on anything but a glide after a nasal vowel is still refused.
        let pt = try await p.converter(voice: "pt-br")
        #expect(throws: SpeechError.self) { try pt.mnemonics(forIPA: "ˈbaz̃") }
    }

    @Test func normalisationRules() async throws {
        let c = try await p.converter(voice: "fr")
        let plain = try c.mnemonics(forIPA: "ʃɑ̃tœʁ")
        #expect(try c.mnemonics(forIPA: "ʃɑ̃.tœʁ") == plain, "syllable dots")
        #expect(try c.mnemonics(forIPA: "ʃɑ̃tˈœʁ") == plain, "French default stress on the last vowel")
        #expect(try c.mnemonics(forIPA: "ˈʃɑ̃tœʁ") == (try c.mnemonics(forIPA: "ʃˈɑ̃tœʁ")), "stress moved onto the vowel")
        // NFC precomposed ã (U+00E3) and NFD a + U+0303 are the same.
        #expect(IPAConverter.normalizeKey("m\u{00E3}w") == IPAConverter.normalizeKey("ma\u{0303}w"), "NFC = NFD")
        let en = try await p.converter(voice: "en-us")
        #expect(try en.mnemonics(forIPA: "t͡ʃɪp") == (try en.mnemonics(forIPA: "tʃɪp")), "tie bar")
        #expect(try en.mnemonics(forIPA: "ˈbiːt") == (try en.mnemonics(forIPA: "ˈbi:t")), "ASCII length mark")
    }

    @Test func unknownSymbolNamesSymbolAndPosition() async throws {
        let c = try await p.converter(voice: "fr")
        let error = #expect(throws: SpeechError.self) { try c.mnemonics(forIPA: "baǂa") }
        #expect(error?.code == .invalidIPA)
        #expect(error?.message.contains("ǂ") == true && error?.message.contains("position 2") == true)
    }

    @Test func spanValidation() async throws {
        for spans in [
            [SpeechSpan(start: 0, length: 0, ipa: "a")], [SpeechSpan(start: 3, length: 5, ipa: "a")],
            [SpeechSpan(start: -1, length: 1, ipa: "a")], [SpeechSpan(start: 0, length: 2)],
            [SpeechSpan(start: 0, length: 3, ipa: "a"), SpeechSpan(start: 2, length: 2, lang: "en")],
        ] {
            let error = await #expect(throws: SpeechError.self) {
                _ = try await p.plan(text: "hello", spans: spans, defaultVoice: "fr")
            }
            #expect(error?.code == .invalidRequest)
        }
    }

    @Test func englishSpanInFrenchText() async throws {
        let text = "Ouvrez le fichier README maintenant"
        let plan = try await p.plan(text: text, spans: [SpeechSpan(start: 18, length: 6, lang: "en")], defaultVoice: "fr")
        #expect(plan.segments.map(\.voice) == ["fr", "en", "fr"])
        #expect(plan.segments.map(\.sourceStart) == [0, 18, 24])
        #expect(try await p.showIPA(plan.segments).contains("(en) "))
    }

    @Test func literalMarkupStaysText() async throws {
        let plan = try await p.plan(text: "<speak>[[a]] &amp;</speak>", defaultVoice: "en-us")
        #expect(plan.segments == [SpeechSegment(content: .text("<speak>[[a]] &amp;</speak>"), voice: "en-us", sourceStart: 0, sourceLength: 26)])
    }

    @Test func spellOutAndOccurrences() async throws {
        let spans = SpeechSpan.occurrences(of: "SNCF", in: "la SNCF et SNCFX", spellOut: true)
        #expect(spans.map(\.start) == [3])
        let plan = try await p.plan(text: "la SNCF et SNCFX", spans: spans, defaultVoice: "fr")
        #expect(plan.segments[1].options.spellOut)
    }
}
