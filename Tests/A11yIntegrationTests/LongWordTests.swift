// SPDX-License-Identifier: GPL-3.0-or-later
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// A long unbroken word (a hash, a base64 blob or a URL in a terminal line, a run of one letter) and a
/// long text are heard as soon as a short text is, in both voices, and a stop silences them at once:
/// the worker neither waits for a whole long word nor reads the whole text before its first clause is said.
/// Heard at the null sink's monitor, real eSpeak-NG and the real Piper worker in its sandbox.
@Suite(.serialized) struct LongWordTests {
    /// Far above a short text's first sound (30-90 ms after the post in the natural voice, a few ms in
    /// eSpeak) and far below what a 2,000-character word took before they were cut by length (1.05 s).
    static let bound = 0.4

    /// A long text's first sound may come no later than `bound`, or on a machine so loaded that a short
    /// text's own first sound (`short`, measured in the same run) took longer, eight times that: in make
    /// test's lanes, or beside the natural voice's HeardWhole suites, the cut worker took up to 6.6 times
    /// a short text's (1.14 s for 200 KB), the old worker 15-42 times unloaded (a 2,000-letter word, 200 KB).
    static func limit(short: Double) -> Double { max(bound, 8 * short) }

    /// `count` hex digits without a space, the same every run: a hash or a blob in a terminal line.
    static func hexWord(_ count: Int) -> String {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let digits = Array("0123456789abcdef")
        return String((0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return digits[Int(state >> 60)]
        })
    }

    /// About 200 KB of prose in sentences (under the post's line limit of 1 MiB).
    static let longText: String = {
        let sentences = [
            "The committee met on Tuesday to talk about the budget for the coming year.",
            "Nobody expected the meeting to last until the evening, but it did.",
            "Several members asked for more time to read the report, and the chair agreed.",
            "The next meeting will be held in the small room on the third floor.",
        ]
        var text = ""
        var number = 0
        while text.utf8.count < 200_000 {
            text += sentences[number % sentences.count] + " "
            number += 1
        }
        return text
    }()

    static let texts: [(name: String, text: String)] = [
        ("a 2,000-character word", hexWord(2_000)),
        ("a run of 2,000 times one letter", String(repeating: "a", count: 2_000)),
        ("a 40,000-character word", hexWord(40_000)),
        ("a 200 KB text", longText),
    ]

    @Test func aLongWordOrTextIsHeardAtOnceAndStoppedAtOnceInTheNaturalVoice() async throws {
        try await heardAtOnceAndStoppedAtOnce(voice: PiperTestVoice.identifier, lang: nil)
    }

    @Test func aLongWordOrTextIsHeardAtOnceAndStoppedAtOnceInESpeak() async throws {
        try await heardAtOnceAndStoppedAtOnce(voice: nil, lang: "en-us")
    }

    /// Each long text: its first sound within `bound` of its post, its words told at their offsets, a
    /// stop silent at once and told `stopped`; then a short text heard within `bound` too (the engine is
    /// not still working through the stopped text), and every item finished exactly once.
    func heardAtOnceAndStoppedAtOnce(voice: String?, lang: String?) async throws {
        let daemon = try await DaemonHarness(piper: voice != nil)
        let client = try await daemon.client()
        func post(_ text: String) -> Post { .say(text, lang: lang, voice: voice) }
        // The voice loaded (a Piper item's first waits for its model).
        let warm = try await client.post(post("Ready."))
        #expect(try await client.finished(warm).reason == .spoken)

        var posted: [UInt64] = []
        /// Seconds from the post to the first audible sample (waited for, up to 10 s).
        func firstSound(of text: String, _ recorder: MonitorRecorder) async throws -> (id: UInt64, seconds: Double, postedAt: Double) {
            let postedAt = recorder.elapsed()
            let id = try await client.post(post(text))
            posted.append(id)
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let heard = recorder.snapshot().firstAudibleTime(after: postedAt) {
                    return (id, heard - postedAt, postedAt)
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw TestFailure("nothing heard of \(text.prefix(40))… within 10 s of its post")
        }

        let short = "Hello there."
        let recorder = try daemon.recorder()
        let baseline = try await firstSound(of: short, recorder)
        _ = try await client.finished(baseline.id)
        for (name, text) in Self.texts {
            let heard = try await firstSound(of: text, recorder)
            print("LongWordTests \(voice ?? lang ?? ""): \(name): first sound \(Int(heard.seconds * 1000)) ms after the post (a short text's: \(Int(baseline.seconds * 1000)) ms)")
            #expect(heard.seconds < Self.limit(short: baseline.seconds), "\(name): first sound \(Int(heard.seconds * 1000)) ms after the post (a short text's: \(Int(baseline.seconds * 1000)) ms)")
            // Speaking for a while: at least its first word told.
            try await client.waitFor("a word of \(name)", timeout: .seconds(10)) { $0.event == "word" && $0.utterance == heard.id }
            let stoppedAt = recorder.elapsed()
            try await client.send(RequestLine(.stop))
            let finished = try await client.finished(heard.id)
            #expect(finished.reason == .stopped, "\(name): \(finished)")
            let told = await client.events(of: heard.id).filter { $0.event == "word" }.compactMap(\.start)
            let starts = Set(wordStarts(text))
            #expect(!told.isEmpty && told.allSatisfy(starts.contains), "\(name): words told at \(told.prefix(20)), not where words start")
            #expect(told == told.sorted() && Set(told).count == told.count, "\(name): words told in order, once: \(told.prefix(20))")

            // Silence for a while after the stop; then a short text, heard as soon as ever.
            try await Task.sleep(for: .milliseconds(300))
            let next = try await firstSound(of: short, recorder)
            #expect(next.seconds < Self.limit(short: baseline.seconds), "after \(name) was stopped, a short text heard \(Int(next.seconds * 1000)) ms after its post")
            #expect(try await client.finished(next.id).reason == .spoken)
            let recording = recorder.snapshot()
            #expect(recording.rms(from: stoppedAt + 0.05, to: next.postedAt) < HeardWhole.silence, "\(name): silent 50 ms after the stop")
            #expect(recording.rms(from: heard.postedAt + heard.seconds, to: stoppedAt) > HeardWhole.silence, "\(name): it was heard")
        }
        recorder.stop()
        for id in posted {
            #expect(await client.events(of: id).filter { $0.event == "finished" }.count == 1, "#\(id) finished once")
        }
        await daemon.shutDown()
    }
}
