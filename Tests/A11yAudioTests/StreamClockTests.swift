// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yAudio
import A11yTestSupport
import Testing

/// Values from libpulse are never trusted to fit: every extreme gives a position or "no reading",
/// never a trap.
@Suite struct StreamClockTests {
    // As the output composes them: the stream clock in frames, then the track frame there.
    let segment = StreamSegment(trackFrame: 1_000, streamFrame: 5_000)

    @Test func ordinaryTimesMapToTrackFrames() {
        // 5_000 frames at 22_050 Hz is 226_757.4 µs; 1 s later is 22_050 frames further.
        let start = StreamSegment(trackFrame: 0, streamFrame: 0)
        #expect(same(start.trackFrame(atMicroseconds: 1_000_000, sampleRate: 22_050), 22_050))
        #expect(same(start.trackFrame(atMicroseconds: 999_999, sampleRate: 22_050), 22_049))
        #expect(same(segment.trackFrame(atMicroseconds: 1_000_000, sampleRate: 22_050), 1_000 + 22_050 - 5_000))
        #expect(same(segment.trackFrame(atStreamFrame: 5_000), 1_000))
        #expect(same(segment.trackFrame(atStreamFrame: 5_007), 1_007))
    }

    @Test func timesThatCannotBeTrueAreNoReading() {
        // Above Int64.max: PA_USEC_INVALID or a negative difference wrapped around.
        #expect(segment.trackFrame(atMicroseconds: .max, sampleRate: 22_050) == nil)
        #expect(segment.trackFrame(atMicroseconds: UInt64(Int64.max) + 1, sampleRate: 22_050) == nil)
        // Even divided by 10⁶, more frames than an Int64 holds.
        #expect(segment.trackFrame(atMicroseconds: 1 << 62, sampleRate: .max) == nil)
        // Before the segment started: not a position in it.
        #expect(segment.trackFrame(atMicroseconds: 0, sampleRate: 22_050) == nil)
        #expect(segment.trackFrame(atStreamFrame: 4_999) == nil)
        #expect(segment.trackFrame(atStreamFrame: .min) == nil)
    }

    @Test func extremeSegmentsAndRatesNeverTrap() {
        let late = StreamSegment(trackFrame: .max - 10, streamFrame: .min)
        #expect(late.trackFrame(atStreamFrame: .max) == nil)
        #expect(same(late.trackFrame(atStreamFrame: .min + 10), .max))
        #expect(late.trackFrame(atStreamFrame: .min + 11) == nil)
        let early = StreamSegment(trackFrame: .min, streamFrame: 0)
        #expect(same(early.trackFrame(atStreamFrame: 0), .min))
        for rate in [0, -1, Int.min] {
            #expect(segment.trackFrame(atMicroseconds: 1_000_000, sampleRate: rate) == nil)
        }
        // `Int64(µs) * rate` would overflow here, but the frame count itself fits: it is exact
        // (and far beyond anything written, which the caller clamps to).
        #expect(same(segment.trackFrame(atMicroseconds: UInt64(Int64.max), sampleRate: 48_000), 442_721_857_769_025_238))
        // A huge rate still counts exactly while the result fits.
        let start = StreamSegment(trackFrame: 0, streamFrame: 0)
        #expect(same(start.trackFrame(atMicroseconds: 2_000_000, sampleRate: 1 << 40), 2 << 40))
        #expect(same(start.trackFrame(atMicroseconds: 1, sampleRate: .max), Int.max / 1_000_000))
    }

    @Test func byteIndicesBecomeFramesOrNothing() {
        #expect(same(StreamClock.frames(bytes: 4_410, frameSize: 2), 2_205))
        #expect(same(StreamClock.frames(bytes: 4_411, frameSize: 2), 2_205))
        #expect(same(StreamClock.frames(bytes: .max, frameSize: 4), Int64.max / 4))
        #expect(StreamClock.frames(bytes: -2, frameSize: 2) == nil)
        #expect(StreamClock.frames(bytes: .min, frameSize: 2) == nil)
        #expect(StreamClock.frames(bytes: 100, frameSize: 0) == nil)
        #expect(StreamClock.frames(bytes: 100, frameSize: -2) == nil)
    }
}

extension StreamSegment {
    fileprivate func trackFrame(atMicroseconds microseconds: UInt64, sampleRate: Int) -> Int? {
        StreamClock.frames(microseconds: microseconds, sampleRate: sampleRate).flatMap(trackFrame(atStreamFrame:))
    }
}
