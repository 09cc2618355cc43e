/// An error with a stable, machine-readable code and a sentence for people.
///
/// Codes travel over the wire unchanged (`error.code` in protocol replies), so they are
/// part of the protocol: add new ones, never rename.
public struct SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The line was not JSON, or not an object.
        public static let badJSON = Code(rawValue: "bad_json")
        /// A field is missing, has the wrong type or an out-of-range value.
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// `op` names no known operation.
        public static let unknownOperation = Code(rawValue: "unknown_op")
        /// No installed voice speaks the requested language.
        public static let unknownVoice = Code(rawValue: "unknown_voice")
        /// An IPA string holds a symbol the voice cannot say.
        public static let invalidIPA = Code(rawValue: "invalid_ipa")
        /// SSML that is not well formed or uses what we refuse.
        public static let invalidSSML = Code(rawValue: "invalid_ssml")
        /// The synthesizer failed.
        public static let engineFailed = Code(rawValue: "engine_failed")
        /// The sound server could not be reached.
        public static let audioUnavailable = Code(rawValue: "audio_unavailable")
        /// A line longer than the daemon accepts.
        public static let lineTooLong = Code(rawValue: "line_too_long")
        /// Something that should not happen; a bug.
        public static let `internal` = Code(rawValue: "internal")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
