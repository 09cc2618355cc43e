// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif

/// How a cut takes the sound down, and a resume brings it back up: over a few milliseconds, not
/// from speech level to zero in one sample, which is a click.
///
/// The gain is a squared raised cosine, `((1 + cos πx) / 2)²` going down and its mirror going up,
/// over `milliseconds`: flat where it starts and where it ends (no corner to click), and in its
/// last millisecond at most 2.1 % of full level (−33 dB), so that what is left of the loudest
/// speech there stays under −27 dBFS. Pure: no libpulse.
enum Ramp {
    /// 4 ms: at 3 ms, a plain raised cosine or a squared one left up to 1,300 of 32,767 of speech
    /// peaking at 20,754 in its last millisecond; 4 ms leaves at most 445.
    static let milliseconds = 4

    /// Gain of frame `index` of a ramp down `length` frames long: close to 1 at frame 0, close to
    /// 0 at its last frame; 1 before it, 0 after it.
    static func down(_ index: Int, of length: Int) -> Double {
        guard index >= 0 else { return 1 }
        guard index < length else { return 0 }
        let x = (Double(index) + 0.5) / Double(length)
        let gain = (1 + cos(Double.pi * x)) / 2
        return gain * gain
    }

    /// Gain of frame `index` of a ramp up `length` frames long: the ramp down backwards (0 before
    /// it, 1 after it).
    static func up(_ index: Int, of length: Int) -> Double {
        guard index < length else { return 1 }
        guard index >= 0 else { return 0 }
        return down(length - 1 - index, of: length)
    }

    /// `sample` times `gain`, rounded: a gain above 1 counts as 1, one below 0 (or NaN) as 0.
    static func scale(_ sample: Int16, by gain: Double) -> Int16 {
        guard gain > 0 else { return 0 }
        guard gain < 1 else { return sample }
        return Int16(clamping: Int((Double(sample) * gain).rounded()))
    }
}

/// Where a cut rewrites the stream: the first frame the server has not read, or can take back.
///
/// What PipeWire's pulse server read it has passed on to the graph: that can no longer be changed,
/// so a rewrite starts past the furthest it may have read. PulseAudio takes back what its sink
/// mixed ahead when a stream rewrites it (a rewind, lossless on a real sink), so there a rewrite may
/// start just past where it reads now. Pure and total: every sum saturates.
enum CutPoint {
    /// How far past where PulseAudio reads now (carried forward at the stream's rate) a rewrite
    /// starts: what it reads before the rewrite arrives. Measured: at 2 ms, 1 cut in 60 needed a
    /// rewind of its ramp's start on a null sink mixing 1 ms blocks.
    static let rewindingLeadMicroseconds: UInt64 = 2_000
    /// How far past the furthest PipeWire's pulse server may have read (a whole block more than
    /// the time says) a rewrite starts. Measured: 120 cuts, no ramp's start lost.
    static let leadMicroseconds: UInt64 = 500
    /// How far past where PulseAudio reads now a new track written behind a cut's ramp (in the
    /// silence after it) starts. Nothing there needs guarding as a ramp's start does: if the server
    /// read past it meanwhile, PulseAudio rewinds for it, and at worst the track's first fraction of
    /// a millisecond is not played (a track's own start: eSpeak's lead-in, or the first of its
    /// onset where it has none), where 2 ms more made every key echo cut by the next wait 2 ms more.
    static let startingLeadMicroseconds: UInt64 = 500

    /// The first frame a rewrite may start at, given where the server reads now (carried forward
    /// at the stream's rate), the furthest it may have read, and whether it rewinds; `startingTrack`
    /// for a new track's first frame behind a cut, not a ramp's (down, or up on a resume).
    static func unread(readingNow: Int64, furthestRead: Int64, rewinds: Bool, sampleRate: Int, startingTrack: Bool = false) -> Int64 {
        let (from, lead) = rewinds
            ? (readingNow, startingTrack ? startingLeadMicroseconds : rewindingLeadMicroseconds) : (furthestRead, leadMicroseconds)
        let (sum, overflow) = from.addingReportingOverflow(StreamClock.frames(microseconds: lead, sampleRate: sampleRate) ?? 0)
        return overflow ? .max : sum
    }

    /// Where a cut starts its ramp: at `unread`, never before what the server said it had read
    /// (`lastRead`) nor before `earliest` (where the track's audio begins on the stream), and at
    /// most `latest` (what was written: nothing after it can be replaced).
    static func frame(unread: Int64, lastRead: Int64, earliest: Int64, latest: Int64) -> Int64 {
        min(max(unread, lastRead, earliest), latest)
    }
}

/// What a cut left on the stream, in stream frames: its ramp down (`ramp`, interleaved, ending at
/// `rampEnd`), then silence up to `end`, the server's write index. Pure.
///
/// Audio that follows (the next track, or the same one resumed) is written right after the ramp
/// while the server cannot have read that far, so nothing waits and nothing of the ramp is lost;
/// a new track with enough audio at hand may start earlier, inside the ramp, mixed with what is
/// left of it (a crossfade: the next key's echo does not wait for the last one's ramp to end).
/// Once the ramp has been heard, the silence left is dropped and the stream corked, as at the end
/// of a track.
struct StreamTail: Equatable {
    var rampEnd: Int64
    var end: Int64
    /// The ramp's samples as written, interleaved: what audio placed inside it is mixed with.
    var ramp: [Int16] = []
    var channels = 1

    /// Where the ramp starts (at `rampEnd` when its samples are not known: nothing is mixed).
    var rampStart: Int64 {
        let (start, overflow) = rampEnd.subtractingReportingOverflow(Int64(ramp.count / max(channels, 1)))
        return overflow ? rampEnd : start
    }

    /// Where audio that follows may start: right after the ramp, or at `unread` if that is later.
    /// A new track may start inside the ramp instead, mixed with what is left of it, at
    /// `mixing.unread` (past where the server reads by a new track's lead: if it read past that
    /// meanwhile, the ramp alone plays there and only the track's silent lead-in is lost), when its
    /// `mixing.frames` (what it can write at once) cover the rest of the ramp,
    /// so that none of the ramp is dropped unmixed (PipeWire's pulse server drops what follows a
    /// write). Nil when less than `room` frames of silence would be left after it (the server is
    /// about to run out: start afresh, after a flush).
    func placement(unread: Int64, room: Int64, mixing: (unread: Int64, frames: Int64)? = nil) -> Int64? {
        var at = max(rampEnd, unread)
        if let mixing {
            let inside = max(rampStart, mixing.unread)
            if inside < rampEnd, rampEnd - inside <= mixing.frames { at = inside }
        }
        let (limit, under) = end.subtractingReportingOverflow(max(room, 0))
        return !under && at <= limit ? at : nil
    }

    /// What is left of the ramp from stream frame `frame` on, interleaved (empty past its end).
    func rampLeft(from frame: Int64) -> [Int16] {
        guard frame < rampEnd else { return [] }
        let (skipped, overflow) = frame.subtractingReportingOverflow(rampStart)
        let from = overflow ? 0 : Int(clamping: max(skipped, 0)) * max(channels, 1)
        return from < ramp.count ? Array(ramp[from...]) : []
    }

    /// The whole ramp has been heard: the server had surely read `margin` frames past it, on top
    /// of what its sink still held (`sinkLatency` frames) when it said so.
    func isHeard(surelyRead: Int64, sinkLatency: Int64, margin: Int64) -> Bool {
        let (heard, under) = surelyRead.subtractingReportingOverflow(max(sinkLatency, 0))
        let (needed, over) = rampEnd.addingReportingOverflow(max(margin, 0))
        return !under && !over && heard >= needed
    }
}
