// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// An error that chooses its own form on the wire (as hummingbird's `HTTPResponseError` chooses its
/// response): the front end replies `{"ok":false,"error":{"code":…,"message":…}}` with what it says,
/// and any other error is an `internal` one.
public protocol WireErrorConvertible: Error {
    var wireError: ServerMessage.WireError { get }
}

extension ServerMessage.WireError: WireErrorConvertible {
    public var wireError: ServerMessage.WireError { self }
}

/// A line the JSON protocol itself refuses, before the speech API sees anything.
public struct ProtocolError: WireErrorConvertible, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        /// The name the protocol sends (docs/protocol.md).
        public let name: String
        private init(_ name: String) { self.name = name }

        /// The line is not JSON, or not an object.
        public static let badJSON = Code("bad_json")
        /// The line is not valid UTF-8.
        public static let badUTF8 = Code("bad_utf8")
        /// `op` names no known operation.
        public static let unknownOperation = Code("unknown_op")
        /// A field is missing or has the wrong type.
        public static let invalidRequest = Code("invalid_request")
        /// A line longer than the daemon reads.
        public static let lineTooLong = Code("line_too_long")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var wireError: ServerMessage.WireError { .init(code: code.name, message: message) }
    public var description: String { "\(message) (\(code.name))" }
}

extension SpeechError: WireErrorConvertible {
    public var wireError: ServerMessage.WireError { .init(code: Self.wireName(of: code), message: message) }

    /// The name the JSON protocol sends for each of the speech API's codes: part of the protocol
    /// (docs/protocol.md), so add new ones, never rename.
    public static func wireName(of code: Code) -> String {
        switch code {
        case .invalidRequest: "invalid_request"
        case .unknownVoice: "unknown_voice"
        case .invalidIPA: "invalid_ipa"
        case .invalidSSML: "invalid_ssml"
        case .engineFailed: "engine_failed"
        case .engineUnavailable: "engine_unavailable"
        case .audioUnavailable: "audio_unavailable"
        case .shuttingDown: "shutting_down"
        case .lexiconFile: "lexicon_file"
        default: "internal"
        }
    }
}
