// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// One line from the daemon: a reply to a request, or an event. See docs/protocol.md.
public enum ServerMessage: Sendable, Equatable {
    /// A request succeeded (`"ok":true`).
    case reply(Reply, to: RequestID?)
    /// A request failed (`"ok":false`); the connection stays usable.
    case failure(WireError, to: RequestID?)
    /// Something happened to an utterance (`"event":…`).
    case event(SpeechEvent)

    /// A request failed with `error`, in the wire form it chooses (`WireErrorConvertible`: a
    /// `SpeechError`, a `ProtocolError`); any other error is `internal`.
    public static func failure(for error: any Error, to id: RequestID?) -> ServerMessage {
        .failure((error as? any WireErrorConvertible)?.wireError ?? WireError(code: "internal", message: "\(error)"), to: id)
    }

    /// What a successful reply carries, by request.
    public enum Reply: Sendable, Equatable {
        /// `post`: the new utterance's number.
        case posted(UtteranceID)
        /// `batch`: the new utterances' numbers, in the order of the posts.
        case postedBatch([UtteranceID])
        /// `pause`, `resume`, `stop`: whether the control changed anything.
        case control(effective: Bool)
        case status(Status)
        case voices([VoiceInfo])
        /// `pronounce`: what eSpeak-NG will say, in IPA (voice changes marked "(en) ").
        case pronunciation(ipa: String)
        /// `render`: the audio, not played.
        case audio(RenderedAudio)
        /// `lexicon`: the entries added, removed or in force, with their files.
        case lexicon([LexiconListing])
        /// `subscribe`: nothing to say but yes.
        case done
    }

    public struct Status: Sendable, Equatable, Codable {
        public var version: Int
        public var state: SpeechQueue.State
        public var current: ItemSummary?
        public var queue: [ItemSummary]
        /// Where the sound server stands: "why is there no sound" has one answer.
        public var audio: AudioStatus?

        public init(_ status: SpeechStatus) {
            version = 1
            state = status.state
            current = status.current.map(ItemSummary.init)
            queue = status.pending.map(ItemSummary.init)
            audio = status.audio.map(AudioStatus.init)
        }
    }

    /// `status`'s `audio`: the server a11yd plays to or tries, `connected`, `connecting` or
    /// `unreachable`, and why when not connected. The state is kept as a string, so that a newer
    /// daemon's still reads.
    public struct AudioStatus: Sendable, Equatable, Codable {
        public var server: String
        public var state: String
        public var reason: String?

        public init(_ status: SoundServerStatus) {
            server = status.server
            state = status.state.rawValue
            reason = status.reason
        }

        /// One line for a person: "connected to unix:/run/user/1000/pulse/native".
        public var sentence: String {
            switch state {
            case SoundServerStatus.State.connected.rawValue: "connected to \(server)"
            case SoundServerStatus.State.unreachable.rawValue: "no sound server reachable at \(server)" + (reason.map { " (\($0))" } ?? "")
            default: "\(state) to \(server)" + (reason.map { " (last attempt: \($0))" } ?? "")
            }
        }
    }

    public struct ItemSummary: Sendable, Equatable, Codable {
        public var utterance: UtteranceID
        public var kind: NotificationKind
        public var priority: Priority
        public var text: String

        public init(_ item: SpeechItem) {
            utterance = item.id
            kind = item.kind
            priority = item.urgency.queuePriority
            text = item.text
        }
    }

    /// An error as the JSON protocol sends it: the code a `WireErrorConvertible` error chose. A
    /// client keeps the string, so that a newer daemon's code still reads.
    public struct WireError: Sendable, Equatable, Codable, Error, CustomStringConvertible {
        public var code: String
        public var message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }

        public var description: String { "\(message) (\(code))" }
    }
}

// MARK: - Wire form

extension ServerMessage: Codable {
    private enum Keys: String, CodingKey {
        // Replies
        case id, ok, error, utterance, utterances, effective, version, state, current, queue, voices, ipa, pcm, sampleRate, channels
        case entries
        // Events
        case event, start, length, text, successful, reason, message, name
    }

    private enum EventName: String, Codable {
        case started, word, mark, paused, resumed, finished
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch self {
        case .reply(let reply, let id):
            try container.encodeIfPresent(id, forKey: .id)
            try container.encode(true, forKey: .ok)
            switch reply {
            case .posted(let utterance): try container.encode(utterance, forKey: .utterance)
            case .postedBatch(let utterances): try container.encode(utterances, forKey: .utterances)
            case .control(let effective): try container.encode(effective, forKey: .effective)
            case .status(let status): try status.encode(to: encoder)
            case .voices(let voices): try container.encode(voices, forKey: .voices)
            case .pronunciation(let ipa): try container.encode(ipa, forKey: .ipa)
            case .audio(let audio):
                try container.encode(audio.format.sampleRate, forKey: .sampleRate)
                try container.encode(audio.format.channels, forKey: .channels)
                try container.encode(Base64.encode(audio.samples), forKey: .pcm)
            case .lexicon(let entries): try container.encode(entries, forKey: .entries)
            case .done: break
            }
        case .failure(let error, let id):
            try container.encodeIfPresent(id, forKey: .id)
            try container.encode(false, forKey: .ok)
            try container.encode(error, forKey: .error)
        case .event(let event):
            try container.encodeIfPresent(event.utterance, forKey: .utterance)
            switch event {
            case .started: try container.encode(EventName.started, forKey: .event)
            case .word(_, let start, let length):
                try container.encode(EventName.word, forKey: .event)
                try container.encode(start, forKey: .start)
                try container.encode(length, forKey: .length)
            case .mark(_, let name):
                try container.encode(EventName.mark, forKey: .event)
                try container.encode(name, forKey: .name)
            case .paused, .queuePaused: try container.encode(EventName.paused, forKey: .event)
            case .resumed: try container.encode(EventName.resumed, forKey: .event)
            case .finished(_, let text, let reason, let message):
                try container.encode(EventName.finished, forKey: .event)
                try container.encode(text, forKey: .text)
                try container.encode(reason.isSuccessful, forKey: .successful)
                try container.encode(reason, forKey: .reason)
                try container.encodeIfPresent(message, forKey: .message)
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        if let name = try container.decodeIfPresent(EventName.self, forKey: .event) {
            // `paused` without an utterance is the queue's own state.
            if name == .paused, !container.contains(.utterance) {
                self = .event(.queuePaused)
                return
            }
            let id = try container.decode(UtteranceID.self, forKey: .utterance)
            switch name {
            case .started: self = .event(.started(id))
            case .word:
                self = .event(.word(
                    id, start: try container.decode(Int.self, forKey: .start),
                    length: try container.decode(Int.self, forKey: .length)))
            case .mark: self = .event(.mark(id, name: try container.decode(String.self, forKey: .name)))
            case .paused: self = .event(.paused(id))
            case .resumed: self = .event(.resumed(id))
            case .finished:
                self = .event(.finished(
                    id, text: try container.decode(String.self, forKey: .text),
                    reason: try container.decode(FinishReason.self, forKey: .reason),
                    message: try container.decodeIfPresent(String.self, forKey: .message)))
            }
            return
        }
        let id = try container.decodeIfPresent(RequestID.self, forKey: .id)
        guard try container.decode(Bool.self, forKey: .ok) else {
            self = .failure(try container.decode(WireError.self, forKey: .error), to: id)
            return
        }
        // A reply says what it answers by the fields it carries.
        let reply: Reply
        if let utterance = try container.decodeIfPresent(UtteranceID.self, forKey: .utterance) {
            reply = .posted(utterance)
        } else if let utterances = try container.decodeIfPresent([UtteranceID].self, forKey: .utterances) {
            reply = .postedBatch(utterances)
        } else if let effective = try container.decodeIfPresent(Bool.self, forKey: .effective) {
            reply = .control(effective: effective)
        } else if container.contains(.state) {
            reply = .status(try Status(from: decoder))
        } else if let voices = try container.decodeIfPresent([VoiceInfo].self, forKey: .voices) {
            reply = .voices(voices)
        } else if let ipa = try container.decodeIfPresent(String.self, forKey: .ipa) {
            reply = .pronunciation(ipa: ipa)
        } else if let entries = try container.decodeIfPresent([LexiconListing].self, forKey: .entries) {
            reply = .lexicon(entries)
        } else if let pcm = try container.decodeIfPresent(String.self, forKey: .pcm) {
            guard let samples = Base64.decodeSamples(pcm) else {
                throw DecodingError.dataCorruptedError(forKey: .pcm, in: container, debugDescription: "not base64 PCM")
            }
            let format = AudioFormat(
                sampleRate: try container.decode(Int.self, forKey: .sampleRate),
                channels: try container.decode(Int.self, forKey: .channels))
            reply = .audio(RenderedAudio(format: format, samples: samples))
        } else {
            reply = .done
        }
        self = .reply(reply, to: id)
    }
}

/// `{"graphemes":["pomme"],"ipa":"ʃa","lang":"fr","caseSensitive":false,"source":"…/lexicon.pls"}`
extension LexiconListing: Codable {
    private enum Keys: String, CodingKey { case graphemes, ipa, alias, lang, caseSensitive, source }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(entry.graphemes, forKey: .graphemes)
        switch entry.pronunciation {
        case .ipa(let ipa): try container.encode(ipa, forKey: .ipa)
        case .alias(let alias): try container.encode(alias, forKey: .alias)
        }
        try container.encodeIfPresent(entry.language, forKey: .lang)
        try container.encode(entry.caseSensitive, forKey: .caseSensitive)
        try container.encode(source, forKey: .source)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let pronunciation: LexiconEntry.Pronunciation
        if let ipa = try container.decodeIfPresent(String.self, forKey: .ipa) {
            pronunciation = .ipa(ipa)
        } else {
            pronunciation = .alias(try container.decode(String.self, forKey: .alias))
        }
        self.init(
            entry: LexiconEntry(
                graphemes: try container.decode([String].self, forKey: .graphemes), pronunciation: pronunciation,
                language: try container.decodeIfPresent(String.self, forKey: .lang),
                caseSensitive: try container.decode(Bool.self, forKey: .caseSensitive)),
            source: try container.decode(String.self, forKey: .source))
    }
}
