// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built `a11yd` as a process: socket activation, signals, reload, idle exit, journal format.
@Suite(.serialized) struct DaemonProcessTests {
    @Test func speaksThroughASocketPassedBySystemdSocketActivate() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let env = sandbox.environment(pulse: pulse)
        let socketPath = sandbox.root + "/activated.sock"
        // systemd-socket-activate passes environment variables only with -E.
        let activator = try ChildProcess(
            "/usr/bin/systemd-socket-activate",
            ["-l", socketPath, "-E", "PULSE_SERVER=\(pulse.serverAddress)", "-E", "XDG_RUNTIME_DIR=\(sandbox.runtime)",
             "-E", "XDG_CONFIG_HOME=\(sandbox.configHome)", "-E", "LANG=fr_FR.UTF-8", Binaries.daemon],
            environment: env, logPath: sandbox.root + "/activate.log")
        // The socket exists (and queues connections) before a11yd runs; the first connection starts it.
        try await waitUntilAccepts(socketPath)
        let recorder = MonitorRecorder(server: pulse.serverAddress)
        try recorder.start()
        let client = try await TestClient.connect(path: socketPath)
        let id = try await client.post(.say("bonjour tout le monde"))
        let finished = try await client.finished(id)
        let recording = recorder.stop()
        #expect(finished.successful == true, "\(activator.log)")
        #expect(finished.reason == .spoken)
        #expect(recording.rms() > 0.02, "speech reached the null sink")
        try await activator.waitForLog("listening on the socket systemd passed")
        #expect(activator.log.contains("socket=\(socketPath)"), "the inherited socket's own path is logged")
        #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath), "no socket of its own")

        // systemd-socket-activate execs a11yd in its own process: the pid is the daemon's.
        activator.signal(SIGTERM)
        #expect(try await activator.waitForExit() == 0, "\(activator.log)")
        #expect(isSocket(socketPath), "a11yd never unlinks a socket it inherited")
    }

    /// Both units' sockets at once, told apart by FileDescriptorName= (a11yd.socket, a11yd-ssip.socket):
    /// an SSIP client's first connection starts a11yd, which serves SSIP on the socket named `ssip`.
    @Test func servesSSIPOnTheSocketSystemdNamedSsip() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let env = sandbox.environment(pulse: pulse)
        let jsonPath = sandbox.root + "/activated.sock"
        let ssipPath = sandbox.root + "/speechd.sock"
        let activator = try ChildProcess(
            "/usr/bin/systemd-socket-activate",
            ["-l", jsonPath, "-l", ssipPath, "--fdname=a11yd:ssip", "-E", "PULSE_SERVER=\(pulse.serverAddress)",
             "-E", "XDG_RUNTIME_DIR=\(sandbox.runtime)", "-E", "XDG_CONFIG_HOME=\(sandbox.configHome)", "-E", "LANG=fr_FR.UTF-8",
             Binaries.daemon],
            environment: env, logPath: sandbox.root + "/activate.log")
        try await waitUntilAccepts(ssipPath)
        let recorder = MonitorRecorder(server: pulse.serverAddress)
        try recorder.start()
        let clientEnvironment = try speechDispatcherClientEnvironment(socket: ssipPath, home: sandbox.root, base: env)
        let said = try await run("/usr/bin/spd-say", ["-w", "-l", "fr", "bonjour"], environment: clientEnvironment)
        let recording = recorder.stop()
        #expect(said.status == 0, "\(said.stderr)\n\(activator.log)")
        #expect(recording.rms() > 0.02, "spd-say heard through the SSIP socket systemd passed")
        try await activator.waitForLog("SSIP listening on the socket systemd passed")
        #expect(activator.log.contains("socket=\(ssipPath)"), "\(activator.log)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.runtime + "/speech-dispatcher/speechd.sock"), "no SSIP socket of its own")
        // The JSON socket passed with it is served too.
        let client = try await TestClient.connect(path: jsonPath)
        let id = try await client.post(.say("et aussi en JSON"))
        #expect(try await client.finished(id).successful == true)
        activator.signal(SIGTERM)
        #expect(try await activator.waitForExit() == 0, "\(activator.log)")
        #expect(isSocket(ssipPath), "a11yd never unlinks a socket it inherited")
    }

    /// Orca stays connected to the SSIP socket, and a subscriber to the JSON socket, while the user
    /// stops a11yd: a11yd ends both conversations itself (the clients read their end) and exits 0
    /// then, rather than waiting for clients that will not hang up until the group cuts them after
    /// its grace period, which left SSIP's front end throwing CancellationError: exit 1, a unit
    /// systemd marks failed.
    @Test func sigtermWithSilentClientsConnectedEndsTheirConversationsAndExitsCleanly() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let (daemon, ssip) = try await sandbox.startDaemonWithSSIP(pulse: pulse)
        defer { daemon.signal(SIGKILL) }
        defer { ssip.close() }
        let named = try await offThePool { try ssip.command("SET self CLIENT_NAME orca:test:main") }
        #expect(named.hasPrefix("208"), "\(named)")
        let client = try await TestClient.connect(path: sandbox.socketPath)

        let stopping = ContinuousClock.now
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")
        // Daemon.maximumGracefulShutdown: what a connection left to the group's cut would take.
        #expect(ContinuousClock.now - stopping < .seconds(2), "no connection held the stop until it was cut: \(daemon.log)")
        #expect(try await offThePool { try ssip.readToEnd() } == "", "the SSIP client read its end")
        try await client.waitUntilClosed()
    }

    @Test func sigtermFinishesEveryPendingItemAsStoppedAndRemovesItsSocket() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let daemon = try await sandbox.startDaemon(pulse: pulse)
        let client = try await TestClient.connect(path: sandbox.socketPath)
        let long = try await client.post(.say(longSentence))
        let second = try await client.post(.say("deuxième annonce", queue: true))
        let third = try await client.post(.say("troisième annonce", queue: true))
        try await client.waitFor("started #\(long)") { $0.event == "started" && $0.utterance == long }

        daemon.signal(SIGTERM)
        for id in [long, second, third] {
            let finished = try await client.finished(id, timeout: .seconds(10))
            #expect(finished.reason == .stopped, "#\(id): \(LineCodec.encodeString(finished))")
            #expect(finished.successful == false)
        }
        // The client stays connected: a11yd ends its conversation once its events are written.
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")
        try await client.waitUntilClosed()
        #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath), "the socket it created is gone")
    }

    @Test func sigintStopsGracefullyToo() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let daemon = try await sandbox.startDaemon(pulse: pulse)
        daemon.signal(SIGINT)
        let status = try await daemon.waitForExit()
        #expect(status == 0, "exit \(status): \(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath))
    }

    @Test func sighupReloadsAGoodConfigAndKeepsTheOldOneOnABadConfig() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[voice]\nrate = 175\n")
        let daemon = try ChildProcess(
            Binaries.daemon, ["--socket", sandbox.socketPath, "--config", sandbox.configFile],
            environment: sandbox.environment(pulse: pulse), logPath: sandbox.root + "/a11yd.log")
        try await waitUntilAccepts(sandbox.socketPath)

        try sandbox.writeConfig("[voice]\nrate = 220\n\n[queue]\nmax_bytes = 33554432\n")
        daemon.signal(SIGHUP)
        try await daemon.waitForLog("configuration reloaded")
        #expect(daemon.log.contains("voice.rate: 175 -> 220"), "\(daemon.log)")
        #expect(daemon.log.contains("queue.max_bytes: 16777216 -> 33554432"), "\(daemon.log)")

        try sandbox.writeConfig("[voice]\nrate = 9000\n")
        daemon.signal(SIGHUP)
        try await daemon.waitForLog("configuration not reloaded")
        #expect(daemon.log.contains("'voice.rate' must be within 80...450, got 9000"), "\(daemon.log)")

        try sandbox.writeConfig("[voice\nrate = \n")
        daemon.signal(SIGHUP)
        try await waitForCount(of: "configuration not reloaded", in: daemon, count: 2)

        // Still running, still speaking.
        #expect(daemon.isRunning)
        let client = try await TestClient.connect(path: sandbox.socketPath)
        let id = try await client.post(.say("toujours là"))
        #expect(try await client.finished(id).successful == true)
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
    }

    /// The user's lexicon.pls, edited by hand, is read at start and again on SIGHUP; a broken file
    /// is reported with its line and column and the last good lexicon stays in force.
    @Test func aHandEditedLexiconIsReloadedOnSighupAndABrokenOneIsKeptOut() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let lexiconFile = sandbox.configHome + "/a11yd/lexicon.pls"
        func writeLexicon(_ body: String) throws {
            try """
                <?xml version="1.0" encoding="UTF-8"?>
                <lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="fr">
                \(body)
                </lexicon>
                """.write(toFile: lexiconFile, atomically: false, encoding: .utf8)
        }
        try writeLexicon("<lexeme><grapheme>pomme</grapheme><phoneme>ʃa</phoneme></lexeme>")
        let environment = sandbox.environment(pulse: pulse)
        let daemon = try ChildProcess(
            Binaries.daemon, ["--socket", sandbox.socketPath], environment: environment, logPath: sandbox.root + "/a11yd.log")
        try await waitUntilAccepts(sandbox.socketPath)
        func shown(_ word: String) async throws -> String {
            let result = try await run(Binaries.say, ["--show-ipa", "--lang", "fr", "--socket", sandbox.socketPath, word], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout
        }
        let chat = try await shown("chat")
        let poire = try await shown("poire")
        #expect(try await shown("pomme") == chat, "read at start")

        try writeLexicon("<lexeme><grapheme>pomme</grapheme><phoneme>pwaʁ</phoneme></lexeme>")
        daemon.signal(SIGHUP)
        try await daemon.waitForLog("lexicon reloaded")
        #expect(try await shown("pomme") == poire, "the hand edit is in force after SIGHUP")

        try writeLexicon("<lexeme><grapheme>pomme</grapheme><phoneme>ʃa</phoneme>")
        daemon.signal(SIGHUP)
        try await daemon.waitForLog("lexicon file not reloaded")
        #expect(daemon.log.contains("lexicon.pls"), "\(daemon.log)")
        #expect(daemon.log.contains("line"), "the problem names where: \(daemon.log)")
        #expect(try await shown("pomme") == poire, "the last good lexicon stays in force")
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
    }

    @Test func idleExitEndsTheDaemonAfterTheConfiguredTime() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[daemon]\nidle_exit_seconds = 1\n")
        let daemon = try await sandbox.startDaemon(pulse: pulse)
        // A connected client keeps it alive, even when nothing speaks.
        let client = try await TestClient.connect(path: sandbox.socketPath)
        let id = try await client.post(.say("bonjour"))
        #expect(try await client.finished(id).successful == true)
        try await Task.sleep(for: .milliseconds(1_600))
        #expect(daemon.isRunning, "a client is still connected")
        // Client gone: exits about a second later, cleanly, removing its socket.
        let closedAt = ContinuousClock.now
        await client.close()
        #expect(try await daemon.waitForExit(timeout: .seconds(5)) == 0, "\(daemon.log)")
        let after = ContinuousClock.now - closedAt
        #expect(after >= .milliseconds(900) && after < .seconds(3), "exited \(after) after the last client left")
        #expect(daemon.log.contains("idle; exiting"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath))
    }

    @Test func logsUseJournalFormatOnlyWhenStderrIsTheNamedJournalStream() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let logPath = sandbox.root + "/a11yd.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        var info = stat()
        #expect(stat(logPath, &info) == 0)
        for (name, value) in [("matching", "\(info.st_dev):\(info.st_ino)"), ("inherited, not ours", "1:2")] {
            var env = sandbox.environment(pulse: pulse)
            env["JOURNAL_STREAM"] = value
            // The child opens the same file again (O_TRUNC): same device and inode as JOURNAL_STREAM names.
            let daemon = try ChildProcess(Binaries.daemon, ["--socket", sandbox.socketPath], environment: env, logPath: logPath)
            try await waitUntilAccepts(sandbox.socketPath)
            daemon.signal(SIGTERM)
            let status = try await daemon.waitForExit()
            #expect(status == 0, "\(name): exit \(status): \(daemon.log)")
            // Lines from a11yd's logger; libpulse writes its own to stderr too ("Failed to load cookie
            // file…" when a11yd, restricted by Landlock, cannot create a missing cookie).
            let first = try #require(daemon.log.split(separator: "\n").first { $0.contains("a11yd starting") }, "\(name): no log")
            if name == "matching" {
                #expect(first.hasPrefix("<6>a11yd starting"), "\(name): \(first)")
            } else {
                #expect(first.contains(" info a11yd: a11yd starting"), "\(name): \(first)")
            }
        }
    }
}

func waitForCount(of text: String, in child: ChildProcess, count: Int, timeout: Duration = .seconds(15)) async throws {
    let deadline = ContinuousClock.now + timeout
    while child.log.components(separatedBy: text).count - 1 < count {
        guard ContinuousClock.now < deadline else { throw TestFailure("fewer than \(count) '\(text)' in:\n\(child.log)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
