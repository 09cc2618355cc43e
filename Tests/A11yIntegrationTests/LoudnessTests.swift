// SPDX-License-Identifier: GPL-3.0-or-later
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// A user who switches from speech-dispatcher must not hear a quieter voice: the same
/// sentence through `spd-say -w` to a private speech-dispatcher 0.11 (espeak-ng module) and to
/// a11yd, one after the other on the same null sink, at the same SSIP volume, is as loud within
/// 1.5 dB RMS, and a11yd never reaches full scale (speech-dispatcher clips at its default volume).
@Suite(.serialized) struct LoudnessTests {
    static let sentence = "Le train de la SNCF arrive en gare de Lyon à dix-huit heures trente."

    /// The loudness of speech (Recording.gatedRMS: what its pauses last does not count), and the peak,
    /// of one recording.
    struct Level: CustomStringConvertible {
        var rms: Double
        var peak: Float
        init(_ recording: Recording) throws {
            rms = recording.gatedRMS()
            try #require(rms > 0, "something was heard")
            peak = recording.samples.map { abs($0) }.max() ?? 0
        }
        func decibels(relativeTo other: Level) -> Double { 20 * log10(rms / other.rms) }
        var description: String { "RMS \(Int(rms * 32768)), peak \(Int(peak * 32768))" }
    }

    func spdSay(_ arguments: [String], socket: String, runtime: String, _ daemon: DaemonHarness) async throws -> Level {
        let environment = try speechDispatcherClientEnvironment(
            socket: socket, home: daemon.pulse.directory.path + "/client-home", runtime: runtime,
            base: daemon.pulse.clientEnvironment)
        let recorder = try daemon.recorder()
        let result = try await run(
            "/usr/bin/spd-say", ["-w", "-l", "fr"] + arguments + [Self.sentence], environment: environment,
            timeout: .seconds(30))
        try await Task.sleep(for: .milliseconds(200))
        let recording = recorder.stop()
        #expect(result.status == 0, "\(result.stderr)")
        return try Level(recording)
    }

    @Test func asLoudAsSpeechDispatcherAtEverySSIPVolumeWithoutClipping() async throws {
        let daemon = try await DaemonHarness(ssip: true)
        let speechd = try await PrivateSpeechDispatcher(sound: daemon.pulse)
        let a11ydSocket = try #require(daemon.ssipSocketPath)
        for volume in [nil, "100", "0", "-50"] {
            let arguments = volume.map { ["-i", $0] } ?? []
            let theirs = try await spdSay(arguments, socket: speechd.socketPath, runtime: speechd.runtime, daemon)
            let ours = try await spdSay(arguments, socket: a11ydSocket, runtime: daemon.pulse.directory.path + "/runtime", daemon)
            let difference = ours.decibels(relativeTo: theirs)
            #expect(abs(difference) <= 1.5, "volume \(volume ?? "default"): a11yd \(ours), speech-dispatcher \(theirs): \(difference) dB")
            #expect(ours.peak < 0.95, "volume \(volume ?? "default"): a11yd below full scale (\(ours))")
        }
        speechd.stop()
        await daemon.shutDown()
    }

    @Test func jsonFullVolumeIsAsLoudAsSpeechDispatchersDefault() async throws {
        let daemon = try await DaemonHarness()
        let speechd = try await PrivateSpeechDispatcher(sound: daemon.pulse)
        let theirs = try await spdSay([], socket: speechd.socketPath, runtime: speechd.runtime, daemon)
        let client = try await daemon.client()
        let recorder = try daemon.recorder()
        let utterance = try await client.post(Post(text: Self.sentence, kind: .announcement, lang: "fr", volume: 1.0))
        #expect(try await client.finished(utterance).reason == .spoken)
        try await Task.sleep(for: .milliseconds(200))
        let ours = try Level(recorder.stop())
        let difference = ours.decibels(relativeTo: theirs)
        #expect(abs(difference) <= 1.5, "JSON volume 1.0: a11yd \(ours), speech-dispatcher \(theirs): \(difference) dB")
        #expect(ours.peak < 0.95, "\(ours)")
        speechd.stop()
        await daemon.shutDown()
    }
}
