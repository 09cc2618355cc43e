// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yDaemon
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// A pause at a word and a resume across a language switch inside one item (`[voice] detect_languages`):
/// a French text whose second sentence the English voice says, paused where the voices change and
/// inside the English sentence. Still one item (one `started`, one `finished`), every word told once
/// at the client's offset, and heard whole by the audio oracle (`HeardWhole`): silent while paused,
/// nothing lost or said twice.
@Suite(.serialized) struct LanguageSwitchPauseTests {
    static let text = "Le conseil municipal s'est réuni hier soir pour discuter du budget. "
        + "The committee will publish its final report on the new railway line next month."

    /// Where the pause is asked, as the client sees the item.
    enum Moment: String, CaseIterable, CustomTestStringConvertible {
        /// Once the French sentence's last word is told: the pause lands where the English voice begins.
        case lastFrenchWord
        /// Once an English word a third into the English sentence is told: paused in the English voice.
        case inTheEnglishSentence

        var testDescription: String { rawValue }
    }

    static var englishStart: Int {
        text.unicodeScalars.count - (text.split(separator: ". ").last.map { $0.unicodeScalars.count } ?? 0)
    }

    @Test func pausedAtAWordAcrossALanguageSwitchAndResumedIsOneItemHeardWhole() async throws {
        var configuration = DaemonConfiguration()
        configuration.detectLanguages = ["fr", "en", "de", "es", "it"]
        let daemon = try await DaemonHarness(configuration: configuration)
        var post = Post.say(Self.text)
        post.lang = "fr"
        let client = try await daemon.client()
        try await client.send(RequestLine(.pronounce(post), id: .string("show")))
        let shown = try #require(try await client.waitFor("pronounce") { $0.id == .string("show") }.ipa)
        // a11yd's "| (en) ", not eSpeak's own "(en)" for a word its French voice flags as English.
        try #require(shown.contains("| (en) "), "the English sentence in an English voice: \(shown)")
        let oracle = HeardWhole(reference: try await HeardWholeTests.reference(post, on: daemon))
        let starts = wordStarts(Self.text)
        let french = starts.filter { $0 < Self.englishStart }, english = starts.filter { $0 >= Self.englishStart }
        for moment in Moment.allCases {
            let recorder = try daemon.recorder()
            let id = try await client.post(post)
            let after = moment == .lastFrenchWord ? french.last! : english[english.count / 3]
            try await client.waitFor("\(moment)") { $0.event == "word" && $0.utterance == id && ($0.start ?? -1) >= after }
            try await client.send(RequestLine(.pause(.word), id: .string("pause \(moment)")))
            #expect(try await client.waitFor("pause reply") { $0.id == .string("pause \(moment)") }.effective == true)
            try await client.waitFor("paused") { $0.event == "paused" && $0.utterance == id }
            let pausedAt = recorder.elapsed()
            let toldBeforeResume = await client.events(of: id).filter { $0.event == "word" }.compactMap(\.start)
            try await Task.sleep(for: .milliseconds(600))
            let resumedAt = recorder.elapsed()
            try await client.send(RequestLine(.resume, id: .string("resume \(moment)")))
            let finished = try await client.finished(id)
            try await Task.sleep(for: .milliseconds(150))
            let recording = recorder.stop()
            #expect(finished.reason == .spoken, "\(moment): \(finished)")
            let events = await client.events(of: id)
            #expect(events.filter { $0.event == "started" }.count == 1, "\(moment)")
            #expect(events.filter { $0.event == "finished" }.count == 1, "\(moment)")
            #expect(events.filter { $0.event == "paused" }.count == 1 && events.filter { $0.event == "resumed" }.count == 1, "\(moment)")
            let told = events.filter { $0.event == "word" }.compactMap(\.start)
            #expect(told == told.sorted() && Set(told).count == told.count, "\(moment): each word told once, in order: \(told)")
            #expect(Set(told).isSubset(of: Set(starts)), "\(moment): words at the client's offsets: \(told)")
            // The pause held inside the item: words before it in one voice, after the resume in the other
            // (or both sides in English), none lost where the voices change.
            #expect(told.contains(french.last!) && told.contains(english.first!), "\(moment): both sides of the switch told: \(told)")
            #expect(toldBeforeResume.contains { $0 >= after } && told.contains { $0 > (toldBeforeResume.max() ?? 0) },
                    "\(moment): words told before the pause and after the resume: \(toldBeforeResume) then \(told)")
            print("\(moment): last word told before the resume at \(toldBeforeResume.max() ?? -1), English from \(english.first!), paused \(String(format: "%.2f-%.2f s", pausedAt, resumedAt))")
            let words = await client.timedEvents(of: id).filter { $0.message.event == "word" }.map { recorder.elapsed(at: $0.at) }
            let problems = oracle.problems(in: recording, pauses: [(pausedAt, resumedAt)], words: words)
            #expect(problems.isEmpty, "\(moment): \(problems)")
        }
        await daemon.shutDown()
    }
}
