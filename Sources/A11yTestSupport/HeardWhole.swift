// SPDX-License-Identifier: GPL-3.0-or-later
/// The audio oracle: an item told `spoken` must have been heard, whole and once.
///
/// It reads the null sink's recording of one utterance that may have been paused, and compares it
/// with the same text heard unpaused on the same server:
/// - its voiced length is within `tolerance` of the unpaused one (nothing skipped, nothing
///   repeated: eSpeak-NG's output varies by about 1.6 % between runs, so a few percent);
/// - it is silent while paused (from shortly after the pause took effect until the resume);
/// - its `word` events are spread over the audio they belong to: none while paused, never a
///   bunch told in the same instant (as when the rest of a sentence was dropped and its words
///   flushed at once), none after the sound ended.
public struct HeardWhole: Sendable {
    /// Seconds voiced when the same text is heard unpaused.
    public var reference: Double
    public var tolerance: Double

    public init(reference: Double, tolerance: Double = 0.05) {
        self.reference = reference
        self.tolerance = tolerance
    }

    /// What was wrong with what was heard; empty when it was heard whole, once.
    /// - Parameters:
    ///   - pauses: each pause, from the moment it took effect to the resume, in recording time.
    ///   - words: when each `word` event arrived, in recording time.
    public func problems(in recording: Recording, pauses: [(from: Double, to: Double)] = [], words: [Double] = []) -> [String] {
        var problems: [String] = []
        let voiced = recording.voicedDuration
        if abs(voiced - reference) > tolerance * reference {
            problems.append(String(format: "voiced %.2f s, unpaused %.2f s (±%.0f %%)", voiced, reference, tolerance * 100))
        }
        // The cork is heard within a few milliseconds; the recorder's chunks are 5 ms apart. The
        // same margin before the resume: the recording's clock, estimated from chunk arrivals, put
        // the resumed speech's onset 20-40 ms before the moment the test sent the resume (measured;
        // as make soak's probe, which keeps 0.1 s off both ends).
        let settle = 0.1
        for pause in pauses where pause.to - pause.from > 2 * settle {
            let level = recording.rms(from: pause.from + settle, to: pause.to - settle)
            if level >= Self.silence {
                problems.append(String(format: "sound while paused (%.2f-%.2f s): RMS %.4f", pause.from, pause.to, level))
            }
            let told = words.filter { $0 > pause.from + settle && $0 < pause.to }
            if !told.isEmpty { problems.append("\(told.count) word(s) told while paused") }
        }
        let sorted = words.sorted()
        for (index, time) in sorted.enumerated() {
            let bunch = sorted[index...].prefix { $0 - time < Self.bunchWindow }.count
            if bunch > Self.bunchLimit {
                problems.append(String(format: "%d words told within %.0f ms at %.2f s", bunch, Self.bunchWindow * 1000, time))
                break
            }
        }
        if let last = sorted.last, let end = recording.lastAudibleTime(threshold: 0.01), last > end + 0.15 {
            problems.append(String(format: "a word told at %.2f s, after the sound ended at %.2f s", last, end))
        }
        return problems
    }

    /// RMS below which the sink counts as silent: well under speech, which a11yd plays as loud as
    /// speech-dispatcher does.
    public static let silence = 0.006
    /// More than `bunchLimit` words told within `bunchWindow` seconds is a flush, not speech.
    static let bunchWindow = 0.03
    static let bunchLimit = 3
}

extension Recording {
    /// Seconds of sound loud enough to be speech, in 20 ms windows (the threshold, like `silence`,
    /// set below speech at the level a11yd plays it).
    public var voicedDuration: Double { audibleDuration(threshold: 0.01, window: 0.02) }
}
