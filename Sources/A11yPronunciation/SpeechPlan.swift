// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// What to synthesize for one utterance, and what the client will see of it.
public struct SpeechPlan: Sendable, Equatable {
    /// A named point (SSML `<mark name>`), reached just before `segmentIndex` starts: that segment
    /// carries it as `options.markBefore`. A mark with no speech after it (at the very end, or
    /// followed by another mark or a break) gets an empty `.text("")` segment of its own, so
    /// `segmentIndex < segments.count` for plans made from SSML.
    public struct Mark: Sendable, Equatable {
        public var name: String
        public var segmentIndex: Int
        /// Its place in `spokenText`, in Unicode scalars.
        public var offset: Int
        public init(name: String, segmentIndex: Int, offset: Int) {
            self.name = name
            self.segmentIndex = segmentIndex
            self.offset = offset
        }
    }

    public var segments: [SpeechSegment]
    /// The text the segments' `sourceStart/sourceLength` point into: the client's text for
    /// `text`+`spans`; for `ssml`, the document's text as spoken (tags removed, whitespace
    /// collapsed, `sub` aliases and telephone readings in place of what they replace).
    public var spokenText: String
    public var marks: [Mark]

    public init(segments: [SpeechSegment], spokenText: String, marks: [Mark] = []) {
        self.segments = segments
        self.spokenText = spokenText
        self.marks = marks
    }
}

extension SpeechPlan {
    /// This plan with each segment of plain text cut into the pieces `cut` makes of it: a `.text`
    /// segment, not spelled out, that says exactly its range of `spokenText` (the scalars given, so
    /// that each pass does not make them again). A segment `cut` returns nil or nothing for, and
    /// every other segment, is kept as it is; each mark moves to the first piece of its segment. The
    /// passes that rewrite a client's words (languages found, the user's lexicon) share this walk.
    func cuttingText(
        _ scalars: [Unicode.Scalar], _ cut: (_ segment: SpeechSegment, _ range: Range<Int>) async -> [SpeechSegment]?
    ) async -> SpeechPlan {
        var pieces: [SpeechSegment] = []
        var firstPiece: [Int] = []
        for segment in segments {
            firstPiece.append(pieces.count)
            guard let range = Self.textRange(of: segment, in: scalars), let cutPieces = await cut(segment, range), !cutPieces.isEmpty
            else {
                pieces.append(segment)
                continue
            }
            pieces += cutPieces
        }
        let moved = marks.map { mark in
            var mark = mark
            if mark.segmentIndex < firstPiece.count { mark.segmentIndex = firstPiece[mark.segmentIndex] }
            return mark
        }
        return SpeechPlan(segments: pieces, spokenText: spokenText, marks: moved)
    }

    /// The range of `scalars` (the plan's `spokenText`) that `segment` says as it is written: a
    /// `.text` segment, not spelled out and not empty, whose text is exactly that range. Nil for
    /// anything else (phonemes, an alias, spelled text, a mark's empty segment).
    static func textRange(of segment: SpeechSegment, in scalars: [Unicode.Scalar]) -> Range<Int>? {
        let range = segment.sourceStart..<segment.sourceStart + segment.sourceLength
        guard case .text(let spoken) = segment.content, !segment.options.spellOut, !range.isEmpty,
              range.upperBound <= scalars.count, spoken.unicodeScalars.elementsEqual(scalars[range])
        else { return nil }
        return range
    }
}

extension SpeechSegment {
    /// A piece of this segment, standing for `range` of the client's text: the first piece keeps the
    /// segment's pause and mark, a later one has neither (they come once, before the first).
    func piece(_ content: Content, _ range: Range<Int>, voice: String? = nil, first: Bool) -> SpeechSegment {
        var options = self.options
        if !first {
            options.pauseBeforeMilliseconds = 0
            options.markBefore = nil
        }
        return SpeechSegment(
            content: content, voice: voice ?? self.voice, sourceStart: range.lowerBound, sourceLength: range.count, options: options)
    }
}
