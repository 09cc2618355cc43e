// SPDX-License-Identifier: GPL-3.0-or-later
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

/// What the last timing update said of where the server reads a stream, in frames, carried
/// forward to the moment it was taken (`PlaybackStream.reading()`).
struct StreamReading: Equatable {
    /// The read index then: the server has read this much for sure.
    var readFrame: Int64
    /// Where it reads now: the read index carried forward at the stream's rate while playing.
    var readingNow: Int64
    /// The furthest it may have read since (`StreamClock.furthestRead`).
    var furthestRead: Int64
    /// What its sink still held then, not yet heard.
    var sinkLatency: Int64
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

    /// Microseconds from `start` to `end` (seconds and microseconds, as a `timeval` holds them), or
    /// `nil` when that is no age: `end` before `start`, or more than an `Int64` holds.
    static func microseconds(from start: (seconds: Int, microseconds: Int), to end: (seconds: Int, microseconds: Int)) -> Int64? {
        func total(_ t: (seconds: Int, microseconds: Int)) -> Int64? {
            guard let seconds = Int64(exactly: t.seconds), let micro = Int64(exactly: t.microseconds) else { return nil }
            let (scaled, o1) = seconds.multipliedReportingOverflow(by: 1_000_000)
            let (sum, o2) = scaled.addingReportingOverflow(micro)
            return o1 || o2 ? nil : sum
        }
        guard let a = total(start), let b = total(end) else { return nil }
        let (age, overflow) = b.subtractingReportingOverflow(a)
        return overflow || age < 0 ? nil : age
    }

    /// The longest a reading is carried forward: one older than this says nothing of now.
    static let longestCarry: Int64 = 1_000_000

    /// Where a read index at `frame` stands `age` microseconds later at `sampleRate` while playing:
    /// `frame` itself when not playing, or when the age is unknown or longer than `longestCarry`.
    static func frame(_ frame: Int64, carriedFor age: Int64?, sampleRate: Int, playing: Bool) -> Int64 {
        guard playing, let age, age > 0, age <= longestCarry,
            let ahead = frames(microseconds: UInt64(age), sampleRate: sampleRate)
        else { return frame }
        let (sum, overflow) = frame.addingReportingOverflow(ahead)
        return overflow ? .max : sum
    }

    /// The furthest a server that read up to `frame` may have read `age` microseconds later, at
    /// `sampleRate`: it reads whole blocks of `block` frames at once (what it asks for at a time;
    /// PipeWire's pulse server a processing quantum), so one more block than the time alone says,
    /// right after the reading. An unknown age, or one longer than `longestCarry`, counts as none.
    static func furthestRead(_ frame: Int64, carriedFor age: Int64?, sampleRate: Int, block: Int64) -> Int64 {
        let block = max(block, 1)
        var elapsed: Int64 = 0
        if let age, age > 0, age <= longestCarry, let frames = frames(microseconds: UInt64(age), sampleRate: sampleRate) {
            elapsed = frames
        }
        // Whole blocks: one more than fit in the time elapsed (never overflows: elapsed is at
        // most a second of frames at an Int's rate).
        let (blocks, overflow) = (elapsed / block + 1).multipliedReportingOverflow(by: block)
        let (sum, past) = frame.addingReportingOverflow(overflow ? .max : blocks)
        return past ? .max : sum
    }

    /// Whole frames in `bytes` of a stream index (`read_index`, `write_index`), or `nil` for a
    /// negative index or a frame size that is not positive.
    static func frames(bytes: Int64, frameSize: Int) -> Int64? {
        guard bytes >= 0, frameSize > 0, let size = Int64(exactly: frameSize) else { return nil }
        return bytes / size
    }
}
