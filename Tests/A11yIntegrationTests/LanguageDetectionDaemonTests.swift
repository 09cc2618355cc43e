// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yDaemon
import A11yProtocol
import A11yTestSupport
import Testing

/// `[voice] detect_languages` in the running daemon: a French text with an English and a German
/// sentence is one item in three voices, its words told at the client's offsets.
@Suite("Each sentence in its own language, in the daemon")
struct LanguageDetectionDaemonTests {
    static let text = "Le conseil municipal s'est réuni hier soir pour discuter du budget de l'année prochaine. "
        + "The committee will publish its final report on the new railway line next month. "
        + "Die Bürgerinnen und Bürger können ihre Meinung bis Ende des Monats schriftlich einreichen."

    @Test func aFrenchTextWithAnEnglishAndAGermanSentenceIsOneItemInThreeVoices() async throws {
        var configuration = DaemonConfiguration()
        configuration.detectLanguages = ["fr", "en", "de", "es", "it"]
        let daemon = try await DaemonHarness(configuration: configuration)
        let client = try await daemon.client()
        var post = Post.say(Self.text)
        post.lang = "fr"
        try await client.send(RequestLine(.pronounce(post), id: .string("show")))
        let shown = try #require(try await client.waitFor("pronounce") { $0.id == .string("show") }.ipa)
        #expect(shown.contains("(en") && shown.contains("(de"), "an English and a German voice: \(shown)")
        let spoken = try await client.post(post)
        #expect(try await client.finished(spoken).successful == true)
        let events = await client.events(of: spoken)
        #expect(events.filter { $0.event == "started" }.count == 1)
        #expect(events.filter { $0.event == "finished" }.count == 1)
        let words = events.filter { $0.event == "word" }.compactMap(\.start)
        let scalars = Array(Self.text.unicodeScalars)
        func offset(of word: String) -> Int {
            let target = Array(word.unicodeScalars)
            return (0...(scalars.count - target.count)).first { Array(scalars[$0..<$0 + target.count]) == target }!
        }
        for word in ["conseil", "committee", "railway", "Bürgerinnen", "schriftlich"] {
            #expect(words.contains(offset(of: word)), "'\(word)' told at its offset: \(words)")
        }
        // A short French label is not moved.
        var short = Post.say("Option incorrecte")
        short.lang = "fr"
        try await client.send(RequestLine(.pronounce(short), id: .string("short")))
        let label = try #require(try await client.waitFor("short") { $0.id == .string("short") }.ipa)
        #expect(!label.contains("(en") && !label.contains("(it"), "a short French label stays French: \(label)")
        await daemon.shutDown()
    }
}
