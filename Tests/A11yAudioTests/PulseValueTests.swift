// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yAudio
import Testing

/// Other numbers libpulse hands back, at their extremes: never a trap.
@Suite struct PulseValueTests {
    @Test func writableSizeBecomesWholeFramesOrNothing() {
        #expect(PlaybackStream.wholeFrames(writableBytes: 4_410, frameSize: 2) == 2_205)
        #expect(PlaybackStream.wholeFrames(writableBytes: 3, frameSize: 4) == 0)
        #expect(PlaybackStream.wholeFrames(writableBytes: Int.max, frameSize: 2) == Int.max / 2)
        // (size_t)-1, the error value, and anything above Int.max.
        #expect(PlaybackStream.wholeFrames(writableBytes: -1, frameSize: 2) == 0)
        #expect(PlaybackStream.wholeFrames(writableBytes: Int(bitPattern: UInt(Int.max) + 1), frameSize: 2) == 0)
        #expect(PlaybackStream.wholeFrames(writableBytes: 100, frameSize: 0) == 0)
    }

    @Test func errorCodesAlwaysDescribeThemselves() {
        #expect(PulseError(code: -3) == PulseError(code: 3))
        #expect(!PulseError(code: 3).description.isEmpty)
        // pa_strerror returns NULL for a code it does not know.
        #expect(PulseError(code: 9_999).description == "unknown libpulse error 9999")
        #expect(PulseError(code: .min).code == .max)
        #expect(PulseError(code: .min).description.contains("unknown"))
    }

    @Test func trackPositionsSurviveExtremeReadings() {
        var track = Track(format: .init(sampleRate: 22_050))
        track.append([Int16](repeating: 1, count: 1_000))
        track.writtenFrames = 800
        track.starts(atStreamFrame: .min)
        // A stream position further from the segment than an Int64 counts: the position stays.
        #expect(track.played(atStreamFrame: .max) == 0)
        #expect(track.played(atStreamFrame: nil) == 0)
        // A read index before the segment is no position: writing restarts from what is known played.
        track.starts(atStreamFrame: 100)
        track.rewound(toStreamFrame: 99)
        #expect(track.writtenFrames == 0)
        track.writtenFrames = 800
        track.starts(atStreamFrame: 0)
        #expect(track.played(atStreamFrame: 22_050) == 800, "clamped to what was written")
        track.rewound(toStreamFrame: nil)
        #expect(!track.knowsPosition)
        #expect(track.played(atStreamFrame: 0) == 800, "never backwards")
    }
}
