// SPDX-License-Identifier: GPL-3.0-or-later
// How loud and how long one utterance was at a sink's monitor, to compare it with the same text heard
// at another moment (before a crash and after the restart, say).
import Foundation

/// One utterance as the monitor heard it, between two moments of a recording.
public struct HeardUtterance: Sendable, CustomStringConvertible {
    /// RMS from its first to its last audible sample (0 when none reached the threshold).
    public let rms: Double
    /// RMS of everything recorded between the two moments, silence included.
    public let rmsOfSpan: Double
    /// Seconds of 20 ms windows at RMS ≥ 0.01 (speech is 0.10–0.25 here).
    public let voiced: Double
    /// Seconds recorded between the two moments.
    public let span: Double

    public var description: String {
        String(format: "RMS %.4f from onset to end, %.2f s voiced, RMS %.6f over the %.2f s recorded", rms, voiced, rmsOfSpan, span)
    }

    /// Whether this is heard as well as `reference`, the same text heard before: at least 80 % of
    /// its voiced length (nothing lost) and at least half its RMS (no more than 6 dB quieter).
    /// eSpeak-NG's output varies by about 1.6 % from one synthesis to the next.
    public func isHeardAsWellAs(_ reference: HeardUtterance) -> Bool {
        voiced >= 0.8 * reference.voiced && rms >= 0.5 * reference.rms
    }
}

extension Recording {
    /// The utterance mixed between `from` and `to` seconds (recording time).
    public func utterance(from: Double, to: Double = .infinity, threshold: Float = 0.01) -> HeardUtterance {
        let end = min(to, duration > 0 ? time(ofSample: samples.count) : 0)
        let onset = firstAudibleTime(threshold: threshold, after: from)
        let offset = lastAudibleTime(threshold: threshold, before: end)
        var rms = 0.0
        if let onset, let offset, onset < end, offset > onset {
            rms = self.rms(from: onset, to: offset)
        }
        return HeardUtterance(
            rms: rms, rmsOfSpan: self.rms(from: from, to: end),
            voiced: audibleDuration(window: 0.02, from: from, to: end), span: max(0, end - from))
    }
}
