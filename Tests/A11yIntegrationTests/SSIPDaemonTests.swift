// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// speech-dispatcher's own clients against the real daemon: `spd-say` and python3-speechd
/// over SSIP, the sound recorded from the null sink. No speech-dispatcher is ever started: clients
/// are pointed at a11yd with SPEECHD_ADDRESS and cannot spawn one (SPEECHD_CMD=/bin/false).
@Suite(.serialized) struct SSIPDaemonTests {
    func environment(_ daemon: DaemonHarness) throws -> [String: String] {
        try speechDispatcherClientEnvironment(
            socket: try #require(daemon.ssipSocketPath), home: daemon.pulse.directory.path + "/client-home",
            runtime: daemon.pulse.directory.path + "/runtime", base: daemon.pulse.clientEnvironment)
    }

    func spdSay(_ arguments: [String], _ daemon: DaemonHarness) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await run("/usr/bin/spd-say", arguments, environment: try environment(daemon), timeout: .seconds(30))
    }

    @Test func spdSayWaitsUntilTheSoundIsHeard() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let recorder = try daemon.recorder()
        let result = try await spdSay(["-w", "-l", "fr", "bonjour tout le monde"], daemon)
        let recording = recorder.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(recording.rms() > 0.02, "heard on the null sink")
        let end = try #require(recording.lastAudibleTime())
        #expect(recording.duration - end < 0.5, "spd-say -w returned once the sound had played (\(recording.duration) s, last sound \(end) s)")
        await daemon.shutDown()
    }

    @Test func spdSayThatLeavesAtOnceIsStillHeard() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let recorder = try daemon.recorder()
        let result = try await spdSay(["-l", "fr", "un message pour personne"], daemon)
        #expect(result.status == 0, "\(result.stderr)")
        // spd-say closed its socket right after SPEAK; the message is spoken all the same.
        let deadline = ContinuousClock.now + .seconds(10)
        while recorder.snapshot().rms() < 0.02, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try await Task.sleep(for: .milliseconds(1500))
        #expect(recorder.stop().audibleDuration() > 0.5)
        await daemon.shutDown()
    }

    @Test(arguments: ["-C", "-S"]) func spdSayCancelAndStopSilence(flag: String) async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let recorder = try daemon.recorder()
        _ = try await spdSay(["-l", "fr", longSentence], daemon)
        let deadline = ContinuousClock.now + .seconds(10)
        while recorder.snapshot().rms() < 0.02, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let cancel = try await spdSay([flag], daemon)
        let silencedBy = recorder.elapsed()
        #expect(cancel.status == 0, "\(cancel.stderr)")
        try await Task.sleep(for: .milliseconds(500))
        let recording = recorder.stop()
        let began = try #require(recording.firstAudibleTime())
        #expect(began < silencedBy, "it was speaking")
        #expect(recording.rms(from: silencedBy + 0.1, to: recording.duration) < 0.003, "silent after spd-say \(flag)")
        #expect(try await daemon.speech.status().state == .idle)
        await daemon.shutDown()
    }

    @Test func anImportantMessageCutsAText() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let client = try await daemon.client()
        try await client.send(RequestLine(.subscribe(all: true)))
        // spd-say's default priority is `text`.
        _ = try await spdSay(["-l", "fr", longSentence], daemon)
        try await client.waitFor("text speaking") { $0.event == "word" }
        let important = try await spdSay(["-w", "-P", "important", "-l", "fr", "urgent"], daemon)
        #expect(important.status == 0, "\(important.stderr)")
        // spd-say -w returns on the END a11yd writes on spd-say's own connection; this subscriber's copy of
        // the same finish comes on another, and may come a moment later (seen once under load: read at once,
        // it was not there yet). One that never comes still fails below.
        _ = try? await client.waitFor("the important message's finished", timeout: .seconds(5)) { message in
            guard case .event(.finished(_, _, let reason, _)) = message else { return false }
            return reason != .interrupted
        }
        let finishes = await client.finishes()
        #expect(finishes.map(\.1) == [.interrupted, .spoken], "\(finishes)")
        await daemon.shutDown()
    }

    @Test func python3SpeechdCallbacksCancelPauseAndVoices() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let recorder = try daemon.recorder()
        let script = """
            import os, speechd, threading, time
            c = speechd.SSIPClient('a11yd-test', autospawn=False)
            c.set_language('fr')
            c.set_data_mode(speechd.DataMode.SSML)
            events, done = [], threading.Event()
            def callback(kind, index_mark=None):
                events.append(kind if index_mark is None else kind + ':' + index_mark)
                if kind in (speechd.CallbackType.END, speechd.CallbackType.CANCEL):
                    done.set()
            c.speak('<speak><mark name="0:7"/>bonjour <mark name="8:12"/>tout le monde</speak>', callback=callback)
            done.wait(10)
            print('EVENTS', ' '.join(events), flush=True)
            print('VOICES', len(c.list_synthesis_voices()), flush=True)
            events.clear(); done.clear()
            c.set_data_mode(speechd.DataMode.TEXT)
            c.speak(os.environ['LONG_SENTENCE'], callback=callback)
            time.sleep(1.0)
            print('PAUSE', time.monotonic(), flush=True)
            c.pause()
            time.sleep(1.0)
            print('RESUME', time.monotonic(), flush=True)
            c.resume()
            time.sleep(0.8)
            c.cancel()
            done.wait(10)
            print('LONG', ' '.join(events), flush=True)
            c.close()
            """
        var environment = try environment(daemon)
        environment["LONG_SENTENCE"] = longSentence
        let result = try await run("/usr/bin/python3", ["-c", script], environment: environment, timeout: .seconds(60))
        let recording = recorder.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("EVENTS begin index_marks:0:7 index_marks:8:12 end"), "\(result.stdout)")
        let voices = result.stdout.split(separator: "\n").first { $0.hasPrefix("VOICES") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        #expect(voices > 50, "every eSpeak voice listed: \(voices)")
        #expect(result.stdout.contains("LONG begin pause resume cancel"), "\(result.stdout)")
        // The pause is heard within milliseconds (speech-dispatcher pauses only at an index mark):
        // the second between the pause and the resume is silent but for its first 100 ms.
        let spans = recording.quietSpans(threshold: 0.003, minimum: 0.7)
        #expect(!spans.isEmpty, "a silence of at least 0.7 s while paused: \(spans)")
        await daemon.shutDown()
    }

    /// Orca itself, headless (Xvfb, a session bus, AT-SPI; scripts/orca-ssip-test.sh), speaking SSIP
    /// to the real daemon: its start-up message and the focus moving between two buttons of a small
    /// GTK window are spoken and heard on the null sink.
    @Test func orcaIsHeard() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let watcher = try await daemon.client()
        try await watcher.send(RequestLine(.subscribe(all: true), id: .number(1)))
        try await watcher.waitFor("subscribed") { $0.id == .number(1) }
        let recorder = try daemon.recorder()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/orca-ssip-test.sh").path
        let logs = daemon.pulse.directory.path + "/orca-logs"
        let result = try await run(
            "/bin/bash", [script, "--socket", try #require(daemon.ssipSocketPath)],
            environment: ["PATH": "/usr/bin:/bin", "ORCA_TEST_KEEP": logs], timeout: .seconds(90))
        let recording = recorder.stop()
        let orcaLog = (try? String(contentsOfFile: logs + "/orca.log", encoding: .utf8)) ?? ""
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)\n\(orcaLog)")
        let said = await watcher.received.compactMap(\.text)
        let spoken = await watcher.received.filter { $0.successful == true }.compactMap(\.text)
        #expect(spoken.contains { $0.contains("Screen reader on") }, "Orca's start-up message, spoken to the end: \(said)")
        #expect(said.contains { $0.contains("Apple") }, "\(said)")
        #expect(said.contains { $0.contains("Banana") }, "\(said)")
        #expect(recording.audibleDuration() > 1.0, "heard on the null sink: \(recording.audibleDuration()) s")
        await daemon.shutDown()
    }
}
