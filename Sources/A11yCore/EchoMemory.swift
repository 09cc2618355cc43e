// SPDX-License-Identifier: GPL-3.0-or-later
import OrderedCollections

/// The characters a screen reader echoes, said ahead in a voice slow to say them (the natural voice
/// takes tens of milliseconds for a letter; eSpeak two): each is rendered once its voice is used at a
/// rate, pitch and volume, off the hot path, so that a key's echo sounds as soon as eSpeak's would,
/// the first time.
///
/// An echo is an utterance that says one character and nothing else, whatever its form: a typed
/// letter (`SPEAK` of "a ", an SSML mark before it), a character read (`CHAR a`, spelled), a post of
/// "7". It is kept by what decides its sound (`Settings`, `Form`), not by the whole utterance, and
/// told back with the words and marks of the utterance asked for. Bounded by `Limits.bytes`: the
/// settings used least recently go first, whole.
public struct EchoMemory: Sendable {
    /// What an echo's sound depends on besides its character.
    public struct Settings: Sendable, Hashable {
        public var voice: String
        public var rate: Int
        public var pitch: Int
        public var volume: Int

        public init(voice: String, rate: Int, pitch: Int, volume: Int) {
            self.voice = voice
            self.rate = rate
            self.pitch = pitch
            self.volume = volume
        }
    }

    /// One character, said as text or spelled, with punctuation by name or not.
    public struct Form: Sendable, Hashable {
        public var character: Character
        public var spellOut: Bool
        public var punctuation: Bool

        public init(character: Character, spellOut: Bool, punctuation: Bool = false) {
            self.character = character
            self.spellOut = spellOut
            self.punctuation = punctuation
        }
    }

    /// An utterance found to be an echo: what it says, where its character stands in the client's
    /// text, and the marks before it.
    public struct Echo: Sendable, Equatable {
        public var settings: Settings
        public var form: Form
        public var characterStart: Int
        public var marks: [String]

        public init(settings: Settings, form: Form, characterStart: Int, marks: [String]) {
            self.settings = settings
            self.form = form
            self.characterStart = characterStart
            self.marks = marks
        }
    }

    public struct Limits: Sendable, Equatable {
        public var bytes: Int

        public init(bytes: Int) { self.bytes = bytes }

        /// 4 MiB: every form of `characters` at one setting and much of the next (docs/memory.md says
        /// what one setting took).
        public static let standard = Limits(bytes: 4 << 20)
    }

    /// What a screen reader echoes one by one: letters of both cases, digits, and the ASCII
    /// punctuation and symbols, each said as text (a typed key) and spelled (a character read).
    public static let characters: [Character] = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"()[]{}<>/\\-_+=*&^%$#@~|`")

    /// Every form rendered for one setting, in the order they are rendered: the lower-case letters
    /// first, as typed then as read (what a screen reader echoes most), then the rest.
    public static let forms: [Form] = {
        let all = [false, true].flatMap { spellOut in characters.map { Form(character: $0, spellOut: spellOut) } }
        let letters = all.filter { $0.character.isLowercase }
        return letters + all.filter { !$0.character.isLowercase }
    }()

    /// How many of `forms` are the lower-case letters, which come first.
    public static let lowerCaseForms = forms.prefix { $0.character.isLowercase }.count

    /// One form to render, at the settings it is rendered at.
    public struct Step: Sendable, Equatable {
        public var form: Form
        public var settings: Settings

        public init(form: Form, settings: Settings) {
            self.form = form
            self.settings = settings
        }
    }

    public let limits: Limits
    /// Least recently used first.
    private var kept: OrderedDictionary<Settings, Rendered> = [:]
    public private(set) var bytes = 0
    /// Per voice, the settings its echoes other than capitals were asked at last, and the pitch its
    /// capitals were asked at when that differs (a screen reader that signals a capital by pitch, as
    /// Orca does): capitals are rendered at that pitch beside the other echoes, whatever their rate.
    private var plainSettings: [String: Settings] = [:]
    private var capitalPitch: [String: Int] = [:]
    /// The settings rendered for last.
    private var lastRendered: Settings?

    public init(limits: Limits) {
        self.limits = limits
    }

    /// The echo `utterance` is, when it is one in a voice `isSlow` says needs echoes said ahead: every
    /// segment in that voice at the utterance's own rate, pitch and volume, with no pause, and one
    /// character in all their text (around it only white space). Nil for anything else.
    public static func echo(of utterance: Utterance, isSlow: (String) -> Bool) -> Echo? {
        guard let voice = utterance.segments.first?.voice, isSlow(voice) else { return nil }
        var found: (character: Character, start: Int, spellOut: Bool, punctuation: Bool)?
        var marks: [String] = []
        for segment in utterance.segments {
            let options = segment.options
            guard segment.voice == voice, options.rateScale == 1, options.pitchScale == 1, options.volumeScale == 1,
                options.pauseBeforeMilliseconds == 0, case .text(let text) = segment.content
            else { return nil }
            // A short text only: a post of megabytes is not walked.
            guard text.utf8.count <= 64 else { return nil }
            if let mark = options.markBefore {
                guard found == nil else { return nil }
                marks.append(mark)
            }
            var offset = 0
            for character in text {
                defer { offset += character.unicodeScalars.count }
                if character.isWhitespace { continue }
                guard found == nil else { return nil }
                found = (character, segment.sourceStart + offset, options.spellOut, options.punctuation)
            }
        }
        guard let found else { return nil }
        return Echo(
            settings: Settings(voice: voice, rate: utterance.rate, pitch: utterance.pitch, volume: utterance.volume),
            form: Form(character: found.character, spellOut: found.spellOut, punctuation: found.punctuation),
            characterStart: found.start, marks: marks)
    }

    /// The utterance rendered for `form` at `settings`: the character alone, at the start of its text.
    public static func utterance(_ form: Form, _ settings: Settings) -> Utterance {
        var options = SpeechSegment.Options()
        options.spellOut = form.spellOut
        options.punctuation = form.punctuation
        let text = String(form.character)
        let segment = SpeechSegment(
            content: .text(text), voice: settings.voice, sourceStart: 0, sourceLength: text.unicodeScalars.count, options: options)
        return Utterance(text: text, segments: [segment], rate: settings.rate, pitch: settings.pitch, volume: settings.volume)
    }

    /// One settings' forms as rendered so far, and those that could not be.
    private struct Rendered: Sendable {
        var chunks: [Form: [SynthesisChunk]] = [:]
        var passedOver: Set<Form> = []

        func has(_ form: Form) -> Bool { chunks[form] != nil || passedOver.contains(form) }
    }

    /// The settings whose echoes to render once `settings` are used, by `echo` when the utterance is
    /// one: `settings` themselves, but for a capital asked at another pitch than the voice's other
    /// echoes at the same rate and volume. That pitch is then the one its capitals are rendered at,
    /// and the other echoes' settings are returned, their rendering going on with those capitals.
    public mutating func settingsToRender(_ settings: Settings, echo: Echo?) -> Settings {
        if let echo, echo.form.character.isUppercase, let plain = plainSettings[settings.voice],
            plain.rate == settings.rate, plain.volume == settings.volume, plain.pitch != settings.pitch
        {
            capitalPitch[settings.voice] = settings.pitch
            return plain
        }
        plainSettings[settings.voice] = settings
        return settings
    }

    /// What rendering for `settings` means, in order: the lower-case letters, then the capitals at
    /// the pitch the voice's capitals are asked at when that is another, then the rest of `forms`.
    public func steps(for settings: Settings) -> [Step] {
        let lower = Self.forms.prefix(Self.lowerCaseForms).map { Step(form: $0, settings: settings) }
        let rest = Self.forms.dropFirst(Self.lowerCaseForms).map { Step(form: $0, settings: settings) }
        guard let capitals = capitalSettings(for: settings) else { return lower + rest }
        return lower + Self.forms.filter(\.character.isUppercase).map { Step(form: $0, settings: capitals) } + rest
    }

    /// The settings capitals are rendered at beside `settings`, when their pitch is another.
    private func capitalSettings(for settings: Settings) -> Settings? {
        guard let pitch = capitalPitch[settings.voice], pitch != settings.pitch else { return nil }
        var capitals = settings
        capitals.pitch = pitch
        return capitals
    }

    /// What to render next for `settings` (now the most recently used, with the step's own); nil once
    /// every step was rendered or passed over.
    public mutating func nextToRender(for settings: Settings) -> Step? {
        _ = touch(settings)
        lastRendered = settings
        guard let step = steps(for: settings).first(where: { !(kept[$0.settings]?.has($0.form) ?? false) }) else { return nil }
        _ = touch(step.settings)
        return step
    }

    /// How many of the steps for the settings rendered for last are done, in order (each one kept
    /// or passed over, up to the first that is not).
    public var renderedInOrder: Int {
        guard let settings = lastRendered else { return 0 }
        return steps(for: settings).prefix { kept[$0.settings]?.has($0.form) ?? false }.count
    }

    /// The bytes of audio kept for the steps of `settings` (with their capitals at a pitch of their own).
    public func bytes(for settings: Settings) -> Int {
        [settings, capitalSettings(for: settings)].compactMap { $0 }
            .reduce(0) { sum, each in sum + (kept[each]?.chunks.values.reduce(0) { $0 + $1.sampleBytes } ?? 0) }
    }

    /// `form` cannot be rendered at `settings` (the engine failed on it): the next one is.
    public mutating func passOver(_ form: Form, at settings: Settings) {
        var rendered = touch(settings)
        rendered.passedOver.insert(form)
        kept[settings] = rendered
    }

    /// The echo's audio, told as the utterance asked for it: its word at the character's place, its
    /// marks at the first frame. Nil when not rendered yet.
    public mutating func recall(_ echo: Echo) -> [SynthesisChunk]? {
        guard let rendered = touch(echo.settings).chunks[echo.form] else { return nil }
        var chunks = rendered.map { chunk -> SynthesisChunk in
            var told = chunk
            told.words = chunk.words.map { WordMark(frame: $0.frame, start: $0.start + echo.characterStart, length: $0.length) }
            told.marks = []
            return told
        }
        if !echo.marks.isEmpty {
            let marks = echo.marks.map { NamedMark(frame: 0, name: $0) }
            if chunks.isEmpty { chunks = [SynthesisChunk(samples: [], marks: marks)] } else { chunks[0].marks = marks + chunks[0].marks }
        }
        return chunks
    }

    /// Keeps what the engine said for `form` at `settings`, and moves on to the next form. The
    /// settings used least recently go, whole, to stay within `limits` (never those being rendered);
    /// a form that does not fit even then is passed over.
    public mutating func remember(_ chunks: [SynthesisChunk], for form: Form, at settings: Settings) {
        var rendered = kept.removeValue(forKey: settings) ?? Rendered()
        rendered.passedOver.insert(form)
        let size = chunks.sampleBytes
        if let old = rendered.chunks.removeValue(forKey: form) { bytes -= old.sampleBytes }
        // What is being rendered is never dropped for its own next form: that would render it again.
        let rendering = [lastRendered, lastRendered.flatMap(capitalSettings(for:))]
        while bytes + size > limits.bytes, let oldest = kept.keys.first(where: { !rendering.contains($0) }),
            let gone = kept.removeValue(forKey: oldest)
        {
            bytes -= gone.chunks.values.reduce(0) { $0 + $1.sampleBytes }
        }
        if bytes + size <= limits.bytes {
            rendered.passedOver.remove(form)
            rendered.chunks[form] = chunks
            bytes += size
        }
        kept[settings] = rendered
    }

    /// Drops every echo's audio (a voice's model may have changed under its name); what was learnt of
    /// the client's capitals stays.
    public mutating func forgetAll() {
        kept.removeAll()
        bytes = 0
    }

    /// What is kept for `settings`, which become the most recently used.
    private mutating func touch(_ settings: Settings) -> Rendered {
        let rendered = kept.removeValue(forKey: settings) ?? Rendered()
        kept[settings] = rendered
        return rendered
    }
}
