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
    private(set) var segment: StreamSegment?

    init(format: AudioFormat) { self.format = format }

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
    /// (nil: unknown). Writing continues from the hold's side of what was played.
    mutating func rewound(toStreamFrame readFrame: Int64?) {
        guard let readFrame else {
            segment = nil
            return
        }
        guard let segment else { return }
        let at = segment.trackFrame(atStreamFrame: readFrame) ?? 0
        writtenFrames = min(writtenFrames, max(at, lastPlayed, drainedThrough))
        // The flush made the write index equal to the read index: continue from there.
        self.segment = StreamSegment(trackFrame: writtenFrames, streamFrame: readFrame)
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
