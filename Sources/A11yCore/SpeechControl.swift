// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// The one narrow speech API. Every front end (JSON Lines, SSIP) reaches speech through this and
/// nothing else; the speech side knows nothing of sockets, framing or wire formats. Its values are
/// never `Codable` and their cases carry no JSON names: A11yProtocol's `CoreTypes+Wire.swift` spells
/// them, and A11ySSIP spells `MessagePriority`.
///
/// A front end owns its connections and routes events itself: it gives each connection a
/// `ClientID`, posts in that client's name, and reads `events()` to tell each client about its own
/// utterances (and subscribers about everything).
public protocol SpeechControl: Sendable {
    /// Plans the request (voice, element, spans, SSML) into an item of `client`'s, with its own id,
    /// without queueing it: the front end replies with the id before any event of the item can exist.
    /// The client is the item's `owner` from here on, the one record of who posted what: every event
    /// of the item names it. Throws `SpeechError` when it cannot be said.
    func prepare(_ request: SpeechRequest, for client: ClientID) async throws -> SpeechItem
    /// Queues prepared items in one step (so that, for instance, two page scrolls sent together
    /// always coalesce the same way). Each item's life is then told on `events()`, ending with
    /// exactly one `finished`. Returns false, queueing nothing, once speech has shut down: the front
    /// end then tells its client itself.
    func post(_ items: [SpeechItem]) async -> Bool

    /// Returns whether the pause took effect (false when nothing in scope was speaking).
    func pause(_ scope: ControlScope, at boundary: PauseBoundary) async -> Bool
    /// Returns whether anything was paused.
    func resume(_ scope: ControlScope) async -> Bool
    /// Ends what is speaking and waiting in scope, each with `finished` `stopped`.
    func stop(_ scope: ControlScope) async -> Bool
    /// The client's connection is gone. Its own pause (`pause(.client)`) ends with it, and what that
    /// pause held ends, `stopped`, so that nothing waits on it; its other items are still spoken.
    func clientLeft(_ client: ClientID) async

    func status() async -> SpeechStatus
    func voices() async -> [VoiceInfo]

    /// The IPA the engine will pronounce for the request, without speaking it.
    func pronounce(_ request: SpeechRequest) async throws -> String
    /// The request's audio, as it would be played (earcon excluded), without playing it.
    func render(_ request: SpeechRequest) async throws -> RenderedAudio

    /// Adds to, removes from or lists the user's pronunciation lexicon (docs/pronunciation.md). A
    /// change takes effect from the next utterance, whoever posts it, and is written to the user's
    /// lexicon file. Returns the entries added, removed or in force.
    func lexicon(_ change: LexiconChange) async throws -> [LexiconListing]

    /// Every event of every utterance, with the client that posted it, in order, from now until
    /// speech shuts down; the stream ends after the last `finished`. Each call returns a stream of
    /// its own (one per front end).
    func events() -> AsyncStream<ClientEvent>
}

/// What to do to the user's lexicon.
public enum LexiconChange: Sendable, Equatable {
    /// Adds or replaces an entry; refused (`invalid_ipa`) when the voice cannot say its IPA.
    case add(LexiconEntry)
    /// Removes a grapheme's entry for exactly this language (nil: the entry for every voice).
    case remove(grapheme: String, language: String?)
    case list
}

/// A lexicon entry and the file it comes from.
public struct LexiconListing: Sendable, Equatable {
    public var entry: LexiconEntry
    public var source: String

    public init(entry: LexiconEntry, source: String) {
        self.entry = entry
        self.source = source
    }
}

/// Who asked: one connection of one front end. Unique across front ends for the daemon's life.
public struct ClientID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    private static let counter = Atomic<UInt64>(1)

    /// A fresh id, never handed out before in this process.
    public static func next() -> ClientID {
        ClientID(rawValue: counter.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    public static func < (lhs: ClientID, rhs: ClientID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// Which utterances a control applies to.
public enum ControlScope: Sendable, Hashable {
    /// Everything, whoever posted it (the JSON protocol's `pause`, `resume` and `stop`).
    case all
    /// Only what this client posted (SSIP's `self` and `<id>`).
    case client(ClientID)
}

/// What a client asks to say, before planning.
public struct SpeechRequest: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        /// Plain text, with optional spans (IPA, language, spell-out, punctuation) over it.
        case text(String, spans: [SpeechSpan] = [])
        /// A safe SSML subset, translated by a11yd (never passed raw to the engine).
        case ssml(String)
        /// A UI element, spoken as VoiceOver speaks it.
        case element(AccessibilityElement)
    }

    public var content: Content
    public var kind: NotificationKind
    /// Which rules order the item on the queue, and where it waits: VoiceOver's for the JSON
    /// protocol, speech-dispatcher's for SSIP.
    public var urgency: Urgency
    /// BCP 47 or POSIX; nil: the configured voice, else the locale.
    public var language: String?
    /// A voice by identifier (`VoiceInfo.identifier`: "fr", "piper:en_US-joe-medium"): says the
    /// item's own text, before the language's voice. Spans in another language keep theirs.
    public var voice: String?
    /// 0...1, 0.5 is the normal rate (AVSpeechUtterance.rate); nil: the configured rate.
    public var rate: Double?
    /// Against the voice's normal pitch; nil: the configured pitch.
    public var pitch: PitchShift?
    /// 0...1, 1 is full volume; nil: the configured volume.
    public var volume: Double?

    /// `urgency` nil: the kind's (`Urgency.default(for:)`).
    public init(
        _ content: Content, kind: NotificationKind = .announcement, urgency: Urgency? = nil,
        language: String? = nil, rate: Double? = nil, pitch: PitchShift? = nil, volume: Double? = nil, voice: String? = nil
    ) {
        self.content = content
        self.voice = voice
        self.kind = kind
        self.urgency = urgency ?? .default(for: kind)
        self.language = language
        self.rate = rate
        self.pitch = pitch
        self.volume = volume
    }
}

/// What `status` reports: the queue's state, what speaks and what waits, and where the sound
/// server stands (nil where no output was asked: the queue alone).
public struct SpeechStatus: Sendable, Equatable {
    public var state: SpeechQueue.State
    public var current: SpeechItem?
    public var pending: [SpeechItem]
    public var audio: SoundServerStatus?

    public init(state: SpeechQueue.State, current: SpeechItem?, pending: [SpeechItem], audio: SoundServerStatus? = nil) {
        self.state = state
        self.current = current
        self.pending = pending
        self.audio = audio
    }
}

/// An utterance's audio, rendered instead of played.
public struct RenderedAudio: Sendable, Equatable {
    public var format: AudioFormat
    public var samples: [Int16]

    public init(format: AudioFormat, samples: [Int16]) {
        self.format = format
        self.samples = samples
    }
}

/// How far from its voice's normal pitch an item is said, in octaves (-1...1: an octave down to an
/// octave up). Each front end converts its own scale once (the JSON protocol's AVSpeechUtterance
/// multiplier 0.5...2 is its base-2 logarithm, SSIP's -100...100 its hundredth) and the daemon maps
/// it onto the engine's scale around the configured pitch: no scale goes through another.
public struct PitchShift: Sendable, Equatable {
    /// -1...1, 0 is the voice's normal pitch; clamped.
    public let octaves: Double

    public init(octaves: Double) {
        self.octaves = octaves.isNaN ? 0 : min(1, max(-1, octaves))
    }

    public static let normal = PitchShift(octaves: 0)
}
