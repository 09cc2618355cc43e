// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the idle daemon costs the machine (issue 11): the libraries it maps, the wake-ups it makes.
/// The memory itself is measured by `make bench`, not asserted.
@Suite(.serialized) struct DaemonFootprintTests {
    @Test func a11ydLinksNeitherFoundationNorICUNorTheSharedSwiftLibraries() async throws {
        let result = try await run("/usr/bin/ldd", [Binaries.daemon], environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        let libraries = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(libraries.contains { $0.hasPrefix("libespeak-ng") }, "ldd lists the daemon's libraries: \(libraries)")
        for banned in ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"] {
            #expect(!libraries.contains { $0.hasPrefix(banned) }, "a11yd links \(banned): \(libraries)")
        }
        #expect(!libraries.contains { $0.hasPrefix("libswift") }, "the standard library is linked in: \(libraries)")
    }

    /// An idle daemon sleeps: nothing of its own wakes it, with idle exit off or armed. What remains
    /// is libdispatch's worker-pool monitor (a 1 s timer on Linux, under Swift concurrency's executor).
    @Test(arguments: ["", "[daemon]\nidle_exit_seconds = 3600\n"])
    func theIdleDaemonMakesAlmostNoWakeUps(config: String) async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        try sandbox.writeConfig(config)
        let daemon = try await sandbox.startDaemon(pulse: pulse, ["--no-ssip"])
        // A client comes and goes (idle exit, when on, is armed after it), without speech.
        let client = try await TestClient.connect(path: sandbox.socketPath)
        try await client.send(RequestLine(.status, id: .number(1)))
        try await client.waitFor("status") { $0.id == .number(1) }
        await client.close()
        try await Task.sleep(for: .milliseconds(500))

        let window = Duration.seconds(4)
        let before = voluntarySwitches(daemon.pid)
        try await Task.sleep(for: window)
        let after = voluntarySwitches(daemon.pid)
        let woken = after.reduce(0) { total, thread in total + thread.value.count - (before[thread.key]?.count ?? 0) }
        let detail = after.compactMap { tid, thread in
            let count = thread.count - (before[tid]?.count ?? 0)
            return count == 0 ? nil : "\(thread.name)[\(tid)]: \(count)"
        }
        // About 4 from libdispatch's monitor; a 200 ms poll made about 80.
        #expect(woken <= 10, "\(woken) wake-ups in \(window): \(detail)")
        #expect(daemon.isRunning)
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
    }

    /// Voluntary context switches (a thread blocked, then was woken) of each thread of `pid`.
    private func voluntarySwitches(_ pid: pid_t) -> [String: (name: String, count: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var result: [String: (name: String, count: Int)] = [:]
        for tid in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8) else { continue }
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            if let count = line.flatMap({ Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }) {
                result[tid] = (name, count)
            }
        }
        return result
    }
}

/// Idle exit waits for what idleness depends on, without polling: a client leaving, the last item
/// finishing, a reload turning it on.
@Suite(.serialized) struct IdleExitTests {
    /// spd-say closes its SSIP connection right after SPEAK: the daemon has no client while it still
    /// speaks, and the idle time starts only when the item has finished.
    @Test func theIdleTimeStartsWhenTheLastItemOfAClientThatLeftHasFinished() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[daemon]\nidle_exit_seconds = 1\n")
        let ssipSocket = sandbox.runtime + "/ssip.sock"
        let daemon = try ChildProcess(
            Binaries.daemon, ["--socket", sandbox.socketPath, "--ssip-socket", ssipSocket, "--log-level", "debug"],
            environment: sandbox.environment(pulse: pulse), logPath: sandbox.root + "/a11yd.log")
        try await waitUntilAccepts(ssipSocket)
        let clients = try speechDispatcherClientEnvironment(
            socket: ssipSocket, home: sandbox.root + "/client-home", base: pulse.clientEnvironment)
        let said = try await run("/usr/bin/spd-say", ["-l", "fr", longSentence], environment: clients, timeout: .seconds(30))
        #expect(said.status == 0, "\(said.stderr)")
        let leftAt = ContinuousClock.now
        try await daemon.waitForLog("finished", timeout: .seconds(30))
        let finishedAt = ContinuousClock.now
        #expect(finishedAt - leftAt > .seconds(2), "the long sentence was spoken after spd-say left")
        #expect(try await daemon.waitForExit(timeout: .seconds(5)) == 0, "\(daemon.log)")
        let after = ContinuousClock.now - finishedAt
        #expect(after >= .milliseconds(900) && after < .seconds(3), "exited \(after) after the last item finished")
        #expect(daemon.log.contains("reason=spoken"), "\(daemon.log)")
        #expect(daemon.log.contains("idle; exiting"))
    }

    @Test func aReloadThatTurnsIdleExitOnStartsTheIdleTimeAtOnce() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        try sandbox.writeConfig("[daemon]\nidle_exit_seconds = 0\n")
        let daemon = try await sandbox.startDaemon(pulse: pulse, ["--no-ssip"])
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(daemon.isRunning, "idle exit is off")
        try sandbox.writeConfig("[daemon]\nidle_exit_seconds = 1\n")
        let reloadedAt = ContinuousClock.now
        daemon.signal(SIGHUP)
        #expect(try await daemon.waitForExit(timeout: .seconds(5)) == 0, "\(daemon.log)")
        let after = ContinuousClock.now - reloadedAt
        #expect(after >= .milliseconds(900) && after < .seconds(3), "exited \(after) after the reload")
    }
}
