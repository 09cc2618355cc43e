// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// One track's bookkeeping, in frames from the track's start: what was appended, written to the
/// server, held back and played. Pure value logic, no libpulse.
struct Track {
    let format: AudioFormat
    /// Every appended sample (interleaved), kept so that after a reconnect or a hold rewind the
    /// output can give the server any frame again.
    private(set) var samples: [Int16] = []
    var ended = false
    private(set) var hold: Int?
    /// Frames given to the server (written to a stream).
    var writtenFrames = 0
    /// Frames known to be played because a drain covering them completed (or their server died).
    private(set) var drainedThrough = 0
    /// Highest played position reported so far (keeps `playedFrames` monotonic).
    private(set) var lastPlayed = 0
    /// Where this track lies on the current stream; `nil` while unknown.
    private(set) var segment: StreamSegment? {
        // Wherever the track is placed anew (after a flush, on a new stream, or lost), what lay
        // under its first frames where it was is not there.
        didSet { underlay = [] }
    }
    /// Set when a cut ramped the track down here (an immediate pause): nothing is given to the
    /// server until it resumes, from this frame.
    private(set) var cutAt: Int?
    /// Frames from here are ramped up when given to the server (the track resumed here after a cut).
    private(set) var rampUpFrom: Int?
    /// What is left of a cut's ramp where the track starts, interleaved: added to its first frames
    /// when they are given to the server (the track begun inside the ramp, `StreamTail.placement`),
    /// as long as it keeps that place (`segment`) and is not cut.
    private(set) var underlay: [Int16] = []

    init(format: AudioFormat) { self.format = format }

    /// Nothing of it given to the server yet, and not resumed after a cut: its first frame is its own
    /// start, not the middle of a ramp up.
    var startsAfresh: Bool { writtenFrames == 0 && rampUpFrom == nil }

    /// Frames a ramp lasts (at least one).
    var rampFrames: Int { max(1, format.frames(milliseconds: Ramp.milliseconds)) }

    var channels: Int { max(format.channels, 1) }

    var appendedFrames: Int { samples.count / channels }

    /// Frames that may be given to the server now.
    var writeLimit: Int { min(appendedFrames, hold ?? Int.max) }

    /// Where playback stops for now (the end, or the hold), if it is already known.
    var stopPoint: Int? {
        if let h = hold, h <= appendedFrames { return max(h, writtenFrames) }
        if ended { return appendedFrames }
        return nil
    }

    /// Played up to where playback stops for now (the end, or the hold).
    var isFinished: Bool {
        guard let stop = stopPoint else { return false }
        return writtenFrames >= stop && drainedThrough >= stop
    }

    /// Ended and played to the end: nothing is held back and every appended frame was played.
    var isPlayedToTheEnd: Bool {
        ended && writtenFrames >= appendedFrames && drainedThrough >= appendedFrames
    }

    /// Written but maybe not yet heard: worth uncorking for.
    var hasUnplayedAudio: Bool { writtenFrames > drainedThrough }

    mutating func append(_ more: [Int16]) { samples.append(contentsOf: more) }

    /// The stream frame of track frame `frame` on the current segment; nil while the position is
    /// unknown, or when no integer holds it.
    func streamFrame(ofTrackFrame frame: Int) -> Int64? {
        guard let segment, let frame = Int64(exactly: frame), let start = Int64(exactly: segment.trackFrame) else { return nil }
        let (offset, o1) = frame.subtractingReportingOverflow(start)
        let (result, o2) = segment.streamFrame.addingReportingOverflow(offset)
        return o1 || o2 ? nil : result
    }

    /// Frames `frames` as the server is to be given them: `nil` when they are the samples as
    /// appended (write those), else a copy with the ramp up of a resume applied, or with what is
    /// left of the cut's ramp they start inside mixed in.
    func samplesForWriting(_ frames: Range<Int>) -> [Int16]? {
        let rampsUp = rampUpFrom.map { frames.lowerBound - $0 < rampFrames && frames.upperBound > $0 } ?? false
        guard rampsUp || frames.lowerBound < underlayFrames else { return nil }
        var out = copy(frames) { frame in rampUpFrom.map { Ramp.up(frame - $0, of: rampFrames) } ?? 1 }
        mixUnderlay(into: &out, frames)
        return out
    }

    /// Frames the underlay lasts.
    private var underlayFrames: Int { underlay.count / channels }

    /// Adds the underlay to `out`, the samples of `frames`, where they overlap (saturating).
    private func mixUnderlay(into out: inout [Int16], _ frames: Range<Int>) {
        let from = max(frames.lowerBound, 0), to = min(frames.upperBound, underlayFrames)
        guard from < to else { return }
        for frame in from..<to {
            for c in 0..<channels {
                let i = (frame - frames.lowerBound) * channels + c
                out[i] = Int16(clamping: Int(out[i]) + Int(underlay[frame * channels + c]))
            }
        }
    }

    /// The track, not yet given to the server, starts inside a cut's ramp: `samples` (interleaved,
    /// what is left of it from the track's first frame on) are mixed into its first frames.
    mutating func mixes(_ samples: [Int16]) {
        guard startsAfresh else { return }
        underlay = samples
    }

    /// The samples of `frames`, each frame scaled by `gain(frame)`: silence past those appended, or,
    /// with `holdingPast`, the frame before it repeated past it.
    private func copy(_ frames: Range<Int>, holdingPast limit: Int? = nil, gain: (Int) -> Double) -> [Int16] {
        var out = [Int16](repeating: 0, count: frames.count * channels)
        for frame in frames where frame >= 0 {
            let source = limit.map { min(frame, $0 - 1) } ?? frame
            guard source >= 0, source < appendedFrames else { continue }
            let g = gain(frame)
            for c in 0..<channels {
                out[(frame - frames.lowerBound) * channels + c] = Ramp.scale(samples[source * channels + c], by: g)
            }
        }
        return out
    }

    /// Cuts the track at `frame` (from there the server's copy is being rewritten): returns the ramp
    /// down that starts there, `rampFrames` long, with the ramp up of a resume still applied where it
    /// overlaps. Past what may be played (the frames appended so far, as when the engine has not said
    /// more yet, up to the hold) the last frame that may is held, so that the ramp still goes down
    /// over its whole length instead of dropping to silence, and nothing past a hold is heard.
    /// From now on the track is given to the server from `frame` again, and only once resumed.
    mutating func cut(at frame: Int) -> [Int16] {
        let from = rampUpFrom, length = rampFrames, limit = writeLimit
        let frames = frame..<(frame > Int.max - length ? Int.max : frame + length)
        var ramp = frame < limit
            ? copy(frames, holdingPast: limit) { f in Ramp.down(f - frame, of: length) * (from.map { Ramp.up(f - $0, of: length) } ?? 1) }
            : [Int16](repeating: 0, count: frames.count * channels)
        // What is left there of the last cut's ramp, already going down, goes on under this one.
        mixUnderlay(into: &ramp, frames)
        underlay = []
        writtenFrames = min(writtenFrames, frame)
        cutAt = frame
        return ramp
    }

    /// Resumes after a cut: frames from the cut on are given to the server again, ramping up. The
    /// track continues at stream frame `streamFrame` if given; else its position is unknown until
    /// it is placed (`continues(atStreamFrame:)`).
    mutating func resume(atStreamFrame streamFrame: Int64?) {
        guard let at = cutAt else { return }
        cutAt = nil
        rampUpFrom = at
        segment = streamFrame.map { StreamSegment(trackFrame: writtenFrames, streamFrame: $0) }
    }

    /// Sets the hold; true when it lies behind what the server already has (a rewind is needed).
    mutating func setHold(_ frame: Int?) -> Bool {
        hold = frame.map { max(0, $0) }
        return hold.map { $0 < writtenFrames } ?? false
    }

    // MARK: Where the track is on the stream

    /// The stream's read index is at `streamFrame` and the track starts there (a fresh stream is
    /// at 0; a reused one where the flush left it).
    mutating func starts(atStreamFrame streamFrame: Int64) {
        segment = StreamSegment(trackFrame: 0, streamFrame: streamFrame)
    }

    /// Track frame `trackFrame` is at stream frame `streamFrame` (learnt after it was written).
    mutating func place(trackFrame: Int, atStreamFrame streamFrame: Int64) {
        segment = StreamSegment(trackFrame: trackFrame, streamFrame: streamFrame)
    }

    /// What is given to the server next (the track's start, or where it resumes) goes to stream
    /// frame `streamFrame`: where a flush left the read index (a fresh stream is at 0), or right
    /// after a cut's ramp.
    mutating func continues(atStreamFrame streamFrame: Int64) {
        segment = StreamSegment(trackFrame: writtenFrames, streamFrame: streamFrame)
    }

    /// A new stream, whose indices start at zero, continues the track from what was written.
    mutating func continuesOnNewStream() {
        segment = StreamSegment(trackFrame: writtenFrames, streamFrame: 0)
    }

    /// The stream is gone: frames already given to it count as played (the server has them or is gone).
    mutating func streamLost() {
        lastPlayed = max(lastPlayed, writtenFrames)
        drainedThrough = max(drainedThrough, writtenFrames)
        segment = nil
    }

    /// Nothing is buffered anywhere (no stream): writing restarts from the hold or what was played.
    mutating func rewindWithoutStream() {
        if let hold { writtenFrames = max(hold, lastPlayed) }
    }

    /// A flush dropped what was written but not played; the read index is now at `readFrame`
    /// (nil: unknown) and what is written next goes to `writeFrame` (the read index if not given).
    /// Writing continues from the hold's side of what was played.
    mutating func rewound(toStreamFrame readFrame: Int64?, writingAt writeFrame: Int64? = nil) {
        guard let readFrame else {
            segment = nil
            return
        }
        guard let segment else { return }
        let at = segment.trackFrame(atStreamFrame: readFrame) ?? 0
        writtenFrames = min(writtenFrames, max(at, lastPlayed, drainedThrough))
        // The flush made the write index equal to the read index: continue from there.
        self.segment = StreamSegment(trackFrame: writtenFrames, streamFrame: writeFrame ?? readFrame)
    }

    /// The position is unknown on this stream from now on (drains still tell what played).
    mutating func forgetPosition() { segment = nil }

    var knowsPosition: Bool { segment != nil }

    /// A drain issued when `target` frames were written completed.
    mutating func drained(through target: Int) {
        drainedThrough = max(drainedThrough, target)
        lastPlayed = max(lastPlayed, drainedThrough)
    }

    /// Frames played, given where the stream is playing (`nil`: no reading). Never goes
    /// backwards, never past what was written; at the stop point once finished.
    mutating func played(atStreamFrame streamFrame: Int64?) -> Int {
        var played = max(lastPlayed, drainedThrough)
        if let streamFrame, let segment, let f = segment.trackFrame(atStreamFrame: streamFrame) {
            played = max(played, min(f, writtenFrames))
        }
        if isFinished, let stop = stopPoint { played = max(played, stop) }
        lastPlayed = played
        return played
    }
}
