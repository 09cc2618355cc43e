// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yDaemon
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The natural voice: the real Piper engine and packaged voice, in its sandboxed worker
/// beside eSpeak, heard at the null sink's monitor.
@Suite(.serialized) struct PiperVoiceTests {
    static let sentence = "Hello, this is the natural voice."
    static let joe = PiperTestVoice.identifier

    /// Heard, its words told in order at the client's offsets, as loud as eSpeak says the same text
    /// (within 1.5 dB) and never clipped.
    @Test func aPostInThePiperVoiceIsHeardWithItsWordsAsLoudAsESpeak() async throws {
        let daemon = try await DaemonHarness(piper: true)
        let client = try await daemon.client()
        var levels: [String: LoudnessTests.Level] = [:]
        for (name, post) in [("piper", Post.say(Self.sentence, voice: Self.joe)), ("espeak", Post.say(Self.sentence, lang: "en-us"))] {
            let recorder = try daemon.recorder()
            let id = try await client.post(post)
            let finished = try await client.finished(id)
            try await Task.sleep(for: .milliseconds(150))
            let recording = recorder.stop()
            #expect(finished.reason == .spoken, "\(name): \(finished)")
            levels[name] = try LoudnessTests.Level(recording)
            if name == "piper" {
                let words = await client.events(of: id).filter { $0.event == "word" }.compactMap(\.start)
                #expect(words == wordStarts(Self.sentence), "every word told once, in order")
                #expect(recording.voicedDuration > 1.0, "the sentence is heard (\(recording.voicedDuration) s voiced)")
            }
        }
        let piper = try #require(levels["piper"]), espeak = try #require(levels["espeak"])
        #expect(abs(piper.decibels(relativeTo: espeak)) <= 1.5, "Piper \(piper), eSpeak \(espeak)")
        #expect(piper.peak < 0.95, "no clipping: \(piper)")
        await daemon.shutDown()
    }

    /// The voices a client can pick, with their engine; an unknown voice is refused by name.
    @Test func voicesAreListedWithTheirEngineAndAnUnknownOneIsRefused() async throws {
        let daemon = try await DaemonHarness(piper: true)
        let client = try await daemon.client()
        try await client.send(RequestLine(.voices, id: .string("voices")))
        let voices = try #require(try await client.waitFor("voices") { $0.id == .string("voices") }.reply.flatMap { reply -> [VoiceInfo]? in
            if case .voices(let voices) = reply { voices } else { nil }
        })
        let joe = try #require(voices.first { $0.identifier == Self.joe })
        #expect(joe.engine == "piper")
        #expect(joe.languages == ["en-us", "en"])
        #expect(joe.quality == "medium")
        #expect(voices.contains { $0.identifier == "fr" && $0.engine == "espeak-ng" })
        try await client.send(RequestLine(.post(.say("hello", voice: "piper:nobody")), id: .string("unknown")))
        let refused = try await client.waitFor("refusal") { $0.id == .string("unknown") }
        #expect(refused.error?.code == "unknown_voice", "\(refused)")
        await daemon.shutDown()
    }

    /// A French span in an English item said by the natural voice is said by eSpeak's French, in
    /// the same item: one `started`, every word told, one `finished`.
    @Test func aSpanInAnotherLanguageIsSaidByThatLanguagesVoiceInTheSameItem() async throws {
        let daemon = try await DaemonHarness(piper: true)
        let client = try await daemon.client()
        let text = "The French say bonjour tout le monde to everyone."
        let french = try #require(text.range(of: "bonjour tout le monde"))
        var post = Post.say(text, voice: Self.joe)
        post.spans = [SpeechSpan(
            start: text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: french.lowerBound),
            length: "bonjour tout le monde".unicodeScalars.count, lang: "fr")]
        let recorder = try daemon.recorder()
        let id = try await client.post(post)
        let finished = try await client.finished(id)
        let recording = recorder.stop()
        #expect(finished.reason == .spoken)
        let events = await client.events(of: id)
        #expect(events.filter { $0.event == "started" }.count == 1)
        // Every English word is told, in order; eSpeak's French may fold "tout le monde" into fewer
        // words (it does when it says French alone too), but tells the span's first.
        let told = events.compactMap { $0.event == "word" ? $0.start : nil }
        #expect(told == told.sorted() && Set(told).count == told.count, "\(told)")
        let english = wordStarts(text).filter { !(15..<36).contains($0) }
        #expect(english.allSatisfy(told.contains), "every English word told: \(told)")
        #expect(told.contains(15), "the French span's first word told: \(told)")
        #expect(recording.voicedDuration > 1.5)
        await daemon.shutDown()
    }

    /// IPA reaches the natural voice as phonemes: the pronunciation given is what is said.
    @Test func anIPASpanIsSaidByThePiperVoice() async throws {
        let daemon = try await DaemonHarness(piper: true)
        let client = try await daemon.client()
        let text = "I say tomato."
        var post = Post.say(text, voice: Self.joe)
        post.spans = [SpeechSpan(start: 6, length: 6, ipa: "təmˈɑːtoʊ")]
        let recorder = try daemon.recorder()
        let id = try await client.post(post)
        let finished = try await client.finished(id)
        let recording = recorder.stop()
        #expect(finished.reason == .spoken, "\(finished)")
        #expect(recording.voicedDuration > 0.5)
        await daemon.shutDown()
    }

    /// Punctuation spoken by name in the natural voice, as eSpeak names it (`,` by eSpeak itself, `!`
    /// in the Piper voice from eSpeak's name for it): heard (the same text without the span is shorter
    /// by at least the names), and the words told are eSpeak's own for the same post, which names
    /// punctuation without telling it as a word.
    @Test func punctuationIsSpokenByNameInThePiperVoice() async throws {
        let daemon = try await DaemonHarness(piper: true)
        let client = try await daemon.client()
        let text = "Wait, now!"
        func heard(_ post: Post) async throws -> (seconds: Double, words: [Int]) {
            let recorder = try daemon.recorder()
            let id = try await client.post(post)
            let finished = try await client.finished(id)
            try await Task.sleep(for: .milliseconds(150))
            let recording = recorder.stop()
            #expect(finished.reason == .spoken, "\(finished)")
            let words = await client.events(of: id).filter { $0.event == "word" }.compactMap(\.start)
            return (recording.voicedDuration, words)
        }
        func named(_ post: Post) -> Post {
            var post = post
            post.spans = [SpeechSpan(start: 0, length: 10, punctuation: true)]
            return post
        }
        let plain = try await heard(.say(text, voice: Self.joe))
        let piper = try await heard(named(.say(text, voice: Self.joe)))
        let espeak = try await heard(named(.say(text, lang: "en-US")))
        #expect(piper.seconds > plain.seconds + 0.6, "comma and exclamation mark heard: \(piper.seconds) s against \(plain.seconds) s")
        #expect(piper.words == espeak.words, "Piper \(piper.words), eSpeak \(espeak.words)")
        #expect(piper.words == [0, 6])
        await daemon.shutDown()
    }

    /// A stop in the middle of the natural voice is silent at once and told `stopped`.
    @Test func aStopSilencesThePiperVoiceAtOnce() async throws {
        let daemon = try await DaemonHarness(piper: true)
        let client = try await daemon.client()
        let recorder = try daemon.recorder()
        let text = HeardWholeTests.englishSentence
        let id = try await client.post(.say(text, voice: Self.joe))
        try await client.waitFor("a word a third in") { $0.event == "word" && $0.utterance == id && ($0.start ?? 0) >= text.count / 3 }
        let stoppedAt = recorder.elapsed()
        try await client.send(RequestLine(.stop))
        let finished = try await client.finished(id)
        try await Task.sleep(for: .milliseconds(300))
        let recording = recorder.stop()
        #expect(finished.reason == .stopped)
        #expect(recording.rms(from: stoppedAt + 0.05) < HeardWhole.silence, "silent 50 ms after the stop")
        #expect(recording.rms(from: stoppedAt - 0.5, to: stoppedAt) > HeardWhole.silence, "it was speaking")
        await daemon.shutDown()
    }

    /// A Piper worker killed while it speaks costs that item (`error`), and the next item in the
    /// natural voice is heard, from a new worker; eSpeak is not touched.
    @Test func aKilledPiperWorkerCostsOneItem() async throws {
        let daemon = try await DaemonHarness(piper: true)
        let client = try await daemon.client()
        // Long enough that the worker is still synthesising when it is killed (it runs several
        // times faster than real time: a short item would be whole in a11yd already, and heard).
        let long = Array(repeating: HeardWholeTests.englishSentence, count: 12).joined(separator: ". ")
        let id = try await client.post(.say(long, voice: Self.joe))
        // Its second word heard: the worker is saying it (`started` is told when the item begins).
        try await client.waitFor("a word heard") { $0.event == "word" && $0.utterance == id && ($0.start ?? 0) > 0 }
        let workers = piperWorkers()
        #expect(workers.count == 1, "one Piper worker: \(workers)")
        for pid in workers { kill(pid, SIGKILL) }
        let lost = try await client.finished(id)
        #expect(lost.reason == .error, "\(lost)")
        let recorder = try daemon.recorder()
        let next = try await client.post(.say(Self.sentence, voice: Self.joe))
        let heard = try await client.finished(next)
        let recording = recorder.stop()
        #expect(heard.reason == .spoken, "\(heard)")
        #expect(recording.voicedDuration > 1.0)
        #expect(piperWorkers().count == 1)
        await daemon.shutDown()
    }

    /// `piper.idle_unload_seconds`: the worker that sat idle that long is ended (its memory given
    /// back), and the next item in the natural voice starts another and is heard.
    @Test func anIdlePiperWorkerIsEndedAndTheNextItemStartsAnother() async throws {
        var configuration = DaemonConfiguration()
        configuration.piperIdleSeconds = 1
        let daemon = try await DaemonHarness(configuration: configuration, piper: true)
        let client = try await daemon.client()
        // The item's worker is seen while it says the item: idle once it has said it all, for as
        // long as the rest plays, it may be ended before the item's `finished`.
        func say() async throws -> (worker: Int32?, finished: ServerMessage) {
            let id = try await client.post(.say(Self.sentence, voice: Self.joe))
            try await client.waitFor("started") { $0.event == "started" && $0.utterance == id }
            let worker = piperWorkers().first
            return (worker, try await client.finished(id))
        }
        let first = try await say()
        #expect(first.finished.reason == .spoken)
        let worker = try #require(first.worker)
        let deadline = ContinuousClock.now + .seconds(10)
        while piperWorkers().contains(worker), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(piperWorkers().isEmpty, "the idle worker was ended")
        let recorder = try daemon.recorder()
        let next = try await say()
        let recording = recorder.stop()
        #expect(next.finished.reason == .spoken, "\(next.finished)")
        #expect(recording.voicedDuration > 1.0)
        #expect(next.worker != nil && next.worker != worker, "a new worker")
        await daemon.shutDown()
    }

    /// Orca, Chromium and Qt pick voices over SSIP: Piper is a module, its voices are listed by file
    /// name, and one chosen by name speaks.
    @Test func anSSIPClientPicksThePiperVoiceByModuleAndName() async throws {
        let daemon = try await DaemonHarness(ssip: true, piper: true)
        let path = try #require(daemon.ssipSocketPath)
        let recorder = try daemon.recorder()
        let replies = try await offThePool { () -> [String] in
            let ssip = try RawSSIPClient(path: path)
            defer { ssip.close() }
            var replies: [String] = []
            for line in [
                "SET self CLIENT_NAME test:piper:main", "LIST OUTPUT_MODULES", "SET self OUTPUT_MODULE piper",
                "LIST SYNTHESIS_VOICES", "SET self SYNTHESIS_VOICE en_US-joe-medium", "SET self NOTIFICATION END on", "SPEAK",
            ] {
                replies.append(try ssip.command(line))
            }
            try ssip.send(Self.sentence + "\r\n.\r\n")
            replies.append(try ssip.readReply())
            replies.append(try ssip.waitForEvent("702 END") ?? "no 702 END")
            return replies
        }
        let recording = recorder.stop()
        #expect(replies[1] == "250-espeak-ng\r\n250-piper\r\n250 OK MODULE LIST SENT\r\n")
        #expect(replies[2].hasPrefix("216 "))
        #expect(replies[3] == "249-en_US-joe-medium\ten-us\tnone\r\n249 OK VOICE LIST SENT\r\n")
        #expect(replies[4].hasPrefix("209 "))
        #expect(replies[7].hasPrefix("225-"), "\(replies[7])")
        #expect(replies[8].hasSuffix("702 END\r\n"), "\(replies[8])")
        #expect(recording.voicedDuration > 1.0)
        await daemon.shutDown()
    }

    /// Orca itself, headless, with the `piper` synthesizer and the Piper voice chosen in its own
    /// preferences (scripts/orca-ssip-test.sh --piper-voice): the built a11yd starts its Piper worker for
    /// Orca's speech (no voice of it is a default, so nothing else would), nothing fails, and it is heard.
    @Test func orcaSpeaksInThePiperVoiceChosenInItsPreferences() async throws {
        let script = PiperTestVoice.packageRoot + "/scripts/orca-ssip-test.sh"
        let logs = NSTemporaryDirectory() + "a11y-orca-piper-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: logs) }
        let result = try await run(
            "/bin/bash", [script, "--a11yd", PiperTestVoice.a11yd, "--piper-voice", PiperTestVoice.name, "--data-home", try PiperTestVoice.dataHome()],
            environment: ["PATH": "/usr/bin:/bin", "ORCA_TEST_KEEP": logs], timeout: .seconds(120))
        let log = (try? String(contentsOfFile: logs + "/a11yd.log", encoding: .utf8)) ?? ""
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)\n\(log)")
        let spokenByPiper = result.stdout.contains("spoken by the Piper voice " + PiperTestVoice.name)
        #expect(spokenByPiper, "\(result.stdout)")
    }

    /// This process's Piper workers running now (their command line names the worker script).
    func piperWorkers() -> [Int32] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry in
            guard let pid = Int32(entry),
                let commandLine = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                String(decoding: commandLine, as: UTF8.self).contains("a11yd_piper_worker.py"),
                parentProcess(of: pid) == getpid(), !isZombie(pid)
            else { return nil }
            return pid
        }
    }
}
