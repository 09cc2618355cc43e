import A11yCore

/// One line from the daemon: a reply (has `ok`) or an event (has `event`). See docs/protocol.md.
/// Every field is optional so that one type reads every line; clients look at what they expect.
public struct ServerMessage: Sendable, Equatable, Codable {
    public struct ErrorBody: Sendable, Equatable, Codable {
        public var code: String
        public var message: String
    }

    public struct ItemSummary: Sendable, Equatable, Codable {
        public var utterance: UInt64
        public var kind: NotificationKind
        public var priority: Priority
        public var text: String
    }

    /// An installed voice, as the engine lists it.
    public typealias Voice = VoiceInfo

    // Replies
    public var id: RequestID?
    public var ok: Bool?
    public var error: ErrorBody?
    public var utterance: UInt64?
    /// pause/resume/stop: whether the control changed anything.
    public var effective: Bool?
    public var state: String?
    public var current: ItemSummary?
    public var queue: [ItemSummary]?
    public var voices: [Voice]?
    public var version: Int?
    /// `pronounce`: what eSpeak-NG will say, in IPA (voice changes marked "(en) ").
    public var ipa: String?
    /// `render`: the audio, base64 of signed 16-bit little-endian PCM.
    public var pcm: String?
    public var sampleRate: Int?
    public var channels: Int?

    // Events
    public var event: String?
    public var start: Int?
    public var length: Int?
    public var text: String?
    public var successful: Bool?
    public var reason: FinishReason?
    public var message: String?
    /// `mark` events: the SSML mark's name.
    public var name: String?

    public init() {}

    public static func reply(to id: RequestID?) -> ServerMessage {
        var message = ServerMessage()
        message.id = id
        message.ok = true
        return message
    }

    public static func failure(_ error: SpeechError, id: RequestID?) -> ServerMessage {
        var message = ServerMessage()
        message.id = id
        message.ok = false
        message.error = ErrorBody(code: error.code.rawValue, message: error.message)
        return message
    }

    public init(_ event: SpeechEvent) {
        self.init()
        utterance = event.utterance.rawValue
        switch event {
        case .started:
            self.event = "started"
        case .word(_, let start, let length):
            self.event = "word"
            self.start = start
            self.length = length
        case .mark(_, let name):
            self.event = "mark"
            self.name = name
        case .paused:
            self.event = "paused"
        case .resumed:
            self.event = "resumed"
        case .finished(_, let text, let reason, let message):
            self.event = "finished"
            self.text = text
            self.successful = reason.isSuccessful
            self.reason = reason
            self.message = message
        }
    }
}

extension ServerMessage.ItemSummary {
    public init(_ item: SpeechItem) {
        self.init(utterance: item.id.rawValue, kind: item.kind, priority: item.priority, text: item.text)
    }
}
