// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// Which events a client wants for the messages it sends from now on (`SET self NOTIFICATION`).
public struct SSIPNotifications: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let indexMarks = SSIPNotifications(rawValue: 1 << 0)
    public static let begin = SSIPNotifications(rawValue: 1 << 1)
    public static let end = SSIPNotifications(rawValue: 1 << 2)
    public static let cancel = SSIPNotifications(rawValue: 1 << 3)
    public static let pause = SSIPNotifications(rawValue: 1 << 4)
    public static let resume = SSIPNotifications(rawValue: 1 << 5)
    public static let all: SSIPNotifications = [.indexMarks, .begin, .end, .cancel, .pause, .resume]

    /// speech-dispatcher's names: `index_marks`, `begin`, `end`, `cancel`, `pause`, `resume`, `all`.
    init?(name: String) {
        switch name.lowercased() {
        case "index_marks": self = .indexMarks
        case "begin": self = .begin
        case "end": self = .end
        case "cancel": self = .cancel
        case "pause": self = .pause
        case "resume": self = .resume
        case "all": self = .all
        default: return nil
        }
    }
}

/// A connection's settings, in SSIP's own terms and ranges; turned into a `SpeechRequest` per message.
public struct SSIPSettings: Sendable, Equatable {
    public enum Punctuation: String, Sendable { case all, most, some, none }
    public enum CapitalLetters: String, Sendable { case none, spell, icon }

    public var clientName = "unknown:unknown:unknown"
    /// speech-dispatcher's built-in default; the session sets the configured one.
    public var priority: MessagePriority = .message
    /// nil: the daemon's default voice.
    public var language: String?
    /// The voice chosen by name from `LIST SYNTHESIS_VOICES`.
    public var synthesisVoice: SynthesisVoice?
    /// -100...100, 0 normal (each of them).
    public var rate = 0
    public var pitch = 0
    public var pitchRange = 0
    /// -100...100; 100 is full volume, speech-dispatcher's default.
    public var volume = 100
    public var punctuation: Punctuation = .none
    public var spelling = false
    public var capitalLetters: CapitalLetters = .none
    public var voiceType = "MALE1"
    public var outputModule = SSIPSettings.moduleName
    public var ssml = false
    public var notifications: SSIPNotifications = []
    public var pauseContext = 0

    /// The module a client speaks with until it sets one: eSpeak NG. `LIST OUTPUT_MODULES` adds
    /// `piper` when a Piper voice can speak (`SpeechEngineName`).
    public static let moduleName = SpeechEngineName.espeak.rawValue

    /// SSIP's voice types, in speech-dispatcher's order: what `LIST VOICES` answers and the only
    /// names `SET … VOICE_TYPE` takes (in any case).
    public static let voiceTypes = [
        "MALE1", "MALE2", "MALE3", "FEMALE1", "FEMALE2", "FEMALE3", "CHILD_MALE", "CHILD_FEMALE",
    ]

    public init() {}

    // MARK: - Onto the speech API's scales

    /// 0...1 with 0.5 normal: -100 is the slowest a11yd speaks, 100 the fastest.
    public static func requestRate(_ rate: Int) -> Double { Double(rate + 100) / 200 }
    /// An octave down at -100, up at 100.
    public static func requestPitch(_ pitch: Int) -> PitchShift { PitchShift(octaves: Double(pitch) / 100) }
    /// 0...1: 100 (speech-dispatcher's default) is full volume, -100 silence.
    public static func requestVolume(_ volume: Int) -> Double { Double(volume + 100) / 200 }

    /// The language for the next message: a chosen synthesis voice's, else the set language.
    var requestLanguage: String? { synthesisVoice?.language ?? language }
}

/// A voice as `LIST SYNTHESIS_VOICES` names it, with the language it speaks (nil: unknown name).
public struct SynthesisVoice: Sendable, Equatable {
    public var name: String
    public var language: String?
    /// The voice itself, for a voice that a language cannot name (a Piper voice: the language
    /// alone would be said by eSpeak); nil for eSpeak's, chosen through their language as before.
    public var identifier: String?

    public init(name: String, language: String?, identifier: String? = nil) {
        self.name = name
        self.language = language
        self.identifier = identifier
    }
}

/// A SET that targets other connections (`SET all …`, `SET <id> …`): the front end hands it to them.
public enum SSIPSettingChange: Sendable, Equatable {
    case language(String)
    case synthesisVoice(name: String, language: String?, identifier: String? = nil)
    case rate(Int)
    case pitch(Int)
    case pitchRange(Int)
    case volume(Int)
    case punctuation(SSIPSettings.Punctuation)
    case spelling(Bool)
    case capitalLetters(SSIPSettings.CapitalLetters)
    case voiceType(String)
    case outputModule(String)
    case pauseContext(Int)
    case ssmlMode(Bool)

    func apply(to settings: inout SSIPSettings) {
        switch self {
        case .language(let language):
            // A language overrides a voice chosen by name (the manual's rule).
            settings.language = language
            settings.synthesisVoice = nil
        case .synthesisVoice(let name, let language, let identifier):
            settings.synthesisVoice = SynthesisVoice(name: name, language: language, identifier: identifier)
        case .rate(let value): settings.rate = value
        case .pitch(let value): settings.pitch = value
        case .pitchRange(let value): settings.pitchRange = value
        case .volume(let value): settings.volume = value
        case .punctuation(let value): settings.punctuation = value
        case .spelling(let value): settings.spelling = value
        case .capitalLetters(let value): settings.capitalLetters = value
        case .voiceType(let value): settings.voiceType = value
        case .outputModule(let value): settings.outputModule = value
        case .pauseContext(let value): settings.pauseContext = value
        case .ssmlMode(let value): settings.ssml = value
        }
    }

    /// What speech-dispatcher answers when the change took, and when it did not (an unknown id).
    var replies: (success: SSIPReply, failure: SSIPReply) {
        switch self {
        case .language: (.languageSet, .couldNotSetLanguage)
        case .synthesisVoice, .voiceType: (.voiceSet, .couldNotSetVoice)
        case .rate: (.rateSet, .couldNotSetRate)
        case .pitch: (.pitchSet, .couldNotSetPitch)
        case .pitchRange: (.pitchRangeSet, .couldNotSetPitchRange)
        case .volume: (.volumeSet, .couldNotSetVolume)
        case .punctuation: (.punctuationSet, .couldNotSetPunctuation)
        case .spelling: (.spellingSet, .couldNotSetSpelling)
        case .capitalLetters: (.capitalLettersSet, .couldNotSetCapitalLetters)
        case .outputModule: (.outputModuleSet, .couldNotSetOutputModule)
        case .pauseContext: (.pauseContextSet, .couldNotSetPauseContext)
        case .ssmlMode: (.ssmlModeSet, .couldNotSetSSMLMode)
        }
    }
}
