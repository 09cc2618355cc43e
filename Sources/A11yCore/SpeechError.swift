/// An error of the speech API, with a stable, machine-readable code and a sentence for people.
///
/// The set of codes is closed (as `ServiceGroupError`'s): front ends turn them into their own wire
/// form. The JSON protocol sends `code.wireName`, so those names are part of it: add new ones, never
/// rename.
public struct SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case badJSON = "bad_json"
            case badUTF8 = "bad_utf8"
            case invalidRequest = "invalid_request"
            case unknownOperation = "unknown_op"
            case unknownVoice = "unknown_voice"
            case invalidIPA = "invalid_ipa"
            case invalidSSML = "invalid_ssml"
            case engineFailed = "engine_failed"
            case audioUnavailable = "audio_unavailable"
            case lineTooLong = "line_too_long"
            case shuttingDown = "shutting_down"
            case lexiconFile = "lexicon_file"
            case `internal` = "internal"
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The line was not JSON, or not an object.
        public static let badJSON = Code(.badJSON)
        /// The line is not valid UTF-8.
        public static let badUTF8 = Code(.badUTF8)
        /// A field is missing, has the wrong type or an out-of-range value.
        public static let invalidRequest = Code(.invalidRequest)
        /// `op` names no known operation.
        public static let unknownOperation = Code(.unknownOperation)
        /// No installed voice speaks the requested language.
        public static let unknownVoice = Code(.unknownVoice)
        /// An IPA string holds a symbol the voice cannot say.
        public static let invalidIPA = Code(.invalidIPA)
        /// SSML that is not well formed or uses what we refuse.
        public static let invalidSSML = Code(.invalidSSML)
        /// The synthesizer failed.
        public static let engineFailed = Code(.engineFailed)
        /// The sound server could not be reached.
        public static let audioUnavailable = Code(.audioUnavailable)
        /// A line longer than the daemon accepts.
        public static let lineTooLong = Code(.lineTooLong)
        /// The daemon is shutting down and takes nothing new.
        public static let shuttingDown = Code(.shuttingDown)
        /// The user's lexicon file cannot be read or written (nothing changed).
        public static let lexiconFile = Code(.lexiconFile)
        /// Something that should not happen; a bug.
        public static let `internal` = Code(.internal)

        /// The name the JSON protocol sends (`error.code`).
        public var wireName: String { value.rawValue }
        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `error` itself when it is a speech error, else an `internal` one that names it: what a front
    /// end tells its client when the speech API fails.
    public init(wrapping error: any Error) {
        self = (error as? SpeechError) ?? SpeechError(.internal, "\(error)")
    }

    public static func badJSON(_ message: String) -> SpeechError { SpeechError(.badJSON, message) }
    public static func badUTF8(_ message: String) -> SpeechError { SpeechError(.badUTF8, message) }
    public static func invalidRequest(_ message: String) -> SpeechError { SpeechError(.invalidRequest, message) }
    public static func unknownOperation(_ message: String) -> SpeechError { SpeechError(.unknownOperation, message) }
    public static func unknownVoice(_ message: String) -> SpeechError { SpeechError(.unknownVoice, message) }
    public static func invalidIPA(_ message: String) -> SpeechError { SpeechError(.invalidIPA, message) }
    public static func invalidSSML(_ message: String) -> SpeechError { SpeechError(.invalidSSML, message) }
    public static func engineFailed(_ message: String) -> SpeechError { SpeechError(.engineFailed, message) }
    public static func audioUnavailable(_ message: String) -> SpeechError { SpeechError(.audioUnavailable, message) }
    public static func lineTooLong(_ message: String) -> SpeechError { SpeechError(.lineTooLong, message) }
    public static func shuttingDown(_ message: String) -> SpeechError { SpeechError(.shuttingDown, message) }
    public static func `internal`(_ message: String) -> SpeechError { SpeechError(.internal, message) }

    public var description: String { "\(code): \(message)" }
}
