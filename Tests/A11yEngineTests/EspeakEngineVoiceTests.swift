// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Testing

extension EngineTests {
    @Suite("voices")
    struct Voices {
        let engine: EspeakEngine

        init() throws { engine = try makeEngine() }

        @Test func listContainsFrenchAndAmericanEnglish() async throws {
            let voices = await engine.voices()
            #expect(voices.count > 50)
            #expect(voices.contains { $0.identifier == "fr" && $0.languages.contains("fr-fr") })
            #expect(voices.contains { $0.languages.first == "en-us" })
            #expect(Set(voices.map(\.identifier)).count == voices.count, "identifiers are unique")
            #expect(voices.allSatisfy { !$0.languages.isEmpty && !$0.name.isEmpty })
            #expect(voices.allSatisfy { $0.languages.allSatisfy { $0 == $0.lowercased() } })
        }

        @Test(arguments: [
            ("fr", "fr"), ("fr-FR", "fr"), ("fr_FR", "fr"), ("fr_FR.UTF-8", "fr"), ("fr-CA", "fr"),
            ("en", "en"), ("en-US", "en-US"), ("en_US", "en-US"), ("en_US.UTF-8", "en-US"),
            ("en-GB", "en"), ("de", "de"), ("de_DE.UTF-8@euro", "de"), ("es", "es"),
            ("pt-BR", "pt-BR"), ("pt_BR", "pt-BR"), ("C", "en"), ("POSIX", "en"), ("C.UTF-8", "en"),
        ])
        func resolvesLanguageTags(tag: String, voice: String) async throws {
            #expect(try await engine.resolveVoice(language: tag) == voice)
            // Resolved names are usable as segment voices.
            let rendered = try await render(engine, text("ok", voice: voice))
            #expect(rendered.rms > 500)
        }

        @Test func unknownLanguageThrowsUnknownVoice() async throws {
            do {
                _ = try await engine.resolveVoice(language: "xx-YY")
                Issue.record("xx-YY resolved")
            } catch let error as SpeechError {
                #expect(error.code == .unknownVoice)
                #expect(error.message == "no voice for 'xx-YY'; run a11ysay --list-voices")
            }
        }

        @Test func phonemesComeFromEspeak() async throws {
            #expect(try await engine.phonemes(for: "bonjour", voice: "fr") == "bO~Z'ur")
            #expect(try await engine.phonemes(for: "bonjour", voice: "fr", ipa: true) == "bɔ̃ʒˈuʁ")
        }
    }
}
