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
