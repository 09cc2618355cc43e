// SPDX-License-Identifier: GPL-3.0-or-later
import A11yTestSupport
import Foundation
import Testing

/// What the Piper worker (and onnxruntime in it) writes on its stderr reaches the built a11yd's log
/// as a11yd's own lines, never raw: every line of a11yd's stderr, while it speaks in the natural
/// voice and when its worker is ended by a signal (the worker then says so on its stderr), is one
/// of a11yd's log lines, with no escape code or other control character; and onnxruntime's warnings
/// at start are gone.
@Suite(.serialized) struct PiperWorkerLogTests {
    /// a11yd's line when its stderr is not the journal: `TIME LEVEL LABEL: MESSAGE [key=value…]`.
    static var ownLine: Regex<(Substring, Substring)> { #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3} (trace|debug|info|notice|warning|error|critical) a11yd[A-Za-z0-9._-]*: \S/# }

    @Test func theWorkersStderrReachesTheLogAsA11ydsOwnLines() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        var environment = sandbox.environment(pulse: pulse)
        environment.merge(try PiperTestVoice.environment()) { _, piper in piper }
        // A home with no libpulse cookie yet: a11yd's own libpulse must not say so on a11yd's stderr.
        environment["HOME"] = sandbox.root + "/home"
        environment["PULSE_COOKIE"] = nil
        let daemon = try ChildProcess(
            Binaries.daemon, ["--socket", sandbox.socketPath, "--no-ssip"], environment: environment, logPath: sandbox.root + "/a11yd.log")
        defer { daemon.signal(SIGKILL) }
        try await waitUntilAccepts(sandbox.socketPath)
        let said = try await run(
            Binaries.say, ["--socket", sandbox.socketPath, "--wait", "--voice", PiperTestVoice.identifier, "Hello, this is the natural voice."],
            environment: environment, timeout: .seconds(60))
        #expect(said.status == 0, "\(said.stderr) \(daemon.log)")
        // The worker's pid, from a11yd's line saying it is ready.
        let ready = try #require(daemon.log.split(separator: "\n").first { $0.contains("piper engine worker ready") }, "\(daemon.log)")
        let worker = try #require(ready.firstMatch(of: #/ pid=(\d+)/#).flatMap { Int32($0.1) }, "\(ready)")
        // Ended by SIGTERM, the worker writes "a11yd-piper: ended by SIGTERM" on its stderr.
        kill(worker, SIGTERM)
        try await daemon.waitForLog("piper worker: ended by SIGTERM")
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")

        let log = try #require(FileManager.default.contents(atPath: daemon.logPath))
        #expect(!log.contains(0x1B), "an escape code in a11yd's log")
        #expect(!log.contains { ($0 < 0x20 && $0 != 0x0A) || $0 == 0x7F }, "a control character in a11yd's log")
        let lines = String(decoding: log, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for line in lines {
            #expect(line.firstMatch(of: Self.ownLine) != nil, "not a line of a11yd's: \(line)")
        }
        let ended = try #require(lines.first { $0.contains("piper worker: ended by SIGTERM") })
        #expect(ended.contains(" warning a11yd") && ended.contains("engine=piper") && ended.contains("pid=\(worker)"), "\(ended)")

        // onnxruntime's GPU discovery and telemetry, which the sandbox makes fail (it warned of both
        // at every start), are not even attempted: the Piper worker turns them off.
        #expect(!lines.contains { $0.contains("GPU device discovery") || $0.contains("telemetry") }, "\(lines.filter { $0.contains("onnxruntime") })")
    }
}
