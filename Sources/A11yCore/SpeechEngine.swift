// SPDX-License-Identifier: GPL-3.0-or-later
/// One thing to say, planned: the text clients see in events, and the segments the engine says
/// (each with its own voice and its own place in that text, so word events point back into what
/// the client sent), with the voice settings. The same value from the planner to the engine.
public struct Utterance: Sendable, Hashable {
    /// As clients see it (for an element, the composed sentence; for SSML, the spoken text).
    public var text: String
    public var segments: [SpeechSegment]
    /// Words per minute (eSpeak scale, 80...450, up to 900 where `[voice] top_rate` says so).
    public var rate: Int
    /// 0...100, 50 is the voice's normal pitch.
    public var pitch: Int
    /// 0...200, eSpeak's volume scale (speech-dispatcher sets eSpeak to SSIP volume + 100); above
    /// 100, where eSpeak would clip, the engine adds gain through a limiter instead.
    public var volume: Int

    public init(text: String, segments: [SpeechSegment], rate: Int, pitch: Int, volume: Int) {
        self.text = text
        self.segments = segments
        self.rate = rate
        self.pitch = pitch
        self.volume = volume
    }

    /// The segments' own text as the utterance's text (for an engine used directly).
    public init(segments: [SpeechSegment], rate: Int, pitch: Int, volume: Int) {
        let text = segments.map { segment -> String in
            if case .text(let text) = segment.content { return text }
            return ""
        }.joined()
        self.init(text: text, segments: segments, rate: rate, pitch: pitch, volume: volume)
    }
}

public struct SpeechSegment: Sendable, Hashable {
    public enum Content: Sendable, Hashable {
        /// Plain text, spoken literally: no markup of any kind is interpreted.
        case text(String)
        /// eSpeak phoneme mnemonics for the voice (what goes between `[[` and `]]`).
        case phonemes(String)
    }

    public var content: Content
    /// The eSpeak voice name to use (already resolved, e.g. "fr", "en-us").
    public var voice: String
    /// Where this segment starts in the client's text, in Unicode scalars.
    public var sourceStart: Int
    /// How many Unicode scalars of the client's text this segment stands for.
    public var sourceLength: Int
    /// How this segment is read (spell-out, punctuation, prosody, a pause before it).
    public var options: Options

    public init(
        content: Content, voice: String, sourceStart: Int, sourceLength: Int, options: Options = Options()
    ) {
        self.content = content
        self.voice = voice
        self.sourceStart = sourceStart
        self.sourceLength = sourceLength
        self.options = options
    }

    /// Per-segment reading options; the defaults read text as eSpeak normally does.
    public struct Options: Sendable, Hashable {
        /// Spell `.text` letter by letter (character names), digits one by one.
        public var spellOut: Bool
        /// Speak every punctuation character of `.text` by name.
        public var punctuation: Bool
        /// Multiplies the request's rate, pitch and volume for this segment (1 = unchanged).
        public var rateScale: Double
        public var pitchScale: Double
        public var volumeScale: Double
        /// Silence inserted before this segment, in milliseconds (SSML `break`).
        public var pauseBeforeMilliseconds: Int
        /// SSML `<mark name>` placed just before this segment: the engine reports it as a
        /// `NamedMark` at the segment's first frame (after the pause), so it is told when heard.
        public var markBefore: String?

        public init(
            spellOut: Bool = false, punctuation: Bool = false, rateScale: Double = 1,
            pitchScale: Double = 1, volumeScale: Double = 1, pauseBeforeMilliseconds: Int = 0,
            markBefore: String? = nil
        ) {
            self.markBefore = markBefore
            self.spellOut = spellOut
            self.punctuation = punctuation
            self.rateScale = rateScale
            self.pitchScale = pitchScale
            self.volumeScale = volumeScale
            self.pauseBeforeMilliseconds = pauseBeforeMilliseconds
        }
    }
}

/// A word about to be heard: `frame` is where its audio starts within the utterance's PCM,
/// `start` and `length` locate it in the client's text, in Unicode scalars.
public struct WordMark: Sendable, Equatable {
    public var frame: Int
    public var start: Int
    public var length: Int

    public init(frame: Int, start: Int, length: Int) {
        self.frame = frame
        self.start = start
        self.length = length
    }
}

/// A piece of an utterance's audio as the engine produces it, with the words that begin in it.
/// Frames in `words` count from the start of the utterance, not of the chunk.
public struct SynthesisChunk: Sendable, Equatable {
    public var samples: [Int16]
    public var words: [WordMark]
    /// SSML marks that fall in this chunk (frames from the start of the utterance).
    public var marks: [NamedMark]

    public init(samples: [Int16], words: [WordMark] = [], marks: [NamedMark] = []) {
        self.samples = samples
        self.words = words
        self.marks = marks
    }
}

/// An SSML `<mark name="…"/>`: `frame` is where it stands in the utterance's audio.
public struct NamedMark: Sendable, Equatable {
    public var frame: Int
    public var name: String

    public init(frame: Int, name: String) {
        self.frame = frame
        self.name = name
    }
}

public struct VoiceInfo: Sendable, Equatable {
    /// The name to pass back in `SpeechSegment.voice` and in a post's `voice`: eSpeak's own names
    /// ("fr", "en-us"), `piper:` + the model's file name for a Piper voice.
    public var identifier: String
    /// A human name ("French (France)").
    public var name: String
    /// Languages the voice speaks, most preferred first, lower-case BCP 47-like ("fr-fr", "en-us").
    public var languages: [String]
    /// The engine that speaks it (`SpeechEngineName`'s raw values: "espeak-ng", "piper").
    public var engine: String
    /// Piper's quality ("x_low", "low", "medium", "high"); nil for eSpeak's voices.
    public var quality: String?
    /// Why the voice cannot speak (a model that does not load, a language eSpeak cannot
    /// phonemise): listed so that the user sees it, refused when asked for.
    public var problem: String?

    public init(
        identifier: String, name: String, languages: [String], engine: String = SpeechEngineName.espeak.rawValue,
        quality: String? = nil, problem: String? = nil
    ) {
        self.identifier = identifier
        self.name = name
        self.languages = languages
        self.engine = engine
        self.quality = quality
        self.problem = problem
    }
}

/// The engines a11yd speaks with: the names clients see (`voices`, SSIP's `LIST OUTPUT_MODULES`).
public enum SpeechEngineName: String, Sendable, CaseIterable {
    case espeak = "espeak-ng"
    case piper

    /// Every Piper voice's identifier starts so; nothing else's does.
    public static let piperPrefix = "piper:"

    /// The engine an identifier belongs to.
    public init(voice identifier: String) {
        self = identifier.hasPrefix(Self.piperPrefix) ? .piper : .espeak
    }
}

/// What turns a language tag into one of an engine's voices: asked by the speech path and by the
/// pronouncer alike, so declared once.
public protocol VoiceResolving: Sendable {
    /// The voice for a language tag in BCP 47 ("fr", "en-GB") or POSIX ("en_US.UTF-8") form.
    /// Throws `SpeechError` with code `unknown_voice` when nothing fits.
    func resolveVoice(language: String) async throws -> String
}

/// A speech synthesizer. Implementations own whatever threads their library needs; callers may
/// call from any task. Cancelling the task that iterates a synthesis stream aborts it promptly.
public protocol SpeechEngine: VoiceResolving {
    /// The format of every chunk this engine produces.
    var format: AudioFormat { get }

    /// Renders the request. The stream yields chunks as soon as they exist (the first within a
    /// few milliseconds), then finishes; it throws `SpeechError` (`engine_failed`) on failure.
    func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error>

    /// Every installed voice.
    func voices() async -> [VoiceInfo]
}
