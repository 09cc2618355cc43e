// SPDX-License-Identifier: GPL-3.0-or-later
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `a11ysay` starting `a11yd` when nothing listens (machines without systemd).
@Suite(.serialized) struct AutospawnTests {
    @Test func startsTheDaemonOnceAndTheNextClientReusesIt() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let env = sandbox.environment(pulse: pulse)
        let started = ContinuousClock.now
        let first = try await run(Binaries.say, ["--wait", "bonjour"], environment: env)
        let firstTime = ContinuousClock.now - started
        #expect(first.status == 0, "\(first.stderr)")
        let daemons = processes(running: Binaries.daemon, withArgument: sandbox.socketPath)
        defer { Task { await terminate(daemons) } }
        #expect(daemons.count == 1)
        #expect(isSocket(sandbox.socketPath))
        // Detached: its own session, and stdin is /dev/null.
        if let pid = daemons.first {
            #expect(getsid(pid) == pid, "a11yd leads its own session")
            let stdin = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/0")
            #expect(stdin == "/dev/null")
        }
        let log = try String(contentsOfFile: sandbox.autospawnLog, encoding: .utf8)
        #expect(log.contains("a11yd starting"), "its log is under XDG_STATE_HOME: \(log)")

        let again = ContinuousClock.now
        let second = try await run(Binaries.say, ["--status"], environment: env)
        let secondTime = ContinuousClock.now - again
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("state: idle"))
        #expect(processes(running: Binaries.daemon, withArgument: sandbox.socketPath) == daemons, "reused, not restarted")
        #expect(try String(contentsOfFile: sandbox.autospawnLog, encoding: .utf8).components(separatedBy: "a11yd starting").count == 2)
        print("autospawn: a11ysay --wait bonjour \(firstTime) (spawn + speech); a11ysay --status with the daemon up: \(secondTime)")
        await terminate(daemons)
    }

    @Test func timeToFirstReplyWhenSpawning() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let env = sandbox.environment(pulse: pulse)
        var spawned: [Duration] = []
        var reused: [Duration] = []
        for _ in 0..<3 {
            let t0 = ContinuousClock.now
            let cold = try await run(Binaries.say, ["--status"], environment: env)
            spawned.append(ContinuousClock.now - t0)
            #expect(cold.status == 0, "\(cold.stderr)")
            let t1 = ContinuousClock.now
            let warm = try await run(Binaries.say, ["--status"], environment: env)
            reused.append(ContinuousClock.now - t1)
            #expect(warm.status == 0)
            let daemons = processes(running: Binaries.daemon, withArgument: sandbox.socketPath)
            #expect(daemons.count == 1)
            await terminate(daemons)
            #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath))
        }
        print("a11ysay --status, whole process: spawning a11yd \(spawned), daemon already up \(reused)")
        #expect(spawned.allSatisfy { $0 < .seconds(5) })
    }

    @Test func fiveRacingClientsStartExactlyOneDaemonAndAllSpeak() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let env = sandbox.environment(pulse: pulse)
        let results = try await withThrowingTaskGroup(of: (Int32, String).self) { group in
            for n in 1...5 {
                group.addTask {
                    let result = try await run(Binaries.say, ["--queue", "--wait", "annonce \(n)"], environment: env)
                    return (result.status, result.stderr)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let daemons = processes(running: Binaries.daemon, withArgument: sandbox.socketPath)
        #expect(results.map(\.0) == [0, 0, 0, 0, 0], "\(results.map(\.1))")
        #expect(daemons.count == 1, "exactly one a11yd: \(daemons)")
        let log = try String(contentsOfFile: sandbox.autospawnLog, encoding: .utf8)
        #expect(log.components(separatedBy: "a11yd starting").count - 1 == 1, "\(log)")
        #expect(!log.contains("already listening"), "no second daemon even tried")
        await terminate(daemons)
    }

    @Test func disabledByEnvironmentFailsWithOneLine() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        var env = sandbox.environment(pulse: pulse)
        env["A11YD_NO_AUTOSPAWN"] = "1"
        let result = try await run(Binaries.say, ["bonjour"], environment: env)
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("A11YD_NO_AUTOSPAWN=1"))
        #expect(processes(running: Binaries.daemon, withArgument: sandbox.socketPath).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.autospawnLog))
    }

    @Test func disabledByConfigFailsWithOneLine() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[daemon]\nautospawn = false # machines with systemd\n")
        let result = try await run(Binaries.say, ["bonjour"], environment: sandbox.environment(pulse: pulse))
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("daemon.autospawn = false"))
        #expect(processes(running: Binaries.daemon, withArgument: sandbox.socketPath).isEmpty)
    }

    /// Every way TOML writes `daemon.socket`: a11ysay reads the file as a11yd does (one reader), so
    /// it starts a11yd on the configured path, not on the default one (its own line reader took only
    /// a basic string under a `[daemon]` header).
    @Test(arguments: [
        "[daemon]\nsocket = \"PATH\"\n",
        "[daemon]\nsocket = 'PATH' # a literal string\n",
        "daemon.socket = \"PATH\"\n",
        "[voice]\nrate = 175\n\n[\"daemon\"]\n\"socket\" = \"PATH\"\n",
    ])
    func startsTheDaemonOnTheConfiguredSocket(_ config: String) async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let configured = sandbox.root + "/custom/custom.sock"
        try sandbox.writeConfig(config.replacingOccurrences(of: "PATH", with: configured))
        let result = try await run(Binaries.say, ["--wait", "un"], environment: sandbox.environment(pulse: pulse), timeout: .seconds(30))
        let atConfigured = processes(running: Binaries.daemon, withArgument: configured)
        let atDefault = processes(running: Binaries.daemon, withArgument: sandbox.socketPath)
        await terminate(atConfigured + atDefault)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(atConfigured.count == 1, "a11yd started on \(configured)")
        #expect(atDefault.isEmpty, "no a11yd on the default path")
        #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath))
    }

    @Test func disabledByADottedKeyInTheConfig() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("daemon.autospawn = false\n")
        let result = try await run(Binaries.say, ["bonjour"], environment: sandbox.environment(pulse: pulse), timeout: .seconds(30))
        let started = processes(running: Binaries.daemon, withArgument: sandbox.socketPath)
        await terminate(started)
        #expect(result.status == 1)
        #expect(result.stderr.contains("daemon.autospawn = false"), "\(result.stderr)")
        #expect(started.isEmpty)
    }

    /// A FIFO where the configuration should be blocked a11ysay's open(2) until a writer came;
    /// a11ysay now reads only a regular file, as a11yd does, and goes on with the defaults.
    @Test(arguments: ["fifo", "directory"])
    func ignoresAConfigThatIsNotARegularFile(_ kind: String) async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let empty = sandbox.root + "/empty.toml"
        try #require(FileManager.default.createFile(atPath: empty, contents: Data()))
        let daemon = try await sandbox.startDaemon(pulse: pulse, ["--config", empty])
        if kind == "fifo" {
            try #require(mkfifo(sandbox.configFile, 0o600) == 0)
        } else {
            try #require(mkdir(sandbox.configFile, 0o700) == 0)
        }
        let result = try await run(Binaries.say, ["--status"], environment: sandbox.environment(pulse: pulse), timeout: .seconds(10))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("state: idle"))
        daemon.signal(SIGTERM)
        _ = try await daemon.waitForExit()
    }

    @Test func replacesAStaleSocketLeftByADeadDaemon() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let env = sandbox.environment(pulse: pulse)
        // A daemon killed with SIGKILL leaves its socket file behind: connect gets ECONNREFUSED.
        let crashed = try ChildProcess(Binaries.daemon, ["--socket", sandbox.socketPath], environment: env, logPath: sandbox.root + "/crashed.log")
        try await waitUntilAccepts(sandbox.socketPath)
        crashed.signal(SIGKILL)
        _ = try await crashed.waitForExit()
        #expect(isSocket(sandbox.socketPath) && !socketAccepts(sandbox.socketPath))
        let result = try await run(Binaries.say, ["--wait", "de retour"], environment: env)
        #expect(result.status == 0, "\(result.stderr)")
        await terminate(processes(running: Binaries.daemon, withArgument: sandbox.socketPath))
    }

    @Test func controlsDoNotStartADaemon() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let result = try await run(Binaries.say, ["--stop"], environment: sandbox.environment(pulse: pulse))
        #expect(result.status == 1)
        #expect(result.stderr.contains("not running"))
        #expect(processes(running: Binaries.daemon, withArgument: sandbox.socketPath).isEmpty)
    }
}
