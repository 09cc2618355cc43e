// SPDX-License-Identifier: GPL-3.0-or-later
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The natural voice installed while a11yd runs (`make voices` or `a11yd-install-voices` after
/// `make run`): the built daemon, shut in by Landlock from its start, takes it up at a reload, no
/// restart; before the reload its voice says what to do, never "not installed".
@Suite(.serialized) struct PiperReloadTests {
    @Test func aRuntimeAndVoiceInstalledWhileRunningSpeakAfterAReload() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let dataHome = sandbox.root + "/data"
        try FileManager.default.createDirectory(atPath: dataHome + "/a11yd", withIntermediateDirectories: true)
        var environment = sandbox.environment(pulse: pulse)
        environment["XDG_DATA_HOME"] = dataHome
        environment["XDG_DATA_DIRS"] = "/nonexistent"
        environment["A11YD_PIPER_RUNTIME"] = nil
        let daemon = try ChildProcess(
            Binaries.daemon, ["--socket", sandbox.socketPath, "--no-ssip"], environment: environment, logPath: sandbox.root + "/a11yd.log")
        try await waitUntilAccepts(sandbox.socketPath)
        func voices() async throws -> [Substring] {
            try await run(Binaries.say, ["--socket", sandbox.socketPath, "--list-voices"], environment: environment, timeout: .seconds(20))
                .stdout.split(separator: "\n").filter { $0.hasPrefix(PiperTestVoice.identifier + "\t") }
        }
        #expect(try await voices().isEmpty, "nothing installed yet")

        // Installed as the installer does, into the user's data folder: the runtime first.
        let installed = try PiperTestVoice.dataHome() + "/a11yd"
        try FileManager.default.createSymbolicLink(atPath: dataHome + "/a11yd/piper", withDestinationPath: installed + "/piper")
        #expect(try await voices().isEmpty, "voices are found at a reload")
        try FileManager.default.createSymbolicLink(atPath: dataHome + "/a11yd/voices", withDestinationPath: installed + "/voices")
        daemon.signal(SIGHUP)
        let deadline = ContinuousClock.now + .seconds(20)
        var listed: [Substring] = []
        while ContinuousClock.now < deadline {
            listed = try await voices()
            if listed.contains(where: { !$0.contains("cannot speak") }) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(listed.count == 1 && !listed[0].contains("cannot speak"), "\(listed) \(daemon.log)")

        try await PiperDaemonProcessTests.expectHeardInThePiperVoice(daemon: daemon, sandbox: sandbox, pulse: pulse, environment: environment)
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")
    }

    /// Installed but not yet reloaded: the voice says to reload, never that nothing is installed.
    @Test func beforeTheReloadTheVoiceSaysToReload() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let dataHome = sandbox.root + "/data"
        try FileManager.default.createDirectory(atPath: dataHome + "/a11yd", withIntermediateDirectories: true)
        let installed = try PiperTestVoice.dataHome() + "/a11yd"
        // The voice is there from the start, its runtime not yet.
        try FileManager.default.createSymbolicLink(atPath: dataHome + "/a11yd/voices", withDestinationPath: installed + "/voices")
        var environment = sandbox.environment(pulse: pulse)
        environment["XDG_DATA_HOME"] = dataHome
        environment["XDG_DATA_DIRS"] = "/nonexistent"
        let daemon = try ChildProcess(
            Binaries.daemon, ["--socket", sandbox.socketPath, "--no-ssip"], environment: environment, logPath: sandbox.root + "/a11yd.log")
        try await waitUntilAccepts(sandbox.socketPath)
        let say = ["--socket", sandbox.socketPath, "--wait", "--voice", PiperTestVoice.identifier, "Hello."]
        let before = try await run(Binaries.say, say, environment: environment, timeout: .seconds(20))
        #expect(before.status != 0 && before.stderr.contains("the Piper runtime is not installed (a11yd-install-voices)"), "\(before)")
        try FileManager.default.createSymbolicLink(atPath: dataHome + "/a11yd/piper", withDestinationPath: installed + "/piper")
        let installedNow = try await run(Binaries.say, say, environment: environment, timeout: .seconds(20))
        #expect(installedNow.status != 0 && installedNow.stderr.contains("installed after a11yd started: reload a11yd"), "\(installedNow)")
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")
    }
}
