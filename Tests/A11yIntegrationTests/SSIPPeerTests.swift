// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// speech-dispatcher's own test material against the real daemon: python3-speechd's
/// `AutomaticTest` run as Debian installs it, and tests of ours for what the scripts of
/// speech-dispatcher's `src/tests` exercise (stop_and_pause, keys, sound_icons), each reply and
/// event checked line by line against the SSIP manual, the sound checked on the null sink. No
/// speech-dispatcher is ever started.
@Suite(.serialized) struct SSIPPeerTests {
    func ssip(_ daemon: DaemonHarness) async throws -> RawSSIPClient {
        let path = try #require(daemon.ssipSocketPath)
        return try await offThePool { try RawSSIPClient(path: path) }
    }

    /// `HISTORY GET CLIENT_ID`'s number.
    func clientID(_ client: RawSSIPClient) async throws -> String {
        let reply = try await offThePool { try client.command("HISTORY GET CLIENT_ID") }
        #expect(reply.hasSuffix("245 OK CLIENT ID SENT\r\n"), "\(reply)")
        return String(reply.dropFirst(4).prefix { !$0.isNewline })
    }

    /// SPEAK, its data, and the message id from `225-<id>`.
    func speak(_ client: RawSSIPClient, _ text: String) async throws -> String {
        #expect(try await offThePool { try client.command("SPEAK") } == "230 OK RECEIVING DATA\r\n")
        let queued = try await offThePool { try client.command(text + "\r\n.") }
        #expect(queued.hasPrefix("225-") && queued.hasSuffix("\r\n225 OK MESSAGE QUEUED\r\n"), "\(queued)")
        return String(queued.dropFirst(4).prefix { !$0.isNewline })
    }

    func event(_ client: RawSSIPClient, _ name: String, message: String, timeout: Duration = .seconds(20)) async throws -> String? {
        try await offThePool { try client.waitForEvent(name, message: message, timeout: timeout) }
    }

    /// A notification as the manual writes it: `70x-<msg_id>`, `70x-<client_id>`, the final line.
    func notification(_ code: Int, _ name: String, message: String, client: String) -> String {
        "\(code)-\(message)\r\n\(code)-\(client)\r\n\(code) \(name)\r\n"
    }

    // MARK: - python3-speechd's own test

    /// Debian's `speechd._test.AutomaticTest`, unmodified: two messages of the default priority, a
    /// cancel after a second, a third message; it asserts which callbacks came.
    @Test func python3SpeechdsOwnAutomaticTestPasses() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let recorder = try daemon.recorder()
        let environment = try speechDispatcherClientEnvironment(
            socket: try #require(daemon.ssipSocketPath), home: daemon.pulse.directory.path + "/client-home",
            runtime: daemon.pulse.directory.path + "/runtime", base: daemon.pulse.clientEnvironment)
        let result = try await run(
            "/usr/bin/python3", ["-m", "unittest", "-v", "speechd._test.AutomaticTest"], environment: environment,
            timeout: .seconds(60))
        let recording = recorder.stop()
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("test_callbacks") && result.stderr.contains("\nOK"), "\(result.stderr)")
        #expect(recording.audibleDuration() > 0.5, "heard on the null sink")
        await daemon.shutDown()
    }

    // MARK: - What speech-dispatcher's scripts exercise

    /// stop_and_pause.test: a message stopped while it speaks, then another heard; a message paused
    /// then resumed, which ends with END.
    @Test func stopThenSpeakAndPauseThenResume() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let recorder = try daemon.recorder()
        let client = try await ssip(daemon)
        let me = try await clientID(client)
        #expect(try await offThePool { try client.command("SET self NOTIFICATION all on") } == "220 OK NOTIFICATION SET\r\n")

        let first = try await speak(client, longSentence)
        #expect(try await event(client, "701 BEGIN", message: first) == notification(701, "BEGIN", message: first, client: me))
        #expect(try await offThePool { try client.command("STOP self") } == "210 OK STOPPED\r\n")
        #expect(try await event(client, "703 CANCELED", message: first) == notification(703, "CANCELED", message: first, client: me))
        let second = try await speak(client, "La phrase suivante est entendue.")
        #expect(try await event(client, "701 BEGIN", message: second) == notification(701, "BEGIN", message: second, client: me))
        #expect(try await event(client, "702 END", message: second) == notification(702, "END", message: second, client: me))

        let third = try await speak(client, longSentence)
        #expect(try await event(client, "701 BEGIN", message: third) == notification(701, "BEGIN", message: third, client: me))
        #expect(try await offThePool { try client.command("PAUSE self") } == "211 OK PAUSED\r\n")
        #expect(try await event(client, "704 PAUSED", message: third) == notification(704, "PAUSED", message: third, client: me))
        try await Task.sleep(for: .milliseconds(800))
        let resumedAt = recorder.elapsed()
        #expect(try await offThePool { try client.command("RESUME self") } == "212 OK RESUMED\r\n")
        #expect(try await event(client, "705 RESUMED", message: third) == notification(705, "RESUMED", message: third, client: me))
        #expect(try await event(client, "702 END", message: third, timeout: .seconds(30)) == notification(702, "END", message: third, client: me))
        #expect(client.events.allSatisfy { !$0.hasSuffix("703 CANCELED\r\n") }, "\(client.events)")
        #expect(try await offThePool { try client.command("QUIT") } == "231 HAPPY HACKING\r\n")
        let recording = recorder.stop()
        #expect(recording.audibleDuration(from: resumedAt) > 1.0, "the rest of the message heard after RESUME")
        await daemon.shutDown()
    }

    /// sound_icons.test (and basic.test): messages sent without a priority are `message`s, so each
    /// is said to its end, in order.
    @Test func messagesOfTheDefaultPriorityAreEachSaidInOrder() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let client = try await ssip(daemon)
        let me = try await clientID(client)
        #expect(try await offThePool { try client.command("SET self NOTIFICATION all on") } == "220 OK NOTIFICATION SET\r\n")
        #expect(try await offThePool { try client.command("GET LANGUAGE") } == "251-en-US\r\n251 OK GET RETURNED\r\n")
        let sentence = try await speak(client, "Quand le système attend votre réponse, vous entendez ce son.")
        let icon = try await offThePool { try client.command("SOUND_ICON prompt") }
        #expect(icon.hasPrefix("225-") && icon.hasSuffix("225 OK MESSAGE QUEUED\r\n"), "\(icon)")
        let iconID = String(icon.dropFirst(4).prefix { !$0.isNewline })
        let last = try await speak(client, "Vous pouvez alors répondre.")
        for message in [sentence, iconID, last] {
            #expect(try await event(client, "702 END", message: message) == notification(702, "END", message: message, client: me))
        }
        let begins = client.events.filter { $0.hasSuffix("701 BEGIN\r\n") }
        #expect(begins == [sentence, iconID, last].map { notification(701, "BEGIN", message: $0, client: me) })
        #expect(client.events.allSatisfy { !$0.hasSuffix("703 CANCELED\r\n") }, "\(client.events)")
        await daemon.shutDown()
    }

    /// keys.test: 339 quick KEY commands, with and without `SET self PRIORITY message`, are all
    /// queued, none cut or dropped, until the client cancels them.
    @Test(arguments: [false, true]) func aBurstOfKeysIsQueuedWhole(setsPriority: Bool) async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let watcher = try await daemon.client()
        try await watcher.send(RequestLine(.subscribe(all: true), id: .number(1)))
        try await watcher.waitFor("subscribed") { $0.id == .number(1) }
        let client = try await ssip(daemon)
        if setsPriority {
            #expect(try await offThePool { try client.command("SET self PRIORITY message") } == "202 OK PRIORITY SET\r\n")
        }
        let keys = ["a", "b", "space", "underscore", "double-quote", "f1", "f12", "kp-enter", "shift", "tab", "!", "#"]
        let count = 339
        for n in 0..<count {
            let reply = try await offThePool { try client.command("KEY \(keys[n % keys.count])") }
            #expect(reply.hasSuffix("225 OK MESSAGE QUEUED\r\n"), "\(reply)")
        }
        let status = try await daemon.speech.status()
        let spoken = await watcher.finishes()
        #expect(spoken.allSatisfy { $0.1 == .spoken }, "nothing cut or dropped: \(spoken)")
        #expect(spoken.count + status.pending.count + (status.current == nil ? 0 : 1) == count)
        #expect(try await offThePool { try client.command("CANCEL self") } == "213 OK CANCELED\r\n")
        let deadline = ContinuousClock.now + .seconds(20)
        while await watcher.finishes().count < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(await watcher.finishes().count == count, "every key ended once")
        await daemon.shutDown()
    }

    // MARK: - Voices of a language

    /// speech-dispatcher 0.12's own VoiceTest (python3-speechd's `_test.py`) lists `fr` and asserts each
    /// voice is French; Orca master asks `fr-FR none`, then `fr none` only if that lists nothing. Here
    /// against eSpeak NG's own voices, as the daemon lists them.
    @Test func voicesOfALanguageAreListedByEspeaksTags() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let client = try await ssip(daemon)
        #expect(try await offThePool { try client.command("LIST SYNTHESIS_VOICES fr-FR none") }
            == "249-French (France)\tfr-fr\tnone\r\n249 OK VOICE LIST SENT\r\n")
        let french = try await offThePool { try client.command("LIST SYNTHESIS_VOICES fr none") }
        let lines = french.components(separatedBy: "\r\n").dropLast()
        #expect(lines.last == "249 OK VOICE LIST SENT", "\(french)")
        let voices = lines.dropLast().map { $0.dropFirst(4).split(separator: "\t").map(String.init) }
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("249-") })
        #expect(voices.allSatisfy { $0.count == 3 && $0[1].lowercased().hasPrefix("fr") && $0[2] == "none" }, "\(french)")
        #expect(Set(["fr-fr", "fr-be", "fr-ch"]).isSubset(of: voices.map { $0[1] }), "\(french)")
        #expect(try await offThePool { try client.command("LIST SYNTHESIS_VOICES fr-CA none") } == "249 OK VOICE LIST SENT\r\n")
        await daemon.shutDown()
    }

    // MARK: - A client's pause is its own

    enum Departure: String, CaseIterable, Sendable { case stays, quits, closesItsSocket }

    /// Client A pauses its own message, then stays, quits or closes its socket; client B speaks
    /// and is heard. A's paused message ends when A leaves (told to subscribers); if A stays, its
    /// RESUME goes on where the message stopped.
    @Test(arguments: Departure.allCases) func onePausedClientNeverSilencesAnother(_ departure: Departure) async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let watcher = try await daemon.client()
        try await watcher.send(RequestLine(.subscribe(all: true), id: .number(1)))
        try await watcher.waitFor("subscribed") { $0.id == .number(1) }
        let recorder = try daemon.recorder()
        let a = try await ssip(daemon)
        let aID = try await clientID(a)
        #expect(try await offThePool { try a.command("SET self NOTIFICATION all on") } == "220 OK NOTIFICATION SET\r\n")
        let aMessage = try await speak(a, longSentence)
        #expect(try await event(a, "701 BEGIN", message: aMessage) == notification(701, "BEGIN", message: aMessage, client: aID))
        #expect(try await offThePool { try a.command("PAUSE self") } == "211 OK PAUSED\r\n")
        #expect(try await event(a, "704 PAUSED", message: aMessage) == notification(704, "PAUSED", message: aMessage, client: aID))
        switch departure {
        case .stays: break
        case .quits: #expect(try await offThePool { try a.command("QUIT") } == "231 HAPPY HACKING\r\n")
        case .closesItsSocket: a.close()
        }

        let b = try await ssip(daemon)
        let bID = try await clientID(b)
        #expect(try await offThePool { try b.command("SET self NOTIFICATION all on") } == "220 OK NOTIFICATION SET\r\n")
        let bSpeaks = recorder.elapsed()
        let bMessage = try await speak(b, "Bonjour, je suis le client B.")
        #expect(try await event(b, "701 BEGIN", message: bMessage) == notification(701, "BEGIN", message: bMessage, client: bID))
        #expect(try await event(b, "702 END", message: bMessage) == notification(702, "END", message: bMessage, client: bID))
        let bEnded = recorder.elapsed()
        #expect(recorder.snapshot().audibleDuration(from: bSpeaks, to: bEnded) > 0.5, "B heard on the null sink")

        let aUtterance = try #require(UInt64(aMessage))
        if departure == .stays {
            // A's message kept its place and goes on where it stopped.
            let resumedAt = recorder.elapsed()
            #expect(try await offThePool { try a.command("RESUME self") } == "212 OK RESUMED\r\n")
            #expect(try await event(a, "705 RESUMED", message: aMessage) == notification(705, "RESUMED", message: aMessage, client: aID))
            #expect(try await event(a, "702 END", message: aMessage, timeout: .seconds(30)) == notification(702, "END", message: aMessage, client: aID))
            #expect(recorder.snapshot().audibleDuration(from: resumedAt) > 0.5, "A heard again after RESUME")
        } else {
            // Nothing waits on the paused message of a client that has gone: it ended, stopped.
            let finish = try await watcher.finished(aUtterance, timeout: .seconds(10))
            #expect(finish.reason == .stopped, "\(finish)")
        }
        _ = recorder.stop()
        let status = try await daemon.speech.status()
        #expect(status.state == .idle && status.pending.isEmpty, "\(status)")
        await daemon.shutDown()
    }
}
