import A11yCore

/// One track's bookkeeping, in frames from the track's start. Pure value logic, no libpulse.
struct PulseTrack {
    let format: AudioFormat
    /// Every appended sample (interleaved), kept so that after a reconnect or a hold rewind the
    /// output can give the server any frame again.
    var samples: [Int16] = []
    var ended = false
    var hold: Int?
    /// Frames given to the server (written to a stream).
    var writtenFrames = 0
    /// Frames known to be played because a drain covering them completed (or their server died).
    var drainedThrough = 0
    /// Highest played position reported so far (keeps `playedFrames` monotonic).
    var lastPlayed = 0
    /// Where this track lies on the current stream; `nil` while unknown.
    var segment: StreamSegment?

    init(format: AudioFormat) { self.format = format }

    var appendedFrames: Int { samples.count / max(format.channels, 1) }

    /// Frames that may be given to the server now.
    var writeLimit: Int { min(appendedFrames, hold ?? Int.max) }

    /// Where playback stops for now (the end, or the hold), if it is already known.
    var stopPoint: Int? {
        if let h = hold, h <= appendedFrames { return max(h, writtenFrames) }
        if ended { return appendedFrames }
        return nil
    }

    var isFinished: Bool {
        guard let stop = stopPoint else { return false }
        return writtenFrames >= stop && drainedThrough >= stop
    }
}
