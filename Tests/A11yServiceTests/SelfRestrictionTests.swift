// SPDX-License-Identifier: GPL-3.0-or-later
import A11yDaemon
import A11ySystem
import A11yTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Landlock, which gives a11yd the file-system protection its user unit cannot (docs/service.md,
/// "Hardening"): first on a thread of this test process (Landlock binds only the calling thread),
/// then on the built daemon.
@Suite(.serialized) struct SelfRestrictionTests {
    static let landlockAvailable = (try? Landlock.abiVersion().get()) != nil

    @Test(.enabled(if: landlockAvailable, "this kernel has no Landlock"))
    func aRestrictedThreadWritesOnlyWhereItsRulesAllow() throws {
        let sandbox = try Sandbox()
        let allowed = sandbox.root + "/allowed"
        let denied = sandbox.root + "/denied"
        for folder in [allowed, denied] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false) }
        let results = Mutex<(outcome: Landlock.Outcome?, allowed: Int32, denied: Int32, read: Bool, exec: Int32)>((nil, -1, -1, false, -1))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let outcome = Landlock.restrictThisThread(to: [
                Landlock.Rule("/", .read), Landlock.Rule(allowed, [.makeRegularFile, .writeFile]),
            ])
            func create(_ path: String) -> Int32 {
                let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                if fd < 0 { return errno }
                close(fd)
                return 0
            }
            let readable = (try? TextFile.read("/proc/self/status", limit: 64 * 1024)) != nil
            // execve needs the execute right, which no rule grants.
            var exec: Int32 = 0
            do {
                var status: Int32 = 0
                waitpid(try Spawn.start("/bin/true", [], environment: [:], stdout: .devNull, stderr: .devNull), &status, 0)
            } catch {
                exec = EACCES
            }
            results.withLock { $0 = (outcome, create(allowed + "/file"), create(denied + "/file"), readable, exec) }
            done.signal()
        }
        thread.start()
        done.wait()
        let seen = results.withLock { $0 }
        guard case .restricted(let abi) = seen.outcome else {
            Issue.record("not restricted: \(String(describing: seen.outcome))")
            return
        }
        #expect(abi >= 1)
        #expect(seen.allowed == 0, "creating a file where a rule allows it: errno \(seen.allowed)")
        #expect(seen.denied == EACCES, "creating a file elsewhere is refused: errno \(seen.denied)")
        #expect(seen.read, "reading anything still works")
        #expect(seen.exec == EACCES, "nothing can be executed")
        // The other threads (this one) keep their rights: the restriction is the thread's and its children's.
        let fd = open(denied + "/from-main", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        #expect(fd >= 0, "the test's own thread is not restricted")
        if fd >= 0 { close(fd) }
    }

    /// The built a11yd restricts itself before any thread starts, and what it must write (its
    /// socket, the lexicon beside its configuration) it still can; a file elsewhere it cannot.
    @Test(.enabled(if: landlockAvailable, "this kernel has no Landlock"))
    func theDaemonRestrictsItselfAndStillWritesItsLexicon() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let daemon = try await sandbox.startDaemon(pulse: pulse)
        defer { daemon.signal(SIGKILL) }
        try await daemon.waitForLog("file system restricted with Landlock")
        var environment = sandbox.environment(pulse: pulse)
        environment["A11YD_NO_AUTOSPAWN"] = "1"
        let added = try await run(
            Binaries.say, ["--socket", sandbox.socketPath, "--lexicon-add", "pomme=ʃa", "--lang", "fr"], environment: environment)
        #expect(added.status == 0, "a11ysay --lexicon-add: \(added.stdout)\(added.stderr)\n\(daemon.log)")
        #expect(FileManager.default.fileExists(atPath: sandbox.configHome + "/a11yd/lexicon.pls"), "the lexicon was written")
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.socketPath), "a11yd removed the socket it made")
    }

    /// A configuration file and a socket named relative to the current folder (`a11yd --config
    /// a11yd.toml --socket a11yd.sock`) are in ".": that folder gets their rights, not an empty
    /// path that no rule can open (the lexicon beside the configuration could not be written).
    @Test func relativeFilesGiveTheirRightsToTheCurrentFolder() throws {
        let sandbox = try Sandbox()
        var options = Daemon.Options(
            socketPath: "a11yd-\(getpid()).sock", configPath: "a11yd-\(getpid()).toml",
            environment: ["XDG_RUNTIME_DIR": sandbox.root, "XDG_DATA_HOME": sandbox.root, "HOME": sandbox.root])
        options.ssipDisabled = true
        let rules = SelfRestriction.rules(for: options)
        #expect(rules.contains(Landlock.Rule(".", [.writeFile, .truncate, .makeRegularFile, .removeFile, .makeDirectory])), "\(rules)")
        #expect(rules.contains(Landlock.Rule(".", [.makeSocket, .removeFile])), "\(rules)")
        #expect(rules.contains(Landlock.Rule(sandbox.root + "/a11yd", [.makeRegularFile, .writeFile, .truncate, .removeFile])), "\(rules)")
        #expect(!rules.contains { $0.path.isEmpty })
    }

    @Test func theSwitchTurnsItOff() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        var environment = sandbox.environment(pulse: pulse)
        environment["A11YD_NO_LANDLOCK"] = "1"
        let daemon = try ChildProcess(Binaries.daemon, ["--socket", sandbox.socketPath], environment: environment, logPath: sandbox.root + "/a11yd.log")
        defer { daemon.signal(SIGKILL) }
        try await daemon.waitForLog("file system not restricted (Landlock) reason=A11YD_NO_LANDLOCK=1")
    }
}
