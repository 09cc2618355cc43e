// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// "Spoken" means heard: items paused and resumed at every point that matters, through every
/// front end, are checked against the null sink's recording by the audio oracle (`HeardWhole`):
/// heard whole and once, silent while paused, their words told as they are heard.
@Suite(.serialized) struct HeardWholeTests {
    /// About 3.5 s of French at the default rate.
    static let sentence = "mon ami Émile a lu le long roman en une année, le long du lac, mais lui, non, il a mal"
    /// Where a pause is asked, as the client sees the item.
    enum Moment: String, CustomTestStringConvertible, CaseIterable {
        /// Right after the post is accepted: the text is still being synthesised.
        case afterPost
        /// At `started`: for a screenChanged item, during its earcon.
        case started
        /// Once a word a third of the way in was told.
        case middle
        /// Once the last word was told.
        case lastWord

        var testDescription: String { rawValue }
    }

    struct Scenario: CustomTestStringConvertible, Sendable {
        var text = HeardWholeTests.sentence
        var kind = NotificationKind.announcement
        var boundary: PauseBoundary
        var moment: Moment
        /// nil: the daemon's default (eSpeak's French).
        var voice: String?
        var testDescription: String {
            "\(boundary) pause at \(moment)\(kind == .screenChanged ? " of a screenChanged" : "")\(voice.map { " in \($0)" } ?? "")"
        }

        var post: Post { .say(text, kind: kind, voice: voice) }
    }

    /// About 4 s of English in the natural voice: its pauses and stops must hold as eSpeak's do.
    static let englishSentence = "my friend Emily read the long novel in one year, along the lake, but he did not, he was ill"

    /// The scenarios of a pause at `boundary` again, in the Piper voice.
    static func piperScenarios(pausedAt boundary: PauseBoundary, _ part: Part) -> [Scenario] {
        scenarios(pausedAt: boundary, part).map { scenario in
            var piper = scenario
            piper.voice = PiperTestVoice.identifier
            piper.text = scenario.text == sentence ? englishSentence : englishSentence + " " + englishSentence
            return piper
        }
    }

    /// The scenarios of a pause at one boundary in one voice come in two parts of about half a minute,
    /// which share no text (so no unpaused reference either): each is a suite of its own on a daemon of
    /// its own, and the suites run side by side.
    enum Part {
        /// Every moment a pause is asked at, in the sentence.
        case moments
        /// During a screenChanged item's earcon, and right after a long text is posted.
        case earconAndLongText
    }

    /// The scenarios of a pause at `boundary`: `part` of them.
    static func scenarios(pausedAt boundary: PauseBoundary, _ part: Part) -> [Scenario] {
        switch part {
        case .moments:
            Moment.allCases.map { Scenario(boundary: boundary, moment: $0) }
        case .earconAndLongText:
            [Scenario(kind: .screenChanged, boundary: boundary, moment: .started),
             Scenario(text: longSentence + " " + sentence, boundary: boundary, moment: .afterPost)]
        }
    }

    /// Seconds voiced by `post` heard unpaused on `daemon`.
    static func reference(_ post: Post, on daemon: DaemonHarness) async throws -> Double {
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let id = try await client.post(post)
        let finished = try await client.finished(id)
        try await Task.sleep(for: .milliseconds(150))
        let voiced = recorder.stop().voicedDuration
        try #require(finished.reason == .spoken, "the reference, unpaused: \(finished)")
        return voiced
    }

    /// Every scenario on one daemon (a private server each would double the suite's time), each
    /// compared with its text heard unpaused on that daemon. Run by the suites of each boundary and
    /// voice below (`HeardWholeAtAWordTests`…).
    func everyScenario(_ scenarios: [Scenario], on daemon: DaemonHarness) async throws {
        var references: [String: HeardWhole] = [:]
        for scenario in scenarios {
            let post = scenario.post
            let key = "\(scenario.kind) \(scenario.text)"
            if references[key] == nil { references[key] = HeardWhole(reference: try await Self.reference(post, on: daemon)) }
            let oracle = try #require(references[key])
            let problems = try await pauseAndResume(post, scenario, on: daemon, oracle: oracle)
            #expect(problems.isEmpty, "\(scenario.testDescription): \(problems)")
        }
        await daemon.shutDown()
    }

    /// Posts, pauses at the scenario's moment, resumes 0.6 s later; returns the oracle's problems.
    func pauseAndResume(_ post: Post, _ scenario: Scenario, on daemon: DaemonHarness, oracle: HeardWhole) async throws -> [String] {
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let id = try await client.post(post)
        try await reach(scenario.moment, of: id, text: scenario.text, on: client)
        try await client.send(RequestLine(.pause(scenario.boundary), id: .string("pause")))
        #expect(try await client.waitFor("pause reply") { $0.id == .string("pause") }.effective == true)
        // In force once the item says so; a word pause asked in the last word lets the item end.
        try await client.waitFor("paused") {
            ($0.event == "paused" && $0.utterance == id) || ($0.event == "finished" && $0.utterance == id)
        }
        let pausedAt = recorder.elapsed()
        try await Task.sleep(for: .milliseconds(600))
        let resumedAt = recorder.elapsed()
        try await client.send(RequestLine(.resume, id: .string("resume")))
        let problems = try await heard(id, by: client, on: recorder, pausedFrom: pausedAt, to: resumedAt, oracle: oracle)
        await client.close()
        return problems
    }

    @Test(arguments: [PauseBoundary.word, .immediate])
    func pausedTwiceThenResumedOnceIsHeardWhole(first: PauseBoundary) async throws {
        let (daemon, oracle, recorder, client, id) = try await sentenceAThirdIn()
        try await client.send(RequestLine(.pause(first), id: .string("first")))
        try await client.waitFor("paused") { $0.event == "paused" && $0.utterance == id }
        let pausedAt = recorder.elapsed()
        try await Task.sleep(for: .milliseconds(300))
        try await client.send(RequestLine(.pause(.immediate), id: .string("second")))
        try await client.waitFor("second reply") { $0.id == .string("second") }
        try await Task.sleep(for: .milliseconds(300))
        let resumedAt = recorder.elapsed()
        try await client.send(RequestLine(.resume))
        let problems = try await heard(id, by: client, on: recorder, pausedFrom: pausedAt, to: resumedAt, oracle: oracle)
        #expect(problems.isEmpty, "\(problems)")
        await daemon.shutDown()
    }

    /// Paused, then stopped: told `stopped`, not `spoken`, and nothing more is heard.
    @Test(arguments: [PauseBoundary.word, .immediate])
    func pausedThenStoppedIsToldStoppedAndStaysSilent(boundary: PauseBoundary) async throws {
        let daemon = try await DaemonHarness()
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let id = try await client.post(.say(Self.sentence))
        try await reach(.middle, of: id, text: Self.sentence, on: client)
        try await client.send(RequestLine(.pause(boundary)))
        try await client.waitFor("paused") { $0.event == "paused" && $0.utterance == id }
        try await Task.sleep(for: .milliseconds(200))
        let stoppedAt = recorder.elapsed()
        try await client.send(RequestLine(.stop))
        let finished = try await client.finished(id)
        try await Task.sleep(for: .milliseconds(500))
        let recording = recorder.stop()
        #expect(finished.reason == .stopped)
        #expect(recording.rms(from: stoppedAt - 0.1) < HeardWhole.silence, "nothing heard after the pause")
        await daemon.shutDown()
    }

    /// `a11ysay --pause --at word` and `a11ysay --resume`, as a user types them.
    @Test func a11ysayWordPauseAndResumeIsHeardWhole() async throws {
        let (daemon, oracle, recorder, client, id) = try await sentenceAThirdIn()
        let pause = try await a11ysay(["--pause", "--at", "word"], daemon)
        #expect(pause.status == 0, "\(pause.err)")
        try await client.waitFor("paused") { $0.event == "paused" && $0.utterance == id }
        let pausedAt = recorder.elapsed()
        try await Task.sleep(for: .milliseconds(600))
        let resumedAt = recorder.elapsed()
        let resume = try await a11ysay(["--resume"], daemon)
        #expect(resume.status == 0, "\(resume.err)")
        let problems = try await heard(id, by: client, on: recorder, pausedFrom: pausedAt, to: resumedAt, oracle: oracle)
        #expect(problems.isEmpty, "\(problems)")
        await daemon.shutDown()
    }

    /// SSIP's `PAUSE self` and `RESUME self` from python3-speechd, as a speech-dispatcher client
    /// sends them; the item is watched through a JSON subscriber (`all`).
    @Test func ssipPauseAndResumeIsHeardWhole() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let oracle = HeardWhole(reference: try await Self.reference(.say(Self.sentence), on: daemon))
        let watcher = try await daemon.client()
        try await watcher.send(RequestLine(.subscribe(all: true), id: .string("subscribe")))
        try await watcher.waitFor("subscribed") { $0.id == .string("subscribe") }
        let recorder = try daemon.recorder()
        let script = """
            import speechd, sys, threading, time
            done = threading.Event()
            c = speechd.SSIPClient("heard-whole")
            c.set_language("fr")
            c.speak(sys.argv[1], callback=lambda t, *a: t == speechd.CallbackType.END and done.set(),
                    event_types=(speechd.CallbackType.END,))
            time.sleep(1.2)
            c.pause()
            print("paused", time.monotonic(), flush=True)
            time.sleep(0.6)
            print("resumed", time.monotonic(), flush=True)
            c.resume()
            ok = done.wait(20)
            c.close()
            sys.exit(0 if ok else 3)
            """
        let environment = try speechDispatcherClientEnvironment(socket: #require(daemon.ssipSocketPath), home: daemon.pulse.directory.path)
        let result = try await run("/usr/bin/python3", ["-c", script, Self.sentence], environment: environment, timeout: .seconds(40))
        #expect(result.status == 0, "\(result.stderr)")
        try await Task.sleep(for: .milliseconds(150))
        let recording = recorder.stop()
        let moments = Dictionary(uniqueKeysWithValues: result.stdout.split(separator: "\n").compactMap { line -> (String, Double)? in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let t = Double(parts[1]) else { return nil }
            return (String(parts[0]), recorder.elapsed(at: t))
        })
        let pausedAt = try #require(moments["paused"]), resumedAt = try #require(moments["resumed"])
        let spoken = await watcher.received.compactMap { message -> UInt64? in
            message.event == "started" ? message.utterance : nil
        }
        let id = try #require(spoken.first, "the subscriber saw the SSIP item start")
        #expect(await watcher.finishes().first { $0.0 == id }?.1 == .spoken)
        let words = await watcher.timedEvents(of: id).filter { $0.message.event == "word" }.map { recorder.elapsed(at: $0.at) }
        let problems = oracle.problems(in: recording, pauses: [(pausedAt, resumedAt)], words: words)
        #expect(problems.isEmpty, "\(problems)")
        await daemon.shutDown()
    }

    // MARK: - Helpers

    /// A daemon, the sentence heard unpaused on it (the oracle), then the sentence posted again,
    /// recorded, and a third of the way in.
    func sentenceAThirdIn() async throws -> (DaemonHarness, HeardWhole, MonitorRecorder, TestClient, UInt64) {
        let daemon = try await DaemonHarness()
        let oracle = HeardWhole(reference: try await Self.reference(.say(Self.sentence), on: daemon))
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let id = try await client.post(.say(Self.sentence))
        try await reach(.middle, of: id, text: Self.sentence, on: client)
        return (daemon, oracle, recorder, client, id)
    }

    /// Waits for the item's `finished` (`spoken`, once), stops the recording and returns what the
    /// oracle found wrong with what was heard and told.
    func heard(
        _ id: UInt64, by client: TestClient, on recorder: MonitorRecorder, pausedFrom pausedAt: Double, to resumedAt: Double,
        oracle: HeardWhole
    ) async throws -> [String] {
        let finished = try await client.finished(id)
        try await Task.sleep(for: .milliseconds(150))
        let recording = recorder.stop()
        #expect(finished.reason == .spoken, "\(finished)")
        #expect(await client.events(of: id).filter { $0.event == "finished" }.count == 1)
        let words = await client.timedEvents(of: id).filter { $0.message.event == "word" }.map { recorder.elapsed(at: $0.at) }
        #expect(words.count >= 5, "words were told: \(words.count)")
        return oracle.problems(in: recording, pauses: [(pausedAt, resumedAt)], words: words)
    }

    /// Waits until the item has reached `moment`.
    func reach(_ moment: Moment, of id: UInt64, text: String, on client: TestClient) async throws {
        let starts = wordStarts(text)
        switch moment {
        case .afterPost:
            return
        case .started:
            try await client.waitFor("started") { $0.event == "started" && $0.utterance == id }
        case .middle:
            let third = text.unicodeScalars.count / 3
            try await client.waitFor("a word a third in") { $0.event == "word" && $0.utterance == id && ($0.start ?? 0) >= third }
        case .lastWord:
            // eSpeak may fold the last words into one phrase: the last word it tells is enough.
            let late = starts[max(0, starts.count - 3)]
            try await client.waitFor("one of the last words") { $0.event == "word" && $0.utterance == id && ($0.start ?? 0) >= late }
        }
    }

    func a11ysay(_ arguments: [String], _ daemon: DaemonHarness) async throws -> (status: Int32, out: String, err: String) {
        let result = try await run(
            CommandLineTests.a11ysay, ["--socket", daemon.socketPath] + arguments,
            environment: ["A11YD_NO_AUTOSPAWN": "1", "PATH": "/usr/bin:/bin"], timeout: .seconds(20))
        return (result.status, result.stdout, result.stderr)
    }
}

// Every scenario (`HeardWholeTests.scenarios(pausedAt:_:)`), one suite per pause boundary, voice and part,
// each on a daemon of its own: suites are what the test lanes deal, and these eight, the slowest sound tests
// (about half a minute each), run side by side after the lanes (Tests/suite-times.tsv marks them `alone`),
// as four suites of a minute did before.

/// Paused at a word boundary at every moment of the sentence, and resumed, in eSpeak's French.
@Suite(.serialized) struct HeardWholeAtAWordTests {
    @Test func pausedAtAWordAndResumedIsHeardWhole() async throws {
        try await HeardWholeTests().everyScenario(HeardWholeTests.scenarios(pausedAt: .word, .moments), on: DaemonHarness())
    }
}

/// Paused at a word boundary during an earcon and in a long text, and resumed, in eSpeak's French.
@Suite(.serialized) struct HeardWholeAtAWordInAnEarconOrALongTextTests {
    @Test func pausedAtAWordInAnEarconOrALongTextAndResumedIsHeardWhole() async throws {
        try await HeardWholeTests().everyScenario(HeardWholeTests.scenarios(pausedAt: .word, .earconAndLongText), on: DaemonHarness())
    }
}

/// Paused at once at every moment of the sentence, and resumed, in eSpeak's French.
@Suite(.serialized) struct HeardWholeAtOnceTests {
    @Test func pausedAtOnceAndResumedIsHeardWhole() async throws {
        try await HeardWholeTests().everyScenario(HeardWholeTests.scenarios(pausedAt: .immediate, .moments), on: DaemonHarness())
    }
}

/// Paused at once during an earcon and in a long text, and resumed, in eSpeak's French.
@Suite(.serialized) struct HeardWholeAtOnceInAnEarconOrALongTextTests {
    @Test func pausedAtOnceInAnEarconOrALongTextAndResumedIsHeardWhole() async throws {
        try await HeardWholeTests().everyScenario(HeardWholeTests.scenarios(pausedAt: .immediate, .earconAndLongText), on: DaemonHarness())
    }
}

/// The same in the natural voice, through the real Piper worker: at a word boundary.
@Suite(.serialized) struct PiperHeardWholeAtAWordTests {
    @Test func pausedAtAWordAndResumedInThePiperVoiceIsHeardWhole() async throws {
        try await HeardWholeTests().everyScenario(HeardWholeTests.piperScenarios(pausedAt: .word, .moments), on: DaemonHarness(piper: true))
    }
}

/// The natural voice at a word boundary, during an earcon and in a long text.
@Suite(.serialized) struct PiperHeardWholeAtAWordInAnEarconOrALongTextTests {
    @Test func pausedAtAWordInAnEarconOrALongTextAndResumedInThePiperVoiceIsHeardWhole() async throws {
        try await HeardWholeTests().everyScenario(
            HeardWholeTests.piperScenarios(pausedAt: .word, .earconAndLongText), on: DaemonHarness(piper: true))
    }
}

/// The natural voice paused at once.
@Suite(.serialized) struct PiperHeardWholeAtOnceTests {
    @Test func pausedAtOnceAndResumedInThePiperVoiceIsHeardWhole() async throws {
        try await HeardWholeTests().everyScenario(HeardWholeTests.piperScenarios(pausedAt: .immediate, .moments), on: DaemonHarness(piper: true))
    }
}

/// The natural voice paused at once, during an earcon and in a long text.
@Suite(.serialized) struct PiperHeardWholeAtOnceInAnEarconOrALongTextTests {
    @Test func pausedAtOnceInAnEarconOrALongTextAndResumedInThePiperVoiceIsHeardWhole() async throws {
        try await HeardWholeTests().everyScenario(
            HeardWholeTests.piperScenarios(pausedAt: .immediate, .earconAndLongText), on: DaemonHarness(piper: true))
    }
}
