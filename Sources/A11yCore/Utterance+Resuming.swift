// SPDX-License-Identifier: GPL-3.0-or-later
extension Utterance {
    /// What is left to say from `sourceOffset` on (Unicode scalars of `text`, where a word began):
    /// the rest of an utterance paused there. Segments wholly before it go; the text segment it
    /// falls in is cut there, without the mark and the pause that stood before it (already
    /// heard); a phoneme segment is said whole again (its word positions are not reliable). The
    /// rest's word events still point into the whole `text`.
    public func resuming(at sourceOffset: Int) -> Utterance {
        var rest = self
        rest.segments = segments.compactMap { segment in
            let end = segment.sourceStart + max(segment.sourceLength, 0)
            if segment.sourceStart >= sourceOffset { return segment }
            if end <= sourceOffset { return nil }
            guard case .text(let text) = segment.content else { return segment }
            let scalars = text.unicodeScalars
            let cut = scalars.index(scalars.startIndex, offsetBy: min(sourceOffset - segment.sourceStart, scalars.count))
            var tail = segment
            tail.content = .text(String(scalars[cut...]))
            tail.sourceStart = sourceOffset
            tail.sourceLength = end - sourceOffset
            tail.options.markBefore = nil
            tail.options.pauseBeforeMilliseconds = 0
            return tail
        }
        return rest
    }
}
