// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// Sound servers: the daemon against PulseAudio and against PipeWire's pulse server
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

    /// No server when the daemon starts: a post ends at once (not after the grace meant for a
    /// server that went away) with an error that names the server and why, `status` and a11ysay
    /// say the same; then the server appears and speech follows.
    @Test(arguments: SoundServerKind.allCases)
    func speechFollowsWhenTheServerAppearsAfterTheDaemon(_ server: SoundServerKind) async throws {
        let daemon = try await DaemonHarness(soundServer: server, soundServerRunning: false)
        let client = try await daemon.client()
        let why = "no sound server reachable at \(daemon.pulse.serverAddress) (no such socket)"
        let posted = ContinuousClock.now
        let unheard = try await client.post(.say("personne n'écoute"))
        let failed = try await client.finished(unheard, timeout: .seconds(10))
        let waited = ContinuousClock.now - posted
        #expect(failed.reason == .error, "\(failed.reason.map(\.wireName) ?? "no reason")")
        #expect(failed.message == why, "\(failed.message ?? "no message")")
        #expect(waited < .seconds(2), "ended as soon as known, not after the 3 s grace: \(waited)")

        let tag = RequestID.string(UUID().uuidString)
        try await client.send(RequestLine(.status, id: tag))
        let message = try await client.waitFor("status") { $0.id == tag }
        guard case .reply(.status(let status), _) = message else { throw TestFailure("not a status: \(message)") }
        let unreachable = SoundServerStatus(server: daemon.pulse.serverAddress, state: .unreachable, reason: "no such socket")
        #expect(status.audio == ServerMessage.AudioStatus(unreachable), "\(status)")
        let said = try await CommandLineTests().run(["--wait", "bonjour"], socket: daemon.socketPath)
        #expect(said.status == 2 && said.err.contains(why), "\(said)")
        let told = try await CommandLineTests().run(["--status"], socket: daemon.socketPath)
        #expect(told.out.contains("audio: \(why)"), "\(told)")

        try daemon.pulse.start()
        let recorder = try daemon.recorder()
        let next = try await client.post(.say("le serveur de son est arrivé"))
        #expect(try await client.finished(next).reason == .spoken)
        try await waitUntilHeard(recorder, "#\(next), posted once the server appeared")
        let connected = try await CommandLineTests().run(["--status"], socket: daemon.socketPath)
        #expect(connected.out.contains("audio: connected to "), "\(connected)")
        try await expectExactlyOneFinished([unheard, next], client)
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
