// SPDX-License-Identifier: GPL-3.0-or-later
/// An error of the speech API, with a stable, machine-readable code and a sentence for people.
///
/// The set of codes is closed (as `ServiceGroupError`'s) and names only what the speech API can
/// refuse: each front end turns a code into its own wire form (the JSON protocol's `error.code`,
/// an SSIP reply), and errors of a wire itself (a line that is not JSON, too long) are the front
/// end's own.
public struct SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case invalidRequest, unknownVoice, invalidIPA, invalidSSML, engineFailed, engineUnavailable, audioUnavailable
            case shuttingDown, lexiconFile, `internal`
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The request makes no sense: a field missing or out of range, nothing to say.
        public static let invalidRequest = Code(.invalidRequest)
        /// No installed voice speaks the requested language.
        public static let unknownVoice = Code(.unknownVoice)
        /// An IPA string holds a symbol the voice cannot say.
        public static let invalidIPA = Code(.invalidIPA)
        /// SSML that is not well formed or uses what we refuse.
        public static let invalidSSML = Code(.invalidSSML)
        /// The synthesizer failed.
        public static let engineFailed = Code(.engineFailed)
        /// The synthesizer cannot run at all for now (no process of it can start), whatever is asked:
        /// not the request's fault, and never said of a request that made it fail.
        public static let engineUnavailable = Code(.engineUnavailable)
        /// The sound server could not be reached.
        public static let audioUnavailable = Code(.audioUnavailable)
        /// The daemon is shutting down and takes nothing new.
        public static let shuttingDown = Code(.shuttingDown)
        /// The user's lexicon file cannot be read or written (nothing changed).
        public static let lexiconFile = Code(.lexiconFile)
        /// Something that should not happen; a bug.
        public static let `internal` = Code(.internal)

        /// Every code, for front ends that map each to their wire form and check they missed none.
        public static let all: [Code] = [
            .invalidRequest, .unknownVoice, .invalidIPA, .invalidSSML, .engineFailed, .engineUnavailable, .audioUnavailable,
            .shuttingDown, .lexiconFile, .internal,
        ]

        public var description: String { "\(value)" }
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

    public static func invalidRequest(_ message: String) -> SpeechError { SpeechError(.invalidRequest, message) }
    public static func unknownVoice(_ message: String) -> SpeechError { SpeechError(.unknownVoice, message) }
    public static func invalidIPA(_ message: String) -> SpeechError { SpeechError(.invalidIPA, message) }
    public static func invalidSSML(_ message: String) -> SpeechError { SpeechError(.invalidSSML, message) }
    public static func engineFailed(_ message: String) -> SpeechError { SpeechError(.engineFailed, message) }
    public static func engineUnavailable(_ message: String) -> SpeechError { SpeechError(.engineUnavailable, message) }
    public static func audioUnavailable(_ message: String) -> SpeechError { SpeechError(.audioUnavailable, message) }
    public static func shuttingDown(_ message: String) -> SpeechError { SpeechError(.shuttingDown, message) }
    public static func `internal`(_ message: String) -> SpeechError { SpeechError(.internal, message) }

    public var description: String { "\(code): \(message)" }
}
