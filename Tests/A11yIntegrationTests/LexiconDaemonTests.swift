// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// The user's lexicon through the daemon: managed with `lexicon` requests, applied to
/// every client's speech, kept in the user's lexicon.pls.
@Suite(.serialized) struct LexiconDaemonTests {
    func ipa(of post: Post, _ client: TestClient, tag: String) async throws -> String {
        try await client.send(RequestLine(.pronounce(post), id: .string(tag)))
        return try #require(try await client.waitFor(tag) { $0.id == .string(tag) }.ipa)
    }

    func lexicon(_ request: LexiconRequest, _ client: TestClient, tag: String) async throws -> ServerMessage {
        try await client.send(RequestLine(.lexicon(request), id: .string(tag)))
        return try await client.waitFor(tag) { $0.id == .string(tag) }
    }

    @Test func anEntryChangesEveryClientsSpeechUntilRemoved() async throws {
        let daemon = try await DaemonHarness()
        let editor = try await daemon.client()
        let other = try await daemon.client()
        let chat = try await ipa(of: .say("chat", lang: "fr"), other, tag: "chat")
        let pommeBefore = try await ipa(of: .say("pomme", lang: "fr"), other, tag: "before")
        #expect(pommeBefore != chat)

        let added = try await lexicon(LexiconRequest(.add, grapheme: "pomme", ipa: "ʃa", lang: "fr"), editor, tag: "add")
        #expect(added.ok == true, "\(added.error?.message ?? "")")
        // Another client's post, the next utterance: said as "chat".
        #expect(try await ipa(of: .say("pomme", lang: "fr"), other, tag: "after") == chat)
        #expect(try await ipa(of: .say("Pomme", lang: "fr"), other, tag: "case") == chat, "case-insensitive by default")
        // Not in English, not inside another word.
        #expect(try await ipa(of: .say("pomme", lang: "en"), other, tag: "english") != chat)
        #expect(try await ipa(of: .say("pommes", lang: "fr"), other, tag: "plural") != chat)
        // Kept in the user's file, in PLS.
        let file = try String(contentsOfFile: daemon.lexiconFolder + "/lexicon.pls", encoding: .utf8)
        #expect(file.contains("<grapheme>pomme</grapheme>") && file.contains("ʃa"), "\(file)")

        let listed = try await lexicon(LexiconRequest(.list), editor, tag: "list")
        guard case .lexicon(let entries)? = listed.reply else {
            Issue.record("no entries: \(listed)")
            return
        }
        #expect(entries.map(\.entry.graphemes) == [["pomme"]])
        #expect(entries.first?.entry.language == "fr")

        let removed = try await lexicon(LexiconRequest(.remove, grapheme: "pomme", lang: "fr"), editor, tag: "remove")
        #expect(removed.ok == true)
        #expect(try await ipa(of: .say("pomme", lang: "fr"), other, tag: "removed") == pommeBefore)
        await daemon.shutDown()
    }

    @Test func whatAClientStatesExplicitlyWins() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        _ = try await lexicon(LexiconRequest(.add, grapheme: "pomme", ipa: "ʃa", lang: "fr"), client, tag: "add")
        let chat = try await ipa(of: .say("chat", lang: "fr"), client, tag: "chat")
        let poire = try await ipa(of: .say("poire", lang: "fr"), client, tag: "poire")
        // An IPA span over the word wins over the lexicon.
        var spanned = Post.say("pomme", lang: "fr")
        spanned.spans = [.init(start: 0, length: 5, ipa: "pwaʁ")]
        #expect(try await ipa(of: spanned, client, tag: "span") == poire)
        // SSML <sub> too; but plain SSML text follows the lexicon.
        #expect(try await ipa(of: Post(ssml: #"<speak xml:lang="fr"><sub alias="poire">pomme</sub></speak>"#), client, tag: "sub") == poire)
        #expect(try await ipa(of: Post(ssml: #"<speak xml:lang="fr">pomme</speak>"#), client, tag: "ssml") == chat)
        await daemon.shutDown()
    }

    @Test func anEntryTheVoiceCannotSayIsRefusedWhenAdded() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let refused = try await lexicon(LexiconRequest(.add, grapheme: "pomme", ipa: "bɔ̃ǂuʁ", lang: "fr"), client, tag: "bad")
        #expect(refused.error?.code == "invalid_ipa", "\(refused)")
        let incomplete = try await lexicon(LexiconRequest(.add, grapheme: "pomme"), client, tag: "none")
        #expect(incomplete.error?.code == "invalid_request")
        let listed = try await lexicon(LexiconRequest(.list), client, tag: "list")
        guard case .lexicon(let entries)? = listed.reply else {
            Issue.record("no list: \(listed)")
            return
        }
        #expect(entries.isEmpty)
        await daemon.shutDown()
    }

    /// A word given a long word's IPA is heard as long as that word takes, not as the short word.
    @Test func theLexiconIsHeardOnTheNullSink() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        func seconds(_ post: Post, _ tag: String) async throws -> Double {
            try await client.send(RequestLine(.render(post), id: .string(tag)))
            let audio = try #require(try await client.waitFor(tag) { $0.id == .string(tag) }.audio)
            return Double(audio.samples.count) / Double(audio.format.sampleRate)
        }
        /// From the first audible sample to the last, as recorded from the null sink.
        func heard(_ text: String) async throws -> Double {
            let recorder = try daemon.recorder()
            let id = try await client.post(.say(text, lang: "fr"))
            #expect(try await client.finished(id).successful == true)
            let recording = recorder.stop()
            let first = try #require(recording.firstAudibleTime())
            return try #require(recording.lastAudibleTime()) - first
        }
        let longWord = "anticonstitutionnellement"
        let plain = try await heard("pomme")
        let long = try await heard(longWord)
        let longRendered = try await seconds(.say(longWord, lang: "fr"), "long")
        _ = try await lexicon(LexiconRequest(.add, grapheme: "pomme", alias: longWord, lang: "fr"), client, tag: "alias")
        let rendered = try await seconds(.say("pomme", lang: "fr"), "rendered")
        #expect(abs(rendered - longRendered) < 0.1, "render follows the lexicon: \(rendered) s vs \(longRendered) s")
        let changed = try await heard("pomme")
        #expect(changed > plain + 0.4, "heard \(changed) s with the lexicon vs \(plain) s without")
        #expect(abs(changed - long) < 0.15, "heard \(changed) s, as long as '\(longWord)' (\(long) s)")
        await daemon.shutDown()
    }
}
