// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// Key echo in the natural voice, the first time: once the voice has spoken at a rate, every letter
/// is said ahead, and a letter posted then sounds as soon as eSpeak's would, heard whole at the
/// null sink's monitor, its word told, never said by the engine while the user types.
@Suite(.serialized) struct PiperEchoTests {
    /// Well above what a letter said ahead takes to be heard (a few ms) and well below what the
    /// natural voice takes to say one (37-45 ms median, 54-61 worst, measured at the sink).
    static let medianBound = 0.015

    /// Waits until the lower-case letters, which are rendered first (as typed, then as read), are: the
    /// rest is not waited for, each form costs the natural voice tens of milliseconds of a core.
    static func untilTheLettersAreRendered(_ daemon: DaemonHarness, andCapitals: Bool = false) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        let forms = EchoMemory.lowerCaseForms + (andCapitals ? 52 : 0)
        while daemon.engines.echoFormsRendered < forms {
            guard ContinuousClock.now < deadline else { throw TestFailure("the letters were not rendered within 60 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let bytes = daemon.engines.echoBytes
        print("PiperEchoTests: the lower-case letters said ahead at one rate take \(bytes) bytes")
        #expect(bytes > 0 && bytes <= EchoMemory.Limits.standard.bytes)
    }

    @Test func everyLetterSoundsAtOnceTheFirstTimeInTheNaturalVoice() async throws {
        let daemon = try await DaemonHarness(piper: true, echoesAhead: true)
        let client = try await daemon.client()
        let rate = 0.55  // never used by another test: no letter was said at it before
        let warm = try await client.post(.say("Ready to type.", rate: rate, voice: PiperTestVoice.identifier))
        #expect(try await client.finished(warm).reason == .spoken)
        try await Self.untilTheLettersAreRendered(daemon)

        let recorder = try daemon.recorder()
        var delays: [Double] = []
        for letter in "abcdefghijklmnopqrstuvwxyz" {
            let postedAt = recorder.elapsed()
            let id = try await client.post(.say(String(letter), rate: rate, voice: PiperTestVoice.identifier))
            let finished = try await client.finished(id)
            #expect(finished.reason == .spoken, "\(letter): \(finished)")
            let words = await client.events(of: id).filter { $0.event == "word" }.compactMap(\.start)
            #expect(words == [0], "\(letter): its word told once: \(words)")
            try await Task.sleep(for: .milliseconds(60))
            guard let heard = recorder.snapshot().firstAudibleTime(after: postedAt) else {
                Issue.record("\(letter): not heard")
                continue
            }
            delays.append(heard - postedAt)
        }
        let recording = recorder.stop()
        let sorted = delays.sorted()
        let median = sorted.isEmpty ? .infinity : sorted[sorted.count / 2]
        print("PiperEchoTests: a-z first sound after the post: median \(Int(median * 1000)) ms, worst \(Int((sorted.last ?? 0) * 1000)) ms; each \(delays.map { Int($0 * 1000) })")
        #expect(delays.count == 26)
        #expect(median < Self.medianBound, "median \(Int(median * 1000)) ms; each: \(delays.map { Int($0 * 1000) })")
        #expect(recording.voicedDuration > 26 * 0.1, "every letter heard: \(recording.voicedDuration) s voiced")
        await daemon.shutDown()
    }

    /// Orca's own forms over SSIP: a typed letter (`SPEAK` of SSML, a mark before the letter and a
    /// space after it), a character read (`CHAR`), and a key (`KEY`, which Orca does not send but
    /// other clients do), each the first time, after the voice spoke once.
    @Test func orcasEchoesOverSSIPSoundAtOnceTheFirstTime() async throws {
        let daemon = try await DaemonHarness(ssip: true, piper: true, echoesAhead: true)
        let path = try #require(daemon.ssipSocketPath)
        let ssip = try await offThePool { try RawSSIPClient(path: path) }
        defer { ssip.close() }
        try await offThePool {
            for line in [
                "SET self CLIENT_NAME orca:orca:main", "SET self OUTPUT_MODULE piper", "SET self SYNTHESIS_VOICE en_US-joe-medium",
                "SET self SSML_MODE on", "SET self NOTIFICATION ALL on", "SET self RATE 10",
            ] {
                _ = try ssip.command(line)
            }
            _ = try ssip.command("SPEAK")
            try ssip.send("<speak><mark name=\"0:5\"/>Ready <mark name=\"6:10\"/>now.</speak>\r\n.\r\n")
            _ = try ssip.readReply()
            _ = try ssip.waitForEvent("702 END")
        }
        try await Self.untilTheLettersAreRendered(daemon)

        let recorder = try daemon.recorder()
        var delays: [String: Double] = [:]
        for letter in "hjkmqsvx" {
            for form in ["typed", "read", "key"] {
                let postedAt = recorder.elapsed()
                try await offThePool {
                    if form == "typed" {
                        _ = try ssip.command("SPEAK")
                        try ssip.send("<speak><mark name=\"0:1\"/>\(letter) </speak>\r\n.\r\n")
                        _ = try ssip.readReply()
                    } else if form == "read" {
                        _ = try ssip.command("CHAR \(letter)")
                    } else {
                        _ = try ssip.command("KEY \(letter)")
                    }
                    _ = try ssip.waitForEvent("702 END")
                }
                try await Task.sleep(for: .milliseconds(60))
                if let heard = recorder.snapshot().firstAudibleTime(after: postedAt) { delays["\(form) \(letter)"] = heard - postedAt }
            }
        }
        recorder.stop()
        let sorted = delays.values.sorted()
        let median = sorted.isEmpty ? .infinity : sorted[sorted.count / 2]
        print("PiperEchoTests over SSIP: first sound median \(Int(median * 1000)) ms, each \(delays.mapValues { Int($0 * 1000) })")
        #expect(delays.count == 24, "every echo heard: \(delays.keys.sorted())")
        #expect(median < Self.medianBound, "median \(Int(median * 1000)) ms")
        await daemon.shutDown()
    }

    /// Orca signals a capital by a higher pitch (its uppercase voice): once a capital was asked at
    /// that pitch, the capitals are said ahead at it too, at every rate after, the first time.
    @Test func capitalsAtOrcasPitchSoundAtOnceAtANewRate() async throws {
        let daemon = try await DaemonHarness(ssip: true, piper: true, echoesAhead: true)
        let path = try #require(daemon.ssipSocketPath)
        let ssip = try await offThePool { try RawSSIPClient(path: path) }
        defer { ssip.close() }
        @Sendable func typed(_ key: String, pitch: Int) throws {
            _ = try ssip.command("SET self PITCH \(pitch)")
            _ = try ssip.command("SPEAK")
            try ssip.send("<speak><mark name=\"0:1\"/>\(key) </speak>\r\n.\r\n")
            _ = try ssip.readReply()
            _ = try ssip.waitForEvent("702 END")
        }
        try await offThePool {
            for line in [
                "SET self CLIENT_NAME orca:orca:main", "SET self OUTPUT_MODULE piper", "SET self SYNTHESIS_VOICE en_US-joe-medium",
                "SET self SSML_MODE on", "SET self NOTIFICATION ALL on", "SET self RATE 15",
            ] {
                _ = try ssip.command(line)
            }
            try typed("a", pitch: 0)
            try typed("B", pitch: 40)  // the first capital: said by the engine, and learnt
            // Another rate, never used before: its letters and its capitals are rendered ahead.
            _ = try ssip.command("SET self RATE 25")
            try typed("c", pitch: 0)
        }
        try await Self.untilTheLettersAreRendered(daemon, andCapitals: true)

        let recorder = try daemon.recorder()
        var delays: [String: Double] = [:]
        for letter in "HJKMQSVX" {
            for (key, pitch) in [(String(letter), 40), (letter.lowercased(), 0)] {
                let postedAt = recorder.elapsed()
                try await offThePool { try typed(key, pitch: pitch) }
                try await Task.sleep(for: .milliseconds(60))
                if let heard = recorder.snapshot().firstAudibleTime(after: postedAt) { delays[key] = heard - postedAt }
            }
        }
        recorder.stop()
        let capitals = delays.filter { $0.key.first?.isUppercase == true }.values.sorted()
        let median = capitals.isEmpty ? .infinity : capitals[capitals.count / 2]
        print("PiperEchoTests, capitals at Orca's pitch: first sound median \(Int(median * 1000)) ms, each \(delays.mapValues { Int($0 * 1000) })")
        #expect(delays.count == 16, "every echo heard: \(delays.keys.sorted())")
        #expect(median < Self.medianBound, "median \(Int(median * 1000)) ms")
        await daemon.shutDown()
    }
}
