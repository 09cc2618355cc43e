// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the idle daemon costs the machine: the libraries it maps, the wake-ups it makes.
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
