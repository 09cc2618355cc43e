// SPDX-License-Identifier: GPL-3.0-or-later
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// a11yd's units under a real, unprivileged `systemd --user` of a throwaway user, with that user's
/// own PipeWire from Debian's units: sound recorded at its null sink's monitor, nothing of a11yd
/// started by hand. Two ways in:
/// - by default, the units and binaries as `make install` installs them for one user (this build),
///   then the README's `systemctl --user enable --now a11yd.socket a11yd-ssip.socket`;
/// - with `A11YD_LIVE_INSTALLED=1` (scripts/package-test.sh, after `apt-get install ./dist/a11yd_….deb`),
///   the package's files and nothing enabled at all: a new user gets a11yd from the package alone.
/// Skipped, touching nothing, without root or on a machine booted with systemd (`LiveUserSession.skipReason`).
@Suite(.serialized) struct LiveUserManagerTests {
    static let packageMode = ProcessInfo.processInfo.environment["A11YD_LIVE_INSTALLED"] == "1"

    // In package mode scripts/package-test.sh has checked the machine: a skip there would be a pass that proves nothing.
    @Test(.enabled(if: LiveUserSession.skipReason == nil || packageMode, Comment(rawValue: LiveUserSession.skipReason ?? "")))
    func aNewUserHearsA11ysayAndSpdSayThroughItsUserManager() async throws {
        if let reason = LiveUserSession.skipReason { throw TestFailure("the installed package cannot be tested here: \(reason)") }
        let session = try await LiveUserSession()
        let uid = session.uid
        var failure: (any Error)?
        do {
            try await speakThroughTheUserManager(session)
        } catch {
            failure = error
        }
        let leftovers = await session.tearDown()
        #expect(leftovers.isEmpty, "the live test left: \(leftovers)")
        // Everything the session made is gone: the user, its processes, its cgroups, the marker.
        #expect(getpwnam(session.name) == nil, "user \(session.name) removed")
        #expect(!FileManager.default.fileExists(atPath: session.home), "home \(session.home) removed")
        #expect(!FileManager.default.fileExists(atPath: "/run/user/\(uid)"))
        #expect(!FileManager.default.fileExists(atPath: LiveUserSession.marker), "\(LiveUserSession.marker) removed")
        for root in LiveUserSession.cgroupRoots {
            #expect(!FileManager.default.fileExists(atPath: root + "/user.slice/user-\(uid).slice"), "cgroup under \(root) removed")
        }
        #expect(session.userProcesses.isEmpty, "no process of uid \(uid) left")
        if let failure { throw failure }
    }

    func speakThroughTheUserManager(_ session: LiveUserSession) async throws {
        try await session.useNullSinkSoundServer()
        try await session.logDaemonToAFile()
        try await session.startUserManager()

        let binFolder: String
        if Self.packageMode {
            binFolder = "/usr/bin"
            #expect(FileManager.default.fileExists(atPath: "/usr/lib/systemd/user/a11yd.service"), "the package's units")
            // dh_installsystemduser's `systemctl --global enable`: the user enabled nothing.
            #expect(try await session.systemctl("is-enabled", "a11yd.socket", "a11yd-ssip.socket") == "enabled\nenabled")
        } else {
            binFolder = session.home + "/.local/bin"
            let install = try await run(
                "/usr/bin/make",
                ["-C", Binaries.packageRoot, "install", "INSTALL_BUILD=", "BIN=\(Binaries.folder)", "SCRATCH=\(session.scratch)/scratch",
                 "SWIFT=/bin/false", "CONFIG_SOURCE=\(Binaries.packageRoot)/config/a11yd.toml"],
                environment: ["HOME": session.home, "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": session.runtime])
            #expect(install.status == 0, "make install: \(install.stdout)\(install.stderr)")
            try await session.chownTree(session.home)
            // The README's two commands after `make install`.
            try await session.systemctl("daemon-reload")
            try await session.systemctl("enable", "--now", "a11yd.socket", "a11yd-ssip.socket")
        }
        #expect(try await session.property("ActiveState", of: "a11yd.service") == "inactive", "socket-activated: not started yet")

        let recorder = MonitorRecorder(server: session.pulseServer)
        try recorder.start(timeout: 15)
        defer { recorder.stop() }
        var environment = session.environment(binFolder: binFolder)
        // The systemd unit must answer: a11ysay starting a daemon of its own would prove nothing.
        environment["A11YD_NO_AUTOSPAWN"] = "1"
        let a11ysay = binFolder + "/a11ysay"

        /// The utterance heard since `mark`: once some sound came and then 0.5 s of silence, or 6 s after `mark`.
        func heardUtterance(after mark: Double) async -> HeardUtterance {
            while recorder.elapsed() < mark + 6 {
                let recording = recorder.snapshot()
                if let last = recording.lastAudibleTime(), last > mark, recorder.elapsed() > last + 0.5 { break }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return recorder.snapshot().utterance(from: mark)
        }

        func expectHeard(_ what: String, after mark: Double) async {
            await Self.expectHeard(what, after: mark, recorder: recorder, session: session)
        }

        // 1. a11ysay, on a11yd.socket: the first connection starts a11yd.service.
        var mark = recorder.elapsed()
        let said = try await session.run(as: a11ysay, ["--wait", "bonjour tout le monde"], environment: environment)
        if said.status != 0 { Issue.record("a11ysay --wait exited \(said.status): \(said.stdout)\(said.stderr)\n\(await session.diagnostics())") }
        await expectHeard("a11ysay --wait", after: mark)
        let startedPID = try await session.property("MainPID", of: "a11yd.service")
        #expect(startedPID != "0", "a11yd.service runs")

        // What the unit's namespaces cannot give under this manager, a11yd gives itself (Landlock),
        // which needs the unit's seccomp filter to let Landlock's system calls through.
        let log = (try? String(contentsOfFile: session.daemonLog, encoding: .utf8)) ?? ""
        if SelfRestrictionTests.landlockAvailable {
            #expect(log.contains("file system restricted with Landlock"), "a11yd's log:\n\(log)")
        } else {
            #expect(log.contains("file system not restricted (Landlock)"), "a11yd's log:\n\(log)")
        }
        // Its engine worker started under the unit and shut itself in further: the unit's filter lets
        // its seccomp call through (a worker that could not would say "no seccomp").
        let ready = log.split(separator: "\n").first { $0.contains("engine worker ready") }
        #expect(ready?.contains("seccomp") == true && ready?.contains("no seccomp") == false, "a11yd's log:\n\(log)")
        // Its lexicon is the one file it writes: still allowed.
        let added = try await session.run(as: a11ysay, ["--lexicon-add", "pomme=ʃa", "--lang", "fr"], environment: environment)
        #expect(added.status == 0, "a11ysay --lexicon-add under the unit: \(added.stdout)\(added.stderr)\n\(log)")
        #expect(FileManager.default.fileExists(atPath: session.home + "/.config/a11yd/lexicon.pls"), "the lexicon was written")

        // 2. spd-say on speech-dispatcher's socket, which a11yd-ssip.socket holds: libspeechd finds it
        // answered and never spawns speech-dispatcher (installed here: the clients' default).
        mark = recorder.elapsed()
        let spd = try await session.run(as: "/usr/bin/spd-say", ["-w", "bonjour de spd-say"], environment: environment)
        #expect(spd.status == 0, "spd-say -w: \(spd.stdout)\(spd.stderr)")
        #expect(!session.userProcessNames.contains { $0.hasPrefix("speech-dispatch") }, "no speech-dispatcher: \(session.userProcessNames)")
        await expectHeard("spd-say -w", after: mark)
        #expect(try await session.property("MainPID", of: "a11yd.service") == startedPID, "the same a11yd served both sockets")

        // 3. The documented switch back to speech-dispatcher, one command: libspeechd then finds no
        // socket and spawns speech-dispatcher, as it would without a11yd.
        let switched = try await session.run(as: "/bin/sh", ["-c", Self.switchBack], environment: environment)
        #expect(switched.status == 0, "\(Self.switchBack): \(switched.stdout)\(switched.stderr)")
        _ = try await session.run(as: "/usr/bin/spd-say", ["-w", "speech-dispatcher"], environment: environment)
        let spawned = session.userProcesses.filter { session.name(of: $0)?.hasPrefix("speech-dispatch") == true }
        #expect(!spawned.isEmpty, "after switching back, spd-say spawned speech-dispatcher: \(session.userProcessNames)")
        // And to a11yd again, one command: heard, and no speech-dispatcher spawned.
        let again = try await session.run(as: "/bin/sh", ["-c", Self.switchAgain], environment: environment)
        if again.status != 0 { Issue.record("\(Self.switchAgain): \(again.stdout)\(again.stderr)\n\(await session.diagnostics())") }
        #expect(try await session.property("ActiveState", of: "a11yd-ssip.socket") == "active", "systemd holds the SSIP socket again")
        mark = recorder.elapsed()
        let back = try await session.run(as: "/usr/bin/spd-say", ["-w", "de retour"], environment: environment)
        #expect(back.status == 0, "spd-say -w after switching again: \(back.stdout)\(back.stderr)")
        await expectHeard("spd-say -w after switching again", after: mark)
        #expect(!session.userProcessNames.contains { $0.hasPrefix("speech-dispatch") }, "no speech-dispatcher: \(session.userProcessNames)")
        let firstPID = try await session.property("MainPID", of: "a11yd.service")

        // 4. kill -9: the next client is answered by a new a11yd, and what it says is heard as loud
        // and as long as the same words before the kill (a11ysay's exit 0 is only what a11yd
        // believes), whether the client asks at once (its connection waits in the socket's backlog
        // while systemd restarts a11yd after RestartSec) or after systemd has restarted it
        // (Restart=on-failure), when it waits, connected to the sound server, for its first client.
        mark = recorder.elapsed()
        let before = try await session.run(as: a11ysay, ["--wait", "--lang", "fr", "encore là"], environment: environment)
        #expect(before.status == 0, "a11ysay before kill -9: \(before.stdout)\(before.stderr)")
        let reference = await heardUtterance(after: mark)
        print("LiveUserManagerTests: before kill -9: \(reference)")
        var killedPID = firstPID
        for restartedBySystemd in [false, true] {
            if let pid = pid_t(killedPID), pid > 0 { kill(pid, SIGKILL) }
            let how = restartedBySystemd ? "once systemd had restarted a11yd" : "at once"
            if restartedBySystemd {
                try await waitUntil("systemd restarts a11yd after kill -9", session) {
                    let pid = try? await session.property("MainPID", of: "a11yd.service")
                    let state = try? await session.property("ActiveState", of: "a11yd.service")
                    return pid != nil && pid != "0" && pid != killedPID && state == "active"
                }
            }
            mark = recorder.elapsed()
            let said = try await session.run(as: a11ysay, ["--wait", "--lang", "fr", "encore là"], environment: environment)
            if said.status != 0 { Issue.record("a11ysay after kill -9 (\(how)) exited \(said.status): \(said.stdout)\(said.stderr)\n\(await session.diagnostics())") }
            let heard = await heardUtterance(after: mark)
            print("LiveUserManagerTests: after kill -9 (\(how)): \(heard)")
            if !heard.isHeardAsWellAs(reference) {
                Issue.record("after kill -9 (\(how)) a11ysay exited \(said.status), heard: \(heard); before the kill: \(reference)\n\(await session.diagnostics())")
            }
            let newPID = try await session.property("MainPID", of: "a11yd.service")
            #expect(newPID != "0" && newPID != killedPID, "a new a11yd after kill -9 \(how) (was \(killedPID), now \(newPID))")
            killedPID = newPID
        }
        let secondPID = killedPID

        // 5. reload: SIGHUP, which a11yd traps; an untrapped one would end it and change MainPID.
        try await session.systemctl("reload", "a11yd.service")
        #expect(try await session.property("MainPID", of: "a11yd.service") == secondPID, "reload kept the same a11yd")
        let status = try await session.run(as: a11ysay, ["--status"], environment: environment)
        #expect(status.status == 0, "a11ysay --status after reload: \(status.stdout)\(status.stderr)")

        // 6. stop while one item speaks and one waits: both end `stopped`, and the client hears why.
        mark = recorder.elapsed()
        let speaking = try session.start(as: a11ysay, ["--json", "--wait", longSentence], environment: environment, log: "speaking.jsonl")
        try await waitUntil("the long sentence is heard", session) { recorder.snapshot().audibleDuration(from: mark) > 0.2 }
        let queued = try session.start(as: a11ysay, ["--json", "--queue", "--wait", "et ensuite ceci"], environment: environment, log: "queued.jsonl")
        // a11ysay's output is a file here, written at its exit: ask the daemon for its queue instead.
        try await waitUntil("the queued item waits in a11yd's queue", session) {
            let status = try? await session.run(as: a11ysay, ["--json", "--status"], environment: environment)
            return status?.stdout.contains("ensuite ceci") == true
        }
        try await session.systemctl("stop", "a11yd.service")
        for (client, name) in [(speaking, "the speaking item"), (queued, "the queued item")] {
            let exit = try await client.waitForExit(timeout: .seconds(15))
            #expect(exit == 2, "\(name): a11ysay --wait exits 2 when not spoken, got \(exit): \(client.log)")
            #expect(client.log.contains("\"reason\":\"stopped\""), "\(name) finished `stopped`: \(client.log)")
        }
        #expect(try await session.property("ActiveState", of: "a11yd.service") == "inactive")
        #expect(try await session.property("ActiveState", of: "a11yd.socket") == "active", "the socket still listens")
        #expect(!session.userProcessNames.contains { $0.hasPrefix("speech-dispatch") }, "no speech-dispatcher: \(session.userProcessNames)")

        if Self.packageMode { try await removeUnderARunningSession(session, recorder: recorder, environment: environment) }
    }

    /// `apt-get remove a11yd` while the user's a11yd runs: it goes on speaking (nothing is stopped by
    /// surprise), and no unit stays enabled for anyone. scripts/package-test.sh purges afterwards.
    func removeUnderARunningSession(_ session: LiveUserSession, recorder: MonitorRecorder, environment: [String: String]) async throws {
        let status = try await session.run(as: "/usr/bin/a11ysay", ["--status"], environment: environment)  // starts a11yd again
        #expect(status.status == 0, "a11ysay --status: \(status.stderr)")
        let running = try await session.property("MainPID", of: "a11yd.service")
        let remove = try await run(
            "/usr/bin/apt-get", ["remove", "-y", "-qq", "-o", "DPkg::Lock::Timeout=300", "a11yd"],
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"], timeout: .seconds(300))
        #expect(remove.status == 0, "apt-get remove a11yd: \(remove.stdout)\(remove.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/usr/bin/a11yd"))
        let links = (try? FileManager.default.subpathsOfDirectory(atPath: "/etc/systemd/user"))?.filter { $0.contains("a11yd") } ?? []
        #expect(links.isEmpty, "no a11yd unit enabled after remove: \(links)")
        #expect(try await session.property("MainPID", of: "a11yd.service") == running, "the session's a11yd still runs")
        let mark = recorder.elapsed()
        let spd = try await session.run(as: "/usr/bin/spd-say", ["-w", "toujours là"], environment: environment)
        #expect(spd.status == 0, "spd-say -w after remove: \(spd.stdout)\(spd.stderr)")
        await Self.expectHeard("spd-say -w to the running a11yd after apt-get remove", after: mark, recorder: recorder, session: session)
    }

    /// Expects at least 0.3 s of sound at the user's sink since `mark`; the last of it may reach the
    /// monitor after the client returned, so it looks again for up to 10 s before it fails.
    static func expectHeard(_ what: String, after mark: Double, recorder: MonitorRecorder, session: LiveUserSession) async {
        let deadline = ContinuousClock.now + .seconds(10)
        var heard = recorder.snapshot().audibleDuration(from: mark)
        while heard <= 0.3, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
            heard = recorder.snapshot().audibleDuration(from: mark)
        }
        if heard <= 0.3 { Issue.record("\(what): \(heard) s audible at the user's nullsink.monitor\n\(await session.diagnostics())") }
    }

    /// docs/service.md's commands, run as the user: speech-dispatcher again, and a11yd again. The
    /// package's units are enabled for everyone, so a user masks the SSIP socket; units that
    /// `make install` put in ~/.config the user enabled and disables.
    /// Stopped before it is masked: a masked unit has lost its RemoveOnStop=, and its socket file, left
    /// in place, would still lead to the running a11yd (`mask --now` masks first).
    static let switchBack = packageMode
        ? "systemctl --user stop a11yd-ssip.socket && systemctl --user mask a11yd-ssip.socket"
        : "systemctl --user disable --now a11yd-ssip.socket"
    /// speech-dispatcher first leaves the socket path (SIGTERM: it removes its socket file; the kernel
    /// keeps 15 characters of its name, hence `speech-dispatch`), then a11yd takes it back.
    static let stopSpeechDispatcher = "pkill -u \"$USER\" -x speech-dispatch; pidwait -u \"$USER\" -x speech-dispatch; "
    /// A socket unit refuses to start while its service runs: a11yd stops, and the next client starts
    /// it with both sockets.
    static let switchAgain = stopSpeechDispatcher + (packageMode ? "systemctl --user unmask" : "systemctl --user enable")
        + " a11yd-ssip.socket && systemctl --user stop a11yd.service && systemctl --user start a11yd-ssip.socket"

    /// Polls `condition` every 20 ms, at most 20 s; fails with the session's state.
    func waitUntil(_ what: String, _ session: LiveUserSession, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while await !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("\(what): not within 20 s\n\(await session.diagnostics())") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
