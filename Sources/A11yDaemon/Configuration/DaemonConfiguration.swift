// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// Everything a11yd can be told in its TOML file, with the defaults it runs with when told
/// nothing. Its keys are `keys` (DaemonConfiguration+Keys.swift), from which config/a11yd.toml,
/// which documents every key, is written (`documentedFile`).
public struct DaemonConfiguration: Sendable, Equatable {
    public struct Voice: Sendable, Equatable {
        /// BCP 47 or POSIX tag; nil means the user's locale (`LANG`), as VoiceOver uses the system language.
        public var language: String? = nil
        /// Words per minute at `rate: 0.5`.
        public var rate: Int = 175
        /// Words per minute at the top of the scale (`rate: 1.0`, SSIP `RATE 100`), for every engine:
        /// eSpeak past 450 by its own speed-up, the natural voice by its time-stretch.
        public var topRate: Int = 450
        /// eSpeak pitch at `pitch: 1.0` (0...100).
        public var pitch: Int = 50
        /// eSpeak volume at `volume: 1.0` (0...200). 200, as loud as speech-dispatcher's espeak-ng
        /// module at its default volume; above 100 the engine limits instead of clipping.
        public var volume: Int = 200
    }

    public var voice = Voice()
    /// The languages the user reads (`[voice] detect_languages`, BCP 47 tags): each sentence of a
    /// text is said in the one it is clearly in. Empty: no detection, every text in its own language.
    public var detectLanguages: [String] = []
    /// The voice for a language, before eSpeak's own choice (`[voices]`: `en = "piper:en_US-joe-medium"`),
    /// in the file's order.
    public var voices: [LanguageVoice] = []
    /// A language tag and the voice identifier that says it.
    public struct LanguageVoice: Sendable, Equatable {
        public var language: String
        public var voice: String
        public init(language: String, voice: String) {
            self.language = language
            self.voice = voice
        }
    }
    /// Seconds the Piper worker may sit idle before it is ended and its memory (~150-400 MB) goes
    /// back; the next Piper item starts it again (about a second). 0 keeps it for good.
    public var piperIdleSeconds: Int = 300
    /// Most bytes the waiting items may hold (`SpeechItem.queueCost`); beyond it the
    /// lowest-priority oldest are dropped.
    public var queueMaxBytes: Int = SpeechQueue.defaultPendingByteLimit
    /// Play the screen-change earcon before `screenChanged` items.
    public var earcon: Bool = true
    /// PulseAudio server; nil means libpulse's default (which honours `PULSE_SERVER`).
    public var audioServer: String? = nil
    /// When a11yd lowers the other streams on its sink.
    public enum Duck: String, Sendable, Equatable, CaseIterable {
        /// Never.
        case off
        /// While an utterance is audible.
        case speaking
    }
    public var duck: Duck = .off
    /// How far other streams are lowered while ducked, in dB.
    public var duckDecibels: Int = 12
    /// Socket path; nil means `$A11YD_SOCKET`, else `$XDG_RUNTIME_DIR/a11yd/socket`.
    public var socketPath: String? = nil
    /// Whether `a11ysay` may start the daemon when nothing listens (see docs/service.md).
    public var autospawn: Bool = true
    /// Exit after this many seconds with no client and nothing to say; 0 never exits.
    public var idleExitSeconds: Int = 0
    /// Serve speech-dispatcher's protocol (SSIP) too, for Orca, spd-say and every libspeechd client.
    public var ssipEnabled: Bool = true
    /// The SSIP socket; nil means `$XDG_RUNTIME_DIR/speech-dispatcher/speechd.sock`.
    public var ssipSocketPath: String? = nil
    /// The priority of an SSIP client's messages until it sets one: speech-dispatcher's `message`.
    public var ssipDefaultPriority: MessagePriority = .message
    /// Users besides the daemon's own (and root) whose clients are served; everyone else is refused.
    public var allowedUIDs: [UInt32] = []

    public init() {}

    /// The configuration as a list of `key = value` lines, for logging what a reload changed: every
    /// key of `keys` that is applied, in its order.
    public var settings: [(key: String, value: String)] {
        Self.keys.compactMap { key in key.shown.map { (key.dottedName, $0(self)) } }
    }

    /// The keys whose values differ.
    public func changes(from old: DaemonConfiguration) -> [Change] {
        Self.keys.compactMap { key in
            guard let shown = key.shown else { return nil }
            let before = shown(old), after = shown(self)
            return before == after ? nil : Change(key: key.dottedName, old: before, new: after, takesEffect: key.takesEffect)
        }
    }

    /// One key that a reload changed.
    public struct Change: Sendable, Equatable, CustomStringConvertible {
        public var key: String
        public var old: String
        public var new: String
        /// The key's row says: voice settings apply to the next utterance, the idle exit and
        /// autospawn at once; the rest (queue, earcon, audio server, sockets) is read once at start.
        public var takesEffect: TakesEffect

        public var takesEffectAtOnce: Bool { takesEffect == .onReload }

        public var description: String { "\(key): \(old) -> \(new)" }
    }
}

/// A configuration file that could not be used, with where and why.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        private enum Value: Hashable, Sendable { case unreadable, malformed, unknownName, invalidValue }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Missing (when it must exist) or not UTF-8 text.
        public static let unreadable = Code(.unreadable)
        /// Not TOML.
        public static let malformed = Code(.malformed)
        /// A section or key a11yd does not know.
        public static let unknownName = Code(.unknownName)
        /// A value of the wrong type or out of range.
        public static let invalidValue = Code(.invalidValue)
    }

    public let code: Code
    public let path: String
    public let message: String

    private init(_ code: Code, path: String, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    public static func unreadable(path: String, _ message: String) -> Self { Self(.unreadable, path: path, message: message) }
    public static func malformed(path: String, _ message: String) -> Self { Self(.malformed, path: path, message: message) }
    public static func unknownName(path: String, _ message: String) -> Self { Self(.unknownName, path: path, message: message) }
    public static func invalidValue(path: String, _ message: String) -> Self { Self(.invalidValue, path: path, message: message) }

    public var description: String { "\(path): \(message)" }
}
