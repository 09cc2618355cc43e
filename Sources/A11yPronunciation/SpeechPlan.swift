import A11yCore

/// What to synthesize for one utterance, and what the client will see of it.
public struct SpeechPlan: Sendable, Equatable {
    /// A named point (SSML `<mark name>`), reached just before `segmentIndex` starts
    /// (`segments.count` when it is at the very end).
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
    /// `text`+`spans`, the character data of the SSML document for `ssml`.
    public var spokenText: String
    public var marks: [Mark]

    public init(segments: [SpeechSegment], spokenText: String, marks: [Mark] = []) {
        self.segments = segments
        self.spokenText = spokenText
        self.marks = marks
    }
}
