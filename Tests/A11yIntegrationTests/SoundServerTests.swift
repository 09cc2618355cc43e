// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// Issue 10, "Sound servers": the daemon against PulseAudio and against PipeWire's pulse server
/// (Debian 12's desktop default), each killed and restarted mid-utterance several times in a row,
/// or absent when the daemon starts. Speech follows in each case, heard on the null sink's monitor,
/// and every post gets exactly one `finished`.
@Suite(.serialized) struct SoundServerTests {
    @Test(arguments: SoundServerKind.allCases)
    func speechFollowsSeveralKillsAndRestartsMidUtterance(_ server: SoundServerKind) async throws {
        let daemon = try await DaemonHarness(soundServer: server)
        let client = try await daemon.client()
        var posted: [UInt64] = []
        for round in 1...3 {
            let before = try daemon.recorder()
            let id = try await client.post(.say(longSentence))
            posted.append(id)
            try await waitUntilHeard(before, "round \(round): #\(id) before the kill")
            daemon.pulse.stop()
            try await Task.sleep(for: .milliseconds(300))
            let restart = ContinuousClock.now
            try daemon.pulse.start()
            let restarted = ContinuousClock.now - restart
            // The item in flight goes on where it was on the new server (it was gone for less
            // than the 3 s grace), and is heard there.
            let after = try daemon.recorder()
            try await waitUntilHeard(
                after, "round \(round): #\(id) after the restart (the server took \(restarted) to start)", on: daemon, client: client, item: id)
            #expect(await client.events(of: id).allSatisfy { $0.event != "finished" }, "round \(round): #\(id) still speaking")
        }
        // The next round's post interrupted each; a last one is spoken to its end and heard.
        let recorder = try daemon.recorder()
        let last = try await client.post(.say("le serveur de son est revenu trois fois"))
        posted.append(last)
        let finished = try await client.finished(last)
        #expect(finished.reason == .spoken)
        try await waitUntilHeard(recorder, "the last post")
        try await expectExactlyOneFinished(posted, client)
        let reasons = await client.finishes().map(\.1)
        #expect(reasons == [.interrupted, .interrupted, .interrupted, .spoken], "\(reasons)")
        await daemon.shutDown()
    }

    @Test(arguments: SoundServerKind.allCases)
    func speechFollowsWhenTheServerAppearsAfterTheDaemon(_ server: SoundServerKind) async throws {
        let daemon = try await DaemonHarness(soundServer: server, soundServerRunning: false)
        let client = try await daemon.client()
        // Nobody to play to for longer than the grace: the post ends, with an error that says so.
        let unheard = try await client.post(.say("personne n'écoute"))
        let failed = try await client.finished(unheard, timeout: .seconds(10))
        #expect(failed.reason == .error, "\(failed.reason.map(\.wireName) ?? "no reason")")
        #expect(failed.message?.contains("sound server") == true, "\(failed.message ?? "no message")")
        // A post made while there is still no server, then the server appears: it is heard.
        let waiting = try await client.post(.say(longSentence))
        try await Task.sleep(for: .milliseconds(500))
        try daemon.pulse.start()
        let recorder = try daemon.recorder()
        try await waitUntilHeard(recorder, "#\(waiting), posted before the server appeared")
        let next = try await client.post(.say("le serveur de son est arrivé"))
        #expect(try await client.finished(next).reason == .spoken)
        try await expectExactlyOneFinished([unheard, waiting, next], client)
        #expect(try await client.finished(waiting).reason == .interrupted)
        await daemon.shutDown()
    }

    /// Waits until `recorder` has heard at least `seconds` of speech (5 ms windows with RMS ≥ 0.02).
    /// Given the daemon, the failure says what the item was told and what the sound server logged.
    func waitUntilHeard(
        _ recorder: MonitorRecorder, _ what: String, seconds: Double = 0.3, timeout: Duration = .seconds(8),
        on daemon: DaemonHarness? = nil, client: TestClient? = nil, item: UInt64? = nil
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while recorder.snapshot().audibleDuration(threshold: 0.02) < seconds {
            guard ContinuousClock.now < deadline else {
                let heard = recorder.snapshot().audibleDuration(threshold: 0.02)
                var context = ""
                if let client, let item {
                    let events = await client.events(of: item).map { [$0.event, $0.reason.map { "\($0)" }, $0.message].compactMap { $0 }.joined(separator: " ") }
                    context += "\nevents of #\(item): \(events.joined(separator: ", "))"
                }
                if let daemon { context += "\nthe sound server's log:\n" + String(daemon.pulse.logText().suffix(6_000)) }
                throw TestFailure("\(what): heard \(heard) s of sound within \(timeout), wanted \(seconds) s\(context)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func expectExactlyOneFinished(_ posted: [UInt64], _ client: TestClient) async throws {
        for id in posted { _ = try await client.finished(id) }
        // A second finished, if any, was sent before the reply to a later request.
        let tag = RequestID.string(UUID().uuidString)
        try await client.send(RequestLine(.status, id: tag))
        try await client.waitFor("status") { $0.id == tag }
        let counts = Dictionary(await client.finishes().map { ($0.0, 1) }, uniquingKeysWith: +)
        #expect(posted.allSatisfy { counts[$0] == 1 }, "finished per post: \(posted.map { ($0, counts[$0] ?? 0) })")
    }
}
