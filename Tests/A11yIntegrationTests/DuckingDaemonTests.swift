// SPDX-License-Identifier: GPL-3.0-or-later
import A11yProtocol
import A11ySystem
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Ducking in the real a11yd process, with `[audio] duck = "speaking"`, next to another
/// program's stream (`paplay` of a loud tone) on a private PulseAudio: lowered while a11yd speaks;
/// given back when a11yd is stopped mid-speech; left lowered by a SIGKILL and given back by the
/// next a11yd to start.
@Suite(.serialized) struct DuckingDaemonTests {
    /// The a11yd built next to this test bundle.
    static let a11yd = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("a11yd").path

    final class Rig {
        let pulse: PrivatePulseServer
        let recorder: MonitorRecorder
        let runtime: String
        let socket: String
        let config: String
        var stateFile: String { runtime + "/a11yd/ducked" }
        var music: ChildProcess?

        init() throws {
            pulse = try PrivatePulseServer()
            runtime = pulse.directory.path + "/runtime"
            try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            socket = runtime + "/a11yd/socket"
            // As on a desktop, the configuration's folder holds neither the runtime folder nor the
            // state file: a11yd's Landlock grants writes to its configuration folder, so a config
            // above the runtime folder made the state file writable by accident (under a
            // real user manager every write of it failed, EACCES, and a kill left streams lowered).
            let configFolder = pulse.directory.path + "/config/a11yd"
            try FileManager.default.createDirectory(atPath: configFolder, withIntermediateDirectories: true, attributes: nil)
            config = configFolder + "/a11yd.toml"
            try "[audio]\nduck = \"speaking\"\nduck_db = 12\n".write(toFile: config, atomically: true, encoding: .utf8)
            recorder = MonitorRecorder(server: pulse.serverAddress)
            try recorder.start()
        }

        deinit { music?.signal(SIGKILL) }

        /// Another program playing a loud 440 Hz tone for `seconds`.
        func playMusic(seconds: Double) throws {
            let raw = pulse.directory.path + "/tone.raw"
            let frames = Int(seconds * 22_050)
            var samples = [Int16](repeating: 0, count: frames)
            for i in 0..<frames { samples[i] = Int16(16_383 * sin(2 * Double.pi * 440 * Double(i) / 22_050)) }
            try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: raw))
            music = try ChildProcess(
                "/usr/bin/paplay", ["--raw", "--format=s16le", "--rate=22050", "--channels=1", raw],
                environment: pulse.clientEnvironment, logPath: pulse.directory.path + "/paplay.log")
        }

        func startDaemon() async throws -> ChildProcess {
            var environment = pulse.clientEnvironment
            environment["XDG_RUNTIME_DIR"] = runtime
            environment["A11YD_NO_AUTOSPAWN"] = "1"
            let daemon = try ChildProcess(
                DuckingDaemonTests.a11yd, ["--config", config, "--socket", socket, "--no-ssip"], environment: environment,
                logPath: pulse.directory.path + "/a11yd-\(UInt32.random(in: 0...UInt32.max)).log")
            let deadline = ContinuousClock.now + .seconds(15)
            while !SocketProbe.accepts(path: socket) {
                guard daemon.isRunning, ContinuousClock.now < deadline else { throw TestFailure("a11yd did not listen: \(daemon.log)") }
                try await Task.sleep(for: .milliseconds(20))
            }
            return daemon
        }

        /// Posts a long sentence, quietly (volume 0.05: about 30 dB under the music, so that the
        /// mix's level is the music's), and returns once its first word was told (speech is audible).
        func speak(_ client: TestClient) async throws {
            let id = try await client.post(Post(text: longSentence, kind: .announcement, lang: "fr", volume: 0.05))
            _ = try await client.waitFor("a word heard") { $0.utterance == id && $0.event == "word" }
        }

        /// The mix's level over the `seconds` before now.
        func level(over seconds: Double = 0.3) -> Double {
            let now = recorder.elapsed()
            return recorder.snapshot().rms(from: now - seconds, to: now - 0.02)
        }
    }

    static func decibels(_ level: Double, _ reference: Double) -> Double { 20 * log10(level / reference) }

    @Test func loweredWhileSpeakingAndGivenBackWhenStoppedMidSpeech() async throws {
        let rig = try Rig()
        let daemon = try await rig.startDaemon()
        try rig.playMusic(seconds: 20)
        try await Task.sleep(for: .milliseconds(800))
        let alone = rig.level()
        #expect(alone > 0.3, "the music plays: \(alone)")
        let client = try await TestClient.connect(path: rig.socket)
        try await rig.speak(client)
        try await Task.sleep(for: .milliseconds(500))
        let ducked = Self.decibels(rig.level(), alone)
        #expect(ducked < -9, "lowered while speaking: \(ducked) dB")
        #expect(FileManager.default.fileExists(atPath: rig.stateFile), "remembered while lowered")
        daemon.signal(SIGTERM)
        // Its exit status is not this test's business (at this commit a SIGTERM mid-speech ends
        // a11yd with status 1, "HeapTrimService finished unexpectedly", ducking on or off).
        _ = try await daemon.waitForExit()
        try await Task.sleep(for: .milliseconds(500))
        let after = Self.decibels(rig.level(), alone)
        #expect(abs(after) < 1, "given back when a11yd stopped: \(after) dB")
        #expect(!FileManager.default.fileExists(atPath: rig.stateFile))
        await client.close()
    }

    @Test func leftLoweredByAKillAndGivenBackByTheNextStart() async throws {
        let rig = try Rig()
        let daemon = try await rig.startDaemon()
        try rig.playMusic(seconds: 20)
        try await Task.sleep(for: .milliseconds(800))
        let alone = rig.level()
        let client = try await TestClient.connect(path: rig.socket)
        try await rig.speak(client)
        try await Task.sleep(for: .milliseconds(300))
        daemon.signal(SIGKILL)
        _ = try await daemon.waitForExit()
        await client.close()
        try await Task.sleep(for: .milliseconds(600))
        let left = Self.decibels(rig.level(), alone)
        #expect(left < -9, "a SIGKILL cannot restore: still \(left) dB")
        #expect(FileManager.default.fileExists(atPath: rig.stateFile))
        let next = try await rig.startDaemon()
        try await Task.sleep(for: .milliseconds(800))
        let restored = Self.decibels(rig.level(), alone)
        #expect(abs(restored) < 1, "given back by the next a11yd: \(restored) dB")
        #expect(!FileManager.default.fileExists(atPath: rig.stateFile))
        next.signal(SIGTERM)
        _ = try await next.waitForExit()
    }
}
