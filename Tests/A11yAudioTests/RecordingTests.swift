// SPDX-License-Identifier: GPL-3.0-or-later
import A11yTestSupport
import Foundation
import Testing

/// How the sound tests read a recording: a dropout of the server's amid a tone is told apart from a
/// cut, so that a loaded machine cannot pass for a click, nor hide one.
@Suite struct RecordingTests {
    static let rate = 48_000

    /// A half-scale 440 Hz tone of `seconds`, as the monitor records it.
    func tone(seconds: Double) -> [Float] { tone(frames: Int(seconds * Double(Self.rate))) }

    func tone(frames: Int) -> [Float] {
        (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / Double(Self.rate))) }
    }

    /// A frame at which the tone is at its peak (22¼ periods in).
    static let crest = 2_427

    func recording(_ samples: [Float]) -> Recording {
        Recording(sampleRate: Self.rate, samples: samples, chunkEnds: [(samples.count, Double(samples.count) / Double(Self.rate))])
    }

    @Test func aShortSilenceInsideAToneThatGoesOnIsADropoutAndItsEdgesAreNoBend() {
        // 64 frames skipped, as PipeWire's graph does when the pulse server misses its turn.
        var samples = tone(seconds: 0.1)
        let gap = Self.crest..<Self.crest + 64
        for i in gap { samples[i] = 0 }
        let heard = recording(samples)
        #expect(heard.dropouts(in: 0..<samples.count) == [gap])
        #expect(heard.sharpestBend(from: 0, to: 0.1) < 100)
    }

    @Test func aCutWithoutRampIsNoDropoutAndBendsByItsHeight() {
        // Full level to a silence that lasts: the click the sound tests are there to catch.
        let samples = tone(frames: Self.crest) + [Float](repeating: 0, count: Self.rate / 20)
        let heard = recording(samples)
        #expect(heard.dropouts(in: 0..<samples.count).isEmpty)
        #expect(heard.sharpestBend(from: 0, to: 0.1) > 10_000)
    }

    @Test func aToneStoppedAndStartedAgainAtFullLevelWithinAFewMillisecondsBendsWhenTheGapIsLonger() {
        // Longer than a dropout: a stop and a start without ramps, however close, are judged.
        var samples = tone(seconds: 0.1)
        for i in Self.crest..<(Self.crest + Int(Recording.longestDropout * Double(Self.rate)) + 10) { samples[i] = 0 }
        let heard = recording(samples)
        #expect(heard.dropouts(in: 0..<samples.count).isEmpty)
        #expect(heard.sharpestBend(from: 0, to: 0.1) > 10_000)
    }

    @Test func aRampToSilenceThenAFadeInIsNoDropout() {
        // The quiet edges of a ramp and of a faded start are what a cut and a resume leave.
        var samples = tone(seconds: 0.05)
        let ramp = Self.rate / 500
        for i in 0..<ramp { samples[samples.count - ramp + i] *= Float(ramp - i) / Float(ramp) }
        var next = tone(seconds: 0.05)
        for i in 0..<ramp { next[i] *= Float(i) / Float(ramp) }
        let samplesWithGap = samples + [Float](repeating: 0, count: 48) + next
        #expect(recording(samplesWithGap).dropouts(in: 0..<samplesWithGap.count).isEmpty)
    }
}
