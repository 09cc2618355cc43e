/// An error of the speech API, with a stable, machine-readable code and a sentence for people.
///
/// The set of codes is closed: front ends turn them into their own wire form (the JSON protocol
/// sends `code` unchanged, so codes are part of it: add new ones, never rename).
public struct SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The line was not JSON, or not an object.
        case badJSON = "bad_json"
        /// A field is missing, has the wrong type or an out-of-range value.
        case invalidRequest = "invalid_request"
        /// `op` names no known operation.
        case unknownOperation = "unknown_op"
        /// No installed voice speaks the requested language.
        case unknownVoice = "unknown_voice"
        /// An IPA string holds a symbol the voice cannot say.
        case invalidIPA = "invalid_ipa"
        /// SSML that is not well formed or uses what we refuse.
        case invalidSSML = "invalid_ssml"
        /// The synthesizer failed.
        case engineFailed = "engine_failed"
        /// The sound server could not be reached.
        case audioUnavailable = "audio_unavailable"
        /// A line longer than the daemon accepts.
        case lineTooLong = "line_too_long"
        /// The daemon is shutting down and takes nothing new.
        case shuttingDown = "shutting_down"
        /// Something that should not happen; a bug.
        case `internal` = "internal"

        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
