/// Where one stream segment of a track lies on the stream: track frame `trackFrame` is at stream
/// frame `streamFrame` (the server's read index over the frame size).
///
/// Pure and total: numbers from libpulse are never trusted to fit. A reading that cannot be true
/// (a time or index no integer can hold, or one before the segment began) is no reading, `nil`.
struct StreamSegment: Equatable {
    var trackFrame: Int
    var streamFrame: Int64

    /// The track frame at stream frame `frame`.
    func trackFrame(atStreamFrame frame: Int64) -> Int? {
        guard frame >= streamFrame else { return nil }
        let (offset, overflow) = frame.subtractingReportingOverflow(streamFrame)
        guard !overflow, let offset = Int(exactly: offset) else { return nil }
        let (result, past) = trackFrame.addingReportingOverflow(offset)
        return past ? nil : result
    }
}

/// Stream clock readings as frames, or `nil` when they cannot be true.
enum StreamClock {
    /// Whole frames played in `microseconds` at `sampleRate`.
    /// Above `Int64.max` a `pa_usec_t` is `PA_USEC_INVALID` or a negative difference wrapped round.
    static func frames(microseconds: UInt64, sampleRate: Int) -> Int64? {
        guard microseconds <= UInt64(Int64.max), sampleRate > 0 else { return nil }
        let rate = UInt64(sampleRate)
        // floor(µs × rate / 10⁶) without the product overflowing first.
        let (seconds, fraction) = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        let (whole, overflow1) = seconds.multipliedReportingOverflow(by: rate)
        let (part, overflow2) = fraction.multipliedReportingOverflow(by: rate)
        let (sum, overflow3) = whole.addingReportingOverflow(part / 1_000_000)
        guard !overflow1, !overflow2, !overflow3 else { return nil }
        return Int64(exactly: sum)
    }

    /// Whole frames in `bytes` of a stream index (`read_index`, `write_index`), or `nil` for a
    /// negative index or a frame size that is not positive.
    static func frames(bytes: Int64, frameSize: Int) -> Int64? {
        guard bytes >= 0, frameSize > 0, let size = Int64(exactly: frameSize) else { return nil }
        return bytes / size
    }
}
