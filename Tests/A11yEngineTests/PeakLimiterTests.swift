// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yEngine
import A11yCore
import Foundation
import Testing

/// The engine's loudness above eSpeak's clean volume: gain through a limiter, never a clip.
@Suite struct PeakLimiterTests {
    @Test func quietSamplesAtUnityGainAreUntouched() {
        var limiter = PeakLimiter(sampleRate: 22_050)
        let samples: [Int16] = [0, 1, -1, 21_000, -21_000, 29_204, -29_204]
        var processed = samples
        limiter.process(&processed)
        #expect(processed == samples)
    }

    @Test func peaksNeverPassTheCeilingAtAnyGain() {
        for gain in [1.0, 2.0, 10.0, 1e300] {
            var limiter = PeakLimiter(sampleRate: 22_050)
            limiter.gain = gain
            var samples: [Int16] = (0..<4410).map { Int16(clamping: Int(32_767 * sin(Double($0) * 0.3))) } + [.min, .max, 0]
            limiter.process(&samples)
            #expect(samples.allSatisfy { Double($0.magnitude) <= PeakLimiter.defaultCeiling + 0.5 }, "gain \(gain)")
        }
    }

    @Test func theGainRecoversAfterAPeak() {
        var limiter = PeakLimiter(sampleRate: 22_050)
        limiter.gain = 2
        var peak: [Int16] = [30_000]
        limiter.process(&peak)
        #expect(Double(peak[0]) == PeakLimiter.defaultCeiling.rounded())
        // Half a second of quiet later (ten release times), a small sample gets the whole gain again.
        var quiet = [Int16](repeating: 1000, count: 11_025)
        limiter.process(&quiet)
        #expect(quiet.last == 2000)
    }
}

extension EngineTests {
    @Suite("loudness") struct LoudnessTests {
        @Test func volume200IsTwiceVolume100WithoutClipping() async throws {
            let engine = try makeEngine()
            let sentence = "Le train de la SNCF arrive en gare de Lyon à dix-huit heures trente."
            func at(_ volume: Int) async throws -> Rendered {
                try await render(engine, Utterance(segments: [segment(sentence, voice: "fr")], rate: 175, pitch: 50, volume: volume))
            }
            let half = try await at(100), full = try await at(200), quarter = try await at(50)
            let fullDB = 20 * log10(full.rms / half.rms), quarterDB = 20 * log10(quarter.rms / half.rms)
            #expect((5.0...6.1).contains(fullDB), "volume 200 is \(fullDB) dB over 100")
            #expect((-6.6 ... -5.5).contains(quarterDB), "volume 50 is \(quarterDB) dB under 100")
            #expect(full.samples.map(\.magnitude).max()! <= 29_205, "no clipping at 200")
        }
    }
}
