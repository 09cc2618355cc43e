// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yAudio
import A11yCore
import A11yTestSupport
import Testing

/// The pure parts of a cut (issue 29): the ramp's gain, where a cut rewrites the stream, what its
/// tail lets follow, and a track cut and resumed; every extreme value gives an answer, never a trap.
@Suite struct RampTests {
    static let format = AudioFormat(sampleRate: 22_050, channels: 1)
    /// 4 ms at 22,050 Hz.
    static let length = 88

    @Test func theRampGoesFromFullToSilenceAndItsLastMillisecondIsBelowMinus33dB() {
        let length = Self.length
        #expect(Ramp.down(-1, of: length) == 1 && Ramp.down(length, of: length) == 0)
        #expect(Ramp.down(0, of: length) > 0.999 && Ramp.down(length - 1, of: length) < 0.0001)
        let gains = (0..<length).map { Ramp.down($0, of: length) }
        #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 > $1 }, "always going down")
        // The last millisecond (22 frames): at most 2.1 % of full level, so that speech peaking at
        // 20,754 (eSpeak's loudest here) leaves at most 445 of 32,767 there.
        let lastMillisecond = gains.suffix(22).max() ?? 1
        #expect(lastMillisecond < 0.022)
        #expect(lastMillisecond * 20_754 < 460)
        // Flat at both ends: the first and last steps are the smallest.
        let steps = zip(gains, gains.dropFirst()).map { $0 - $1 }
        #expect(steps.first! < steps[length / 4] && steps.last! < steps[length / 2])
        // Up is down backwards.
        #expect((0..<length).allSatisfy { Ramp.up($0, of: length) == Ramp.down(length - 1 - $0, of: length) })
        #expect(Ramp.up(-1, of: length) == 0 && Ramp.up(length, of: length) == 1)
    }

    @Test func scalingNeverGrowsASampleNorTraps() {
        #expect(Ramp.scale(.min, by: 1) == .min && Ramp.scale(.max, by: 1) == .max)
        #expect(Ramp.scale(.min, by: 0) == 0 && Ramp.scale(1_000, by: 0.5) == 500)
        #expect(same(Ramp.scale(.max, by: 2), .max), "a gain above 1 counts as 1")
        #expect(Ramp.scale(.max, by: -1) == 0 && Ramp.scale(.max, by: .nan) == 0 && Ramp.scale(.max, by: .infinity) == .max)
        // Ramps of no length or less: silence from the start, full before it.
        #expect(Ramp.down(0, of: 0) == 0 && Ramp.down(-5, of: 0) == 1 && Ramp.up(0, of: 0) == 1)
        #expect(Ramp.down(.max, of: .max) == 0 && Ramp.down(.min, of: .max) == 1)
    }

    @Test func aRewriteStartsPastWhatTheServerMayHaveReadOrJustPastWhereAServerThatRewindsReads() {
        // PulseAudio rewinds: 2 ms (44 frames at 22,050 Hz) past where it reads now.
        #expect(same(CutPoint.unread(readingNow: 1_000, furthestRead: 1_110, rewinds: true, sampleRate: 22_050), 1_044))
        // PipeWire's pulse server cannot: 0.5 ms (11 frames) past the furthest it may have read.
        #expect(same(CutPoint.unread(readingNow: 1_000, furthestRead: 1_110, rewinds: false, sampleRate: 22_050), 1_121))
        // A new track's own start behind a cut: 0.5 ms past where PulseAudio reads; PipeWire's rule unchanged.
        #expect(same(CutPoint.unread(readingNow: 1_000, furthestRead: 1_110, rewinds: true, sampleRate: 22_050, startingTrack: true), 1_011))
        #expect(same(CutPoint.unread(readingNow: 1_000, furthestRead: 1_110, rewinds: false, sampleRate: 22_050, startingTrack: true), 1_121))
        #expect(same(CutPoint.unread(readingNow: .max, furthestRead: .max, rewinds: true, sampleRate: 22_050), .max))
        #expect(same(CutPoint.unread(readingNow: .min, furthestRead: .min, rewinds: false, sampleRate: 0), .min))
    }

    @Test func aCutStartsAtWhatIsUnreadWithinWhatWasWritten() {
        #expect(same(CutPoint.frame(unread: 1_011, lastRead: 900, earliest: 0, latest: 5_000), 1_011))
        #expect(same(CutPoint.frame(unread: 1_011, lastRead: 1_200, earliest: 0, latest: 5_000), 1_200),
                "never before what the server said it read")
        #expect(same(CutPoint.frame(unread: 1_011, lastRead: 900, earliest: 3_000, latest: 5_000), 3_000),
                "never before the track's audio")
        #expect(same(CutPoint.frame(unread: 9_011, lastRead: 900, earliest: 0, latest: 5_000), 5_000),
                "never past what was written")
        #expect(same(CutPoint.frame(unread: .max, lastRead: .min, earliest: .min, latest: .max), .max))
        #expect(same(CutPoint.frame(unread: .min, lastRead: .min, earliest: .min, latest: .min), .min))
    }

    @Test func audioAfterACutGoesRightAfterItsRampWhileTheServerIsNotThereYet() {
        let tail = StreamTail(rampEnd: 1_088, end: 1_749)
        #expect(same(tail.placement(unread: 1_011, room: 22), 1_088), "right after the ramp")
        #expect(same(tail.placement(unread: 1_211, room: 22), 1_211), "past what the server may have read")
        #expect(same(tail.placement(unread: 1_727, room: 22), 1_727))
        #expect(tail.placement(unread: 1_728, room: 22) == nil, "too little silence left: start afresh")
        #expect(tail.placement(unread: .max, room: .max) == nil)
        #expect(StreamTail(rampEnd: .min, end: .min).placement(unread: .min, room: 1) == nil)
        #expect(same(StreamTail(rampEnd: .max, end: .max).placement(unread: .min, room: 0), .max))
    }

    @Test func aNewTrackWithAudioToCoverTheRestOfTheRampStartsInsideIt() {
        // The ramp: 88 frames from 1,000 (the values 88 down to 1), then silence to 1,749.
        let tail = StreamTail(rampEnd: 1_088, end: 1_749, ramp: (1...88).reversed().map { Int16($0) })
        #expect(same(tail.rampStart, 1_000))
        #expect(same(tail.placement(unread: 1_011, room: 22, mixing: (1_011, 77)), 1_011), "inside the ramp: mixed with its last 77 frames")
        #expect(same(tail.placement(unread: 990, room: 22, mixing: (1_030, 58)), 1_030), "inside it, at the ramp's own lead")
        #expect(same(tail.placement(unread: 1_011, room: 22, mixing: (1_011, 76)), 1_088), "too little audio to cover them: after it")
        #expect(same(tail.placement(unread: 1_011, room: 22), 1_088), "a resume is never mixed")
        #expect(same(tail.placement(unread: 900, room: 22, mixing: (900, 1_000)), 1_000), "never before the ramp starts")
        #expect(same(tail.placement(unread: 1_200, room: 22, mixing: (1_200, 1_000)), 1_200), "past the ramp: as before")
        #expect(same(tail.placement(unread: 1_011, room: 22, mixing: (1_100, 1_000)), 1_088), "the lead reaches past the ramp: after it")
        let lastOfTheRamp: [Int16] = (1...77).reversed().map { Int16($0) }
        #expect(same(tail.rampLeft(from: 1_011), lastOfTheRamp))
        #expect(tail.rampLeft(from: 900).count == 88 && tail.rampLeft(from: 1_088).isEmpty && tail.rampLeft(from: .max).isEmpty)
        #expect(same(tail.rampLeft(from: .min).count, 88))
        let stereo = StreamTail(rampEnd: 1_088, end: 1_749, ramp: [Int16](repeating: 5, count: 176), channels: 2)
        #expect(stereo.rampStart == 1_000 && stereo.rampLeft(from: 1_087) == [5, 5])
        #expect(same(StreamTail(rampEnd: .min, end: .max, ramp: [1, 2]).placement(unread: .min, room: 0, mixing: (.min, .max)), .min),
                "a ramp whose start no integer holds is not mixed into")
    }

    @Test func aRampIsHeardOnceTheServerSurelyReadPastItAndWhatItsSinkHeld() {
        let tail = StreamTail(rampEnd: 1_088, end: 1_749)
        #expect(!tail.isHeard(surelyRead: 1_088, sinkLatency: 0, margin: 44))
        #expect(tail.isHeard(surelyRead: 1_132, sinkLatency: 0, margin: 44))
        #expect(!tail.isHeard(surelyRead: 1_132, sinkLatency: 1, margin: 44), "its sink still held the end")
        #expect(tail.isHeard(surelyRead: 1_200, sinkLatency: 68, margin: 44))
        #expect(!tail.isHeard(surelyRead: .min, sinkLatency: .max, margin: 0))
        #expect(!StreamTail(rampEnd: .max, end: .max).isHeard(surelyRead: .max, sinkLatency: 0, margin: 1))
    }

    @Test func theServerMayHaveReadOneBlockMoreThanTheTimeSays() {
        // 5 ms blocks (110 frames at 22,050 Hz): one more than the time alone says.
        #expect(same(StreamClock.furthestRead(1_000, carriedFor: 0, sampleRate: 22_050, block: 110), 1_110))
        #expect(same(StreamClock.furthestRead(1_000, carriedFor: 4_000, sampleRate: 22_050, block: 110), 1_110))
        #expect(same(StreamClock.furthestRead(1_000, carriedFor: 5_000, sampleRate: 22_050, block: 110), 1_220))
        #expect(same(StreamClock.furthestRead(1_000, carriedFor: 12_000, sampleRate: 22_050, block: 110), 1_330))
        // No age, an impossible one, or one too old to say anything: one block.
        for age: Int64? in [nil, -1, .min, StreamClock.longestCarry + 1, .max] {
            #expect(same(StreamClock.furthestRead(1_000, carriedFor: age, sampleRate: 22_050, block: 110), 1_110))
        }
        // Carried forward at the stream's rate, while playing only.
        #expect(same(StreamClock.frame(1_000, carriedFor: 1_000, sampleRate: 22_050, playing: true), 1_022))
        #expect(same(StreamClock.frame(1_000, carriedFor: 1_000, sampleRate: 22_050, playing: false), 1_000))
        #expect(same(StreamClock.frame(.max, carriedFor: 1_000, sampleRate: 22_050, playing: true), .max))
        #expect(same(StreamClock.frame(1_000, carriedFor: .max, sampleRate: 22_050, playing: true), 1_000))
        // No block known yet: one frame at a time.
        #expect(same(StreamClock.furthestRead(1_000, carriedFor: 1_000, sampleRate: 22_050, block: 0), 1_023))
        #expect(same(StreamClock.furthestRead(.max - 5, carriedFor: 1_000_000, sampleRate: .max, block: .max), .max))
        #expect(same(StreamClock.furthestRead(.min, carriedFor: 1_000, sampleRate: 0, block: -3), .min + 1))
    }

    @Test func agesOfTimingReadingsAreNeverNegativeNorTrap() {
        #expect(same(StreamClock.microseconds(from: (10, 999_999), to: (11, 2)), 3))
        #expect(StreamClock.microseconds(from: (11, 2), to: (10, 999_999)) == nil, "from the future: no age")
        #expect(StreamClock.microseconds(from: (0, 0), to: (.max, .max)) == nil)
        #expect(StreamClock.microseconds(from: (.min, 0), to: (.max, 0)) == nil)
        #expect(same(StreamClock.microseconds(from: (5, -1), to: (5, 0)), 1))
    }

    /// A track of `frames` frames of the value 10_000, written up to `written`, starting at stream frame 500.
    func track(frames: Int = 1_000, written: Int = 800, channels: Int = 1) -> Track {
        var track = Track(format: AudioFormat(sampleRate: 22_050, channels: channels))
        track.append([Int16](repeating: 10_000, count: frames * channels))
        track.writtenFrames = written
        track.starts(atStreamFrame: 500)
        return track
    }

    @Test func aCutTrackGivesItsRampThenNothingUntilItResumesRampingUp() {
        var t = track()
        #expect(same(t.rampFrames, Self.length))
        #expect(same(t.streamFrame(ofTrackFrame: 300), 800))
        let ramp = t.cut(at: 300)
        #expect(same(ramp.count, Self.length))
        #expect(ramp.first! > 9_990 && ramp.last! < 2 && zip(ramp, ramp.dropFirst()).allSatisfy { $0 >= $1 })
        #expect(t.writtenFrames == 300 && t.cutAt == 300)
        // Played, as far as the track knows, up to the cut at most: the rest was rewritten.
        #expect(same(t.played(atStreamFrame: 1_200), 300))
        t.resume(atStreamFrame: 2_000)
        #expect(t.cutAt == nil && t.rampUpFrom == 300 && t.streamFrame(ofTrackFrame: 300) == 2_000)
        let up = t.samplesForWriting(300..<500) ?? []
        #expect(up.count == 200 && up.first! < 2 && up[Self.length - 1] > 9_990 && up[Self.length...].allSatisfy { $0 == 10_000 })
        #expect(t.samplesForWriting(300 + Self.length..<600) == nil, "past the ramp: the samples as appended")
        #expect(t.samplesForWriting(0..<300) == nil)
    }

    /// A cut just before the end of what was appended (the engine has not said more yet, as when the
    /// natural voice sends its audio just in time): the ramp still goes down over its whole length,
    /// from the last sample appended, never dropping from speech level to silence in one frame.
    @Test func aCutNearTheEndOfWhatWasAppendedStillRampsWholly() {
        for left in [0, 1, 5, Self.length / 2] {
            var t = track()
            let ramp = t.cut(at: 1_000 - 1 - left)
            #expect(same(ramp.count, Self.length))
            let steps = zip(ramp, ramp.dropFirst()).map { abs(Int($0) - Int($1)) }
            #expect(ramp.first! > 9_990 && ramp.last! < 2, "\(left) frames left: \(ramp.first!) … \(ramp.last!)")
            #expect(steps.max()! < 1_000, "\(left) frames left: no step from speech to silence (largest \(steps.max()!))")
        }
    }

    @Test func onlyATrackNotYetWrittenNorResumedStartsAfresh() {
        #expect(track(written: 0).startsAfresh)
        #expect(!track(written: 1).startsAfresh)
        var resumed = track(written: 0)
        _ = resumed.cut(at: 0)
        resumed.resume(atStreamFrame: nil)
        #expect(!resumed.startsAfresh, "its first frames ramp up: they need the ramp's lead")
    }

    @Test func aTrackBegunInsideARampHasItMixedIntoItsFirstFramesUntilItIsRewritten() {
        var t = track(written: 0)
        t.mixes([Int16](repeating: 3_000, count: 40) + [30_000])
        let first = t.samplesForWriting(0..<100) ?? []
        #expect(first.count == 100 && first[..<40].allSatisfy { $0 == 13_000 } && first[40] == .max && first[41...].allSatisfy { $0 == 10_000 },
                "added, saturating, over the underlay's 41 frames only")
        #expect(same(t.samplesForWriting(20..<30), [Int16](repeating: 13_000, count: 10)))
        #expect(t.samplesForWriting(41..<100) == nil, "past it: the samples as appended")
        // Cut inside it: the rest of the old ramp goes on under the new one, and is then dropped.
        t.writtenFrames = 100
        let ramp = t.cut(at: 10)
        #expect(ramp[0] > 12_990 && ramp[30] >= 3_000 && ramp[87] == 0)
        t.resume(atStreamFrame: 2_000)
        #expect((t.samplesForWriting(10..<20) ?? []).allSatisfy { $0 < 10_000 }, "ramping up, with nothing of the old ramp")
        var written = track(written: 1)
        written.mixes([1_000])
        #expect(written.samplesForWriting(0..<1) == nil, "a track already given to the server is not mixed into")
        var flushed = track(written: 0)
        flushed.mixes([1_000, 1_000])
        flushed.rewound(toStreamFrame: 500)
        #expect(flushed.samplesForWriting(0..<2) == nil, "a flush dropped the ramp too")
    }

    @Test func aRampHoldsTheLastFrameThatMayBePlayedAtTheHoldOrTheEndOfWhatWasAppended() {
        var t = track(frames: 330), whole = track()
        let ramp = t.cut(at: 300), wholeRamp = whole.cut(at: 300)
        #expect(same(ramp, wholeRamp), "the appended frames held: the same ramp as over 10,000 appended")
        var held = Track(format: AudioFormat(sampleRate: 22_050, channels: 1))
        held.append([Int16](repeating: 10_000, count: 320) + [Int16](repeating: -20_000, count: 680))
        held.starts(atStreamFrame: 500)
        _ = held.setHold(320)
        let heldRamp = held.cut(at: 300)
        #expect(heldRamp.allSatisfy { $0 >= 0 } && heldRamp == wholeRamp, "nothing past the hold is heard")
        var past = track(frames: 300)
        #expect(past.cut(at: 300).allSatisfy { $0 == 0 }, "a cut past everything that may play has nothing to ramp")
    }

    @Test func aCutDuringARampUpKeepsBoth() {
        var t = track()
        _ = t.cut(at: 300)
        t.resume(atStreamFrame: 2_000)
        t.writtenFrames = 320
        let ramp = t.cut(at: 310)
        // Ramping up (10 frames in: quiet) and down at once: both gains apply, at most 12 % together.
        #expect(ramp.max()! < 1_300 && ramp.first! < 20 && ramp.last! < 2)
        #expect(t.cutAt == 310 && t.writtenFrames == 310)
    }

    @Test func stereoFramesAreRampedTogether() {
        var t = track(channels: 2)
        let ramp = t.cut(at: 300)
        #expect(same(ramp.count, Self.length * 2))
        #expect(stride(from: 0, to: ramp.count, by: 2).allSatisfy { (left: Int) in ramp[left] == ramp[left + 1] })
    }

    @Test func extremeTrackFramesNeverTrap() {
        var t = track()
        #expect(t.streamFrame(ofTrackFrame: .max) == nil, "past what an Int64 holds")
        #expect(same(t.streamFrame(ofTrackFrame: .min), .min + 500))
        let ramp = t.cut(at: .max - 3)
        #expect(ramp.allSatisfy { $0 == 0 })
        t.resume(atStreamFrame: .max)
        #expect(t.samplesForWriting(0..<10) == nil)
    }
}
