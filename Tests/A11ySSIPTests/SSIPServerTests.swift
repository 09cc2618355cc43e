// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
@testable import A11ySSIP
import A11ySystem
import A11yTestSupport
import Foundation
import Logging
import Testing

/// The listener over a real Unix socket, against a fake speech API: raw SSIP, then the real clients
/// (`spd-say` and python3-speechd, from Debian's packages). No speech-dispatcher is ever started.
@Suite(.serialized) struct SSIPServerTests {
    /// A server on a fresh private socket, stopped at the end of `body`.
    func withServer(
        speech: FakeSpeech = FakeSpeech(), configuration: SSIPServer.Configuration = .init(),
        _ body: (_ path: String, _ speech: FakeSpeech, _ folder: String) async throws -> Void
    ) async throws {
        let folder = NSTemporaryDirectory() + "a11y-ssip-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let path = folder + "/speech-dispatcher/speechd.sock"
        let server = SSIPServer(listener: .path(path), speech: speech, configuration: configuration, logger: Logger(label: "test"))
        let running = Task { try await server.run() }
        defer {
            running.cancel()
            speech.shutDown()
            try? FileManager.default.removeItem(atPath: folder)
        }
        try await waitUntil("the SSIP socket accepts") { SocketProbe.accepts(path: path) }
        try await body(path, speech, folder)
    }

    func waitUntil(_ what: String, timeout: Duration = .seconds(5), _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !(await condition()) {
            guard ContinuousClock.now < deadline else { throw TestFailure("timed out waiting until \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Environment for a real SSIP client: our socket, and no way to start a real speech-dispatcher.
    func clientEnvironment(path: String, folder: String) throws -> [String: String] {
        try speechDispatcherClientEnvironment(socket: path, home: folder)
    }

    // MARK: - Raw SSIP

    /// The raw client closed, then dropped, closes its descriptor once: the number, taken again by
    /// the next socket this process opens, stays that socket's. (Closed twice, it was a server
    /// connection's socket that went from under NIO, which trapped on EBADF in a CI lane.)
    @Test func aRawClientClosedThenDroppedClosesItsDescriptorOnce() throws {
        let folder = NSTemporaryDirectory() + "a11y-raw-client-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/listening.sock"
        let listening = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listening) }
        let address = try #require(UnixSocketAddress(path: path))
        try #require(address.withSockaddr({ bind(listening, $0, $1) }) == 0 && listen(listening, 1) == 0)

        var client: RawSSIPClient? = try RawSSIPClient(path: path)
        client!.close()
        let next = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)  // the lowest free number: the client's
        client = nil
        let open = fcntl(next, F_GETFD) != -1
        #expect(open, "descriptor \(next), opened after the client closed, was closed by its deinit")
        if open { close(next) }
    }

    @Test func aConversationOverTheSocket() async throws {
        try await withServer { path, speech, _ in
            let client = try RawSSIPClient(path: path)
            #expect(try client.exchange("SET self CLIENT_NAME joe:test:main") == "208 OK CLIENT NAME SET\r\n")
            let id = try client.exchange("HISTORY GET CLIENT_ID")
            #expect(id.hasPrefix("245-") && id.hasSuffix("245 OK CLIENT ID SENT\r\n"))
            #expect(try client.exchange("SET self NOTIFICATION all on") == "220 OK NOTIFICATION SET\r\n")
            #expect(try client.exchange("SET self SSML_MODE on") == "219 OK SSML MODE SET\r\n")
            #expect(try client.exchange("SPEAK") == "230 OK RECEIVING DATA\r\n")
            let queued = try client.exchange("<speak>un <mark name=\"m1\"/>deux</speak>\r\n.")
            #expect(queued.hasPrefix("225-") && queued.hasSuffix("225 OK MESSAGE QUEUED\r\n"))
            // (A Swift Character "\r\n" is one grapheme: cut at newlines, not at "\r".)
            let message = queued.dropFirst(4).prefix { !$0.isNewline }
            let clientID = id.dropFirst(4).prefix { !$0.isNewline }
            // Then the events, each whole.
            let events = try [client.readReply(), client.readReply(), client.readReply()]
            #expect(events == [
                "701-\(message)\r\n701-\(clientID)\r\n701 BEGIN\r\n",
                "700-\(message)\r\n700-\(clientID)\r\n700-m1\r\n700 INDEX MARK\r\n",
                "702-\(message)\r\n702-\(clientID)\r\n702 END\r\n",
            ])
            #expect(speech.posted.first?.request.content == .ssml("<speak>un <mark name=\"m1\"/>deux</speak>"))
            #expect(try client.exchange("QUIT") == "231 HAPPY HACKING\r\n")
            #expect(try client.readToEnd() == "", "closed after QUIT")
        }
    }

    @Test func cancelSelfCutsOnlyThisClientAndReportsCanceledBeforeItsReply() async throws {
        try await withServer(speech: FakeSpeech(eventDelay: .zero, holds: true)) { path, speech, _ in
            let orca = try RawSSIPClient(path: path)
            let other = try RawSSIPClient(path: path)
            _ = try orca.exchange("SET self NOTIFICATION cancel on")
            _ = try orca.exchange("SPEAK")
            _ = try orca.exchange("mine\r\n.")
            _ = try other.exchange("SPEAK")
            _ = try other.exchange("theirs\r\n.")
            let idReply = try orca.exchange("HISTORY GET CLIENT_ID")
            let orcaID = try #require(UInt64(idReply.dropFirst(4).prefix { !$0.isNewline }), "\(idReply)")
            let reply = try orca.exchange("CANCEL self")
            // The 703 waits for the reply: never between a command and its reply.
            #expect(reply == "213 OK CANCELED\r\n")
            #expect(try orca.readReply().hasSuffix("703 CANCELED\r\n"))
            #expect(speech.controls == [FakeSpeech.Control(name: "stop", scope: .client(ClientID(rawValue: orcaID)))])
        }
    }

    /// Orca's CANCEL before each key's echo: carried out while a message of the connection may
    /// still speak, even one whose SPEAK came in the same write just before it; answered only, with
    /// nothing asked of speech, once every message of the connection has had its last event.
    @Test func cancelSelfIsCarriedOutOnlyWhileAMessageOfTheClientIsLeft() async throws {
        try await withServer(speech: FakeSpeech(eventDelay: .zero, holds: true)) { path, speech, _ in
            let orca = try RawSSIPClient(path: path)
            _ = try orca.exchange("SET self NOTIFICATION all on")
            // A stop's effect follows its reply; a line the reader answers follows the effect.
            let afterTheEffects = { _ = try orca.command("LIST SYNTHESIS_VOICES") }
            #expect(try orca.exchange("CANCEL self") == "213 OK CANCELED\r\n")
            try afterTheEffects()
            #expect(speech.controls.isEmpty, "nothing of its own to end")
            try orca.send("SPEAK\r\nmine\r\n.\r\nCANCEL self\r\n")
            #expect(try orca.readReply() == "230 OK RECEIVING DATA\r\n")
            #expect(try orca.readReply().hasSuffix("225 OK MESSAGE QUEUED\r\n"))
            #expect(try orca.readReply() == "213 OK CANCELED\r\n")
            #expect(try orca.waitForEvent("703 CANCELED") != nil, "the message it cancelled ends canceled")
            let idReply = try orca.exchange("HISTORY GET CLIENT_ID")
            let orcaID = try #require(UInt64(idReply.dropFirst(4).prefix { !$0.isNewline }), "\(idReply)")
            #expect(speech.controls == [FakeSpeech.Control(name: "stop", scope: .client(ClientID(rawValue: orcaID)))])
            // Its message has ended: the next CANCEL has nothing to end again.
            #expect(try orca.exchange("CANCEL self") == "213 OK CANCELED\r\n")
            #expect(try orca.exchange("STOP all") == "210 OK STOPPED\r\n")
            try afterTheEffects()
            #expect(speech.controls.map(\.name) == ["stop", "stop"], "STOP all is still carried out")
        }
    }

    @Test func speechIsToldWhenAClientLeavesByQuitOrByClosing() async throws {
        try await withServer { path, speech, _ in
            var ids: [ClientID] = []
            for quits in [true, false] {
                let client = try RawSSIPClient(path: path)
                let reply = try client.exchange("HISTORY GET CLIENT_ID")
                ids.append(ClientID(rawValue: try #require(UInt64(reply.dropFirst(4).prefix { !$0.isNewline }))))
                if quits { #expect(try client.exchange("QUIT") == "231 HAPPY HACKING\r\n") } else { client.close() }
                try await waitUntil("speech is told client \(ids.last!) left") { speech.left.contains(ids.last!) }
            }
            // (The probe that waited for the socket was a client too.)
            #expect(speech.left.filter(ids.contains) == ids)
        }
    }

    @Test func garbageOverlongLinesAndVanishingClientsAreAnsweredNotCrashedOn() async throws {
        var configuration = SSIPServer.Configuration()
        configuration.maximumLineLength = 1000
        try await withServer(configuration: configuration) { path, speech, _ in
            let client = try RawSSIPClient(path: path)
            #expect(try client.exchange("\u{1}\u{2}garbage") == "500 ERR INVALID COMMAND\r\n")
            #expect(try client.exchange(String(repeating: "x", count: 5000)) == "500 ERR INVALID COMMAND\r\n")
            #expect(try client.exchange("SPEAK") == "230 OK RECEIVING DATA\r\n")
            try client.send(String(repeating: "y", count: 5000) + "\r\n")
            #expect(try client.exchange(".") == "417 ERR MESSAGE TOO LONG\r\n")
            #expect(try client.exchange("HELP").hasSuffix("248 OK HELP SENT\r\n"), "still in conversation")
            // A client that goes away in the middle of a message: nothing is queued, nothing breaks.
            let vanishing = try RawSSIPClient(path: path)
            _ = try vanishing.exchange("SPEAK")
            try vanishing.send("half a mess")
            vanishing.close()
            let later = try RawSSIPClient(path: path)
            #expect(try later.exchange("GET RATE") == "251-0\r\n251 OK GET RETURNED\r\n")
            #expect(speech.posted.isEmpty)
        }
    }

    @Test func aClientThatSendsFasterThanItReadsIsHeldUpNotCutOff() async throws {
        // More replies and events than the outbox's cut-off (4096) if every line were read at once.
        try await withServer(speech: FakeSpeech(eventDelay: .zero)) { path, speech, _ in
            let client = try RawSSIPClient(path: path)
            #expect(try client.exchange("SET self NOTIFICATION all on") == "220 OK NOTIFICATION SET\r\n")
            let count = 3000
            let writer = client.sendFromAnotherThread(String(repeating: "SPEAK\r\nbonjour\r\n.\r\n", count: count))
            // It reads only later: what it sent must wait in its socket, not in our memory.
            try await Task.sleep(for: .milliseconds(500))
            var queued = 0
            var ended = 0
            while ended < count {
                let reply = try client.readReply()
                if reply.hasSuffix("225 OK MESSAGE QUEUED\r\n") { queued += 1 }
                if reply.hasSuffix("702 END\r\n") { ended += 1 }
            }
            writer.wait()
            #expect(queued == count)
            #expect(speech.posted.count == count)
            #expect(try client.exchange("GET RATE") == "251-0\r\n251 OK GET RETURNED\r\n", "still served")
        }
    }

    @Test func aQueuedMessagesEventsWaitUntilTheClientsNextCommand() async throws {
        // As python3-speechd needs: it registers a message's callbacks only after reading its 225.
        var configuration = SSIPServer.Configuration()
        configuration.eventsHeldAfterQueued = .seconds(30)
        try await withServer(speech: FakeSpeech(eventDelay: .zero), configuration: configuration) { path, _, _ in
            let client = try RawSSIPClient(path: path)
            _ = try client.exchange("SET self NOTIFICATION all on")
            _ = try client.exchange("SPEAK")
            #expect(try client.exchange("bonjour\r\n.").hasSuffix("225 OK MESSAGE QUEUED\r\n"))
            // The message has begun and ended meanwhile; its events come after the next reply.
            try await Task.sleep(for: .milliseconds(100))
            #expect(try client.exchange("GET RATE") == "251-0\r\n251 OK GET RETURNED\r\n")
            #expect(try client.readReply().hasSuffix("701 BEGIN\r\n"))
            #expect(try client.readReply().hasSuffix("702 END\r\n"))
        }
    }

    @Test func heldEventsAreReleasedAfterTheHoldWithoutAnotherCommand() async throws {
        var configuration = SSIPServer.Configuration()
        configuration.eventsHeldAfterQueued = .milliseconds(50)
        try await withServer(speech: FakeSpeech(eventDelay: .zero), configuration: configuration) { path, _, _ in
            let client = try RawSSIPClient(path: path)
            _ = try client.exchange("SET self NOTIFICATION all on")
            _ = try client.exchange("SPEAK")
            #expect(try client.exchange("bonjour\r\n.").hasSuffix("225 OK MESSAGE QUEUED\r\n"))
            #expect(try client.readReply().hasSuffix("701 BEGIN\r\n"))
            #expect(try client.readReply().hasSuffix("702 END\r\n"))
        }
    }

    @Test func aLateReaderLosesIndexMarksButNoReplyOrEndOfItsMessages() async throws {
        let router = SSIPRouter(speech: FakeSpeech(), limits: .init(shedProgressAfter: 2, shedCopiesAfter: 4))
        let client = ClientID.next()
        let outbox = await router.register(client)
        let mark = SSIPReply(SSIPEvents.indexMarkCode, "INDEX MARK", lines: ["1", "1", "m"])
        for reply in [SSIPReply.paused, .resumed, mark, .stopped] { await router.send(reply, to: client) }
        #expect(outbox.waiting == 3, "the index mark was dropped, the rest kept")
        // Past both limits: everything but index marks is the client's own, and kept.
        for _ in 1...10 { await router.send(.canceled, to: client) }
        await router.send(mark, to: client)
        #expect(outbox.waiting == 13)
        await router.close(client)
        let written = Collected<SSIPReply>()
        try await outbox.drain { written.append(try #require($0.reply)) }
        #expect(written.all == [.paused, .resumed, .stopped] + Array(repeating: .canceled, count: 10))
    }

    @Test func eventsThatComeWhileTheMessageIsBeingPostedAreItsClients() async throws {
        // Holding: FakeSpeech tells nothing of its own; the events below are the only ones.
        let speech = FakeSpeech(holds: true)
        let router = SSIPRouter(speech: speech, limits: .init())
        speech.whilePosting = { items in
            for item in items {
                await router.route(ClientEvent(.started(item.id), owner: item.owner))
                await router.route(ClientEvent(.finished(item.id, text: item.text, reason: .spoken, message: nil), owner: item.owner))
            }
        }
        let client = ClientID.next()
        let outbox = await router.register(client)
        let item = try await speech.prepare(SpeechRequest(.text("bonjour")), for: client)
        #expect(await router.post(item, notifications: .all))
        await router.close(client)
        let written = Collected<SSIPReply>()
        try await outbox.drain { written.append(try #require($0.reply)) }
        #expect(written.all.map(\.code) == [701, 702], "BEGIN and END, though they came before the post returned")
    }

    @Test func pipelinedSetsAndSpeaksAreAnsweredInOrderAndEachSpeakCarriesItsSettings() async throws {
        // SETs are answered on the event loop, SPEAKs by the reader: one write of both, read back in order.
        try await withServer { path, speech, _ in
            let client = try RawSSIPClient(path: path)
            var lines = ""
            for (rate, text) in [(10, "un"), (20, "deux"), (30, "trois")] {
                lines += "SET self RATE \(rate)\r\nSET self PRIORITY text\r\nSPEAK\r\n\(text)\r\n.\r\nSET self PRIORITY important\r\n"
            }
            try client.send(lines + "GET RATE\r\n")
            for _ in 1...3 {
                #expect(try client.readReply() == "203 OK RATE SET\r\n")
                #expect(try client.readReply() == "202 OK PRIORITY SET\r\n")
                #expect(try client.readReply() == "230 OK RECEIVING DATA\r\n")
                #expect(try client.readReply().hasSuffix("225 OK MESSAGE QUEUED\r\n"))
                #expect(try client.readReply() == "202 OK PRIORITY SET\r\n")
            }
            #expect(try client.readReply() == "251-30\r\n251 OK GET RETURNED\r\n")
            #expect(speech.posted.map(\.request.rate) == [10, 20, 30].map(SSIPSettings.requestRate))
            #expect(speech.posted.map(\.request.urgency) == [.speechDispatcher(.text), .speechDispatcher(.text), .speechDispatcher(.text)])
        }
    }

    @Test func setAllReachesTheOtherConnectionsAndAnUnknownIDIsRefused() async throws {
        try await withServer { path, _, _ in
            let one = try RawSSIPClient(path: path)
            let two = try RawSSIPClient(path: path)
            #expect(try two.exchange("GET RATE") == "251-0\r\n251 OK GET RETURNED\r\n")
            #expect(try one.exchange("SET all RATE 40") == "203 OK RATE SET\r\n")
            #expect(try two.exchange("GET RATE") == "251-40\r\n251 OK GET RETURNED\r\n")
            #expect(try one.exchange("SET 999999 RATE 10") == "303 ERR COULDNT SET RATE\r\n")
        }
    }

    @Test func aLiveSocketIsLeftAloneAndAStaleOneReplaced() async throws {
        let folder = NSTemporaryDirectory() + "a11y-ssip-live-\(getpid())"
        let path = folder + "/speechd.sock"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A stand-in for a running speech-dispatcher.
        let other = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(other) }
        let address = try #require(UnixSocketAddress(path: path))
        #expect(address.withSockaddr { bind(other, $0, $1) } == 0)
        #expect(listen(other, 8) == 0)
        #expect(try SocketFile.prepare(path: path) == false)
        #expect(FileManager.default.fileExists(atPath: path), "never unlinked")
        let speech = FakeSpeech()
        let server = SSIPServer(listener: .path(path), speech: speech, logger: Logger(label: "test"))
        let running = Task { try await server.run() }
        try await Task.sleep(for: .milliseconds(200))
        #expect(FileManager.default.fileExists(atPath: path))
        running.cancel()
        speech.shutDown()
        _ = try? await running.value
        // Once the other server is gone its file is stale: replaced.
        close(other)
        #expect(try SocketFile.prepare(path: path) == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    // MARK: - Real clients

    @Test func spdSayIsQueuedAndWaitsForTheEnd() async throws {
        try await withServer { path, speech, folder in
            let environment = try clientEnvironment(path: path, folder: folder)
            let result = try await run("/usr/bin/spd-say", ["-w", "bonjour"], environment: environment, timeout: .seconds(20))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(speech.posted.map(\.request.content) == [.text("bonjour", spans: [])])
            let important = try await run("/usr/bin/spd-say", ["-P", "important", "attention"], environment: environment, timeout: .seconds(20))
            #expect(important.status == 0)
            try await waitUntil("spd-say's second message arrives") { speech.posted.count == 2 }
            #expect(speech.posted.last?.request.urgency == .speechDispatcher(.important))
            #expect(try await run("/usr/bin/spd-say", ["-C"], environment: environment).status == 0)
            #expect(try await run("/usr/bin/spd-say", ["-S"], environment: environment).status == 0)
            try await waitUntil("spd-say -C and -S arrive") { speech.controls.count == 2 }
            #expect(speech.controls.map(\.name) == ["stop", "stop"])
            #expect(speech.controls.map(\.scope) == [.all, .all])
        }
    }

    /// The fake speaks its message in 20 ms; the real daemon takes as long as the audio does
    /// (SSIPDaemonTests). At 0 ms the whole message ends before python3-speechd has registered the
    /// callback (after reading `225`), so no event can reach it.
    @Test func python3SpeechdSpeaksWithCallbacksAndListsVoices() async throws {
        try await withServer(speech: FakeSpeech(eventDelay: .milliseconds(20))) { path, speech, folder in
            let environment = try clientEnvironment(path: path, folder: folder)
            let script = """
                import speechd, threading
                c = speechd.SSIPClient('a11yd-test', autospawn=False)
                events = []
                done = threading.Event()
                def callback(kind, index_mark=None):
                    events.append(kind if index_mark is None else kind + ':' + index_mark)
                    if kind == speechd.CallbackType.END:
                        done.set()
                c.set_data_mode(speechd.DataMode.SSML)
                c.set_priority(speechd.Priority.MESSAGE)
                c.set_language('fr')
                c.set_rate(50)
                c.speak('<speak>un <mark name="0:2"/>deux</speak>', callback=callback)
                done.wait(5)
                print('EVENTS', ' '.join(events))
                print('VOICES', ' | '.join('/'.join(v) for v in c.list_synthesis_voices()))
                print('FRENCH', c._conn.send_command('LIST', 'SYNTHESIS_VOICES', 'fr')[2])
                c.pause(); c.resume(); c.cancel()
                c.close()
                """
            let result = try await run("/usr/bin/python3", ["-c", script], environment: environment, timeout: .seconds(30))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("EVENTS begin index_marks:0:2 end"), "\(result.stdout)")
            #expect(result.stdout.contains("VOICES French (France)/fr-fr/none | English (America)/en-us/none | German/de/none"))
            #expect(result.stdout.contains("FRENCH ('French (France)\\tfr-fr\\tnone',)\n"), "\(result.stdout)")
            let request = try #require(speech.posted.first?.request)
            #expect(request.language == "fr" && request.rate == 0.75 && request.urgency == .speechDispatcher(.message))
            // Its cancel came after its message had ended: answered (the script exits 0), nothing
            // to end.
            #expect(speech.controls.map(\.name) == ["pause", "resume"])
        }
    }

    /// Orca itself, headless (scripts/orca-ssip-test.sh), against the front end: its set-up dialogue
    /// succeeds, and its start-up message and the focus moving between two buttons reach the speech API.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/orca")))
    func orcaHeadlessSpeaksThroughTheFrontEnd() async throws {
        try await withServer { path, speech, folder in
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("scripts/orca-ssip-test.sh").path
            let result = try await run(
                "/bin/bash", [script, "--socket", path],
                environment: ["PATH": "/usr/bin:/bin", "ORCA_TEST_KEEP": folder + "/orca-logs", "ORCA_DEBUG": "1"].merging(
                    ProcessInfo.processInfo.environment.filter { $0.key == "TMPDIR" }) { a, _ in a },
                timeout: .seconds(90))
            let said = speech.posted.map { posted -> String in
                switch posted.request.content {
                case .ssml(let markup): markup
                case .text(let text, _): text
                case .element: ""
                }
            }
            let orcaLog = ((try? String(contentsOfFile: folder + "/orca-logs/orca.log", encoding: .utf8)) ?? "")
                + ((try? String(contentsOfFile: folder + "/orca-logs/orca-debug.log", encoding: .utf8)).map { String($0.suffix(6000)) } ?? "")
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            #expect(!said.isEmpty, "Orca said nothing; its log:\n\(orcaLog)")
            #expect(said.contains { $0.contains("Screen") && $0.contains("reader") && $0.contains("<mark name=") }, "\(said)")
            #expect(said.contains { $0.contains("Apple") }, "\(said)")
            #expect(said.contains { $0.contains("Banana") }, "\(said)")
            #expect(speech.posted.allSatisfy { $0.request.urgency == .speechDispatcher(.message) })
        }
    }
}
