import A11yCore

/// One line from a client. See docs/protocol.md.
public struct ClientRequest: Sendable, Equatable, Codable {
    public enum Operation: String, Sendable, Codable, CaseIterable {
        case post, pause, resume, stop, status, voices, subscribe
        /// The IPA eSpeak-NG will pronounce for a post's fields, without speaking.
        case pronounce
        /// A post's audio, returned instead of played.
        case render
    }

    public var op: Operation
    public var id: RequestID?

    // post
    public var kind: NotificationKind?
    public var text: String?
    public var ssml: String?
    public var element: AccessibilityElement?
    public var queue: Bool?
    public var priority: Priority?
    public var lang: String?
    /// 0...1, 0.5 is the normal rate (AVSpeechUtterance.rate).
    public var rate: Double?
    /// 0.5...2, 1 is the voice's normal pitch (AVSpeechUtterance.pitchMultiplier).
    public var pitch: Double?
    /// 0...1, 1 is full volume (AVSpeechUtterance.volume).
    public var volume: Double?
    /// Pronunciation spans (IPA, language, spell-out, punctuation) over `text`.
    public var spans: [Span]?

    // pause
    public var at: PauseBoundary?
    // subscribe
    public var all: Bool?

    public init(op: Operation, id: RequestID? = nil) {
        self.op = op
        self.id = id
    }

    /// A range of `text` (Unicode scalars) to say differently: IPA, language, spell-out, punctuation.
    public typealias Span = SpeechSpan

    public static func post(
        _ text: String, kind: NotificationKind = .announcement, queue: Bool? = nil, priority: Priority? = nil,
        id: RequestID? = nil
    ) -> ClientRequest {
        var request = ClientRequest(op: .post, id: id)
        request.text = text
        request.kind = kind
        request.queue = queue
        request.priority = priority
        return request
    }

    /// Checks what decoding cannot: ranges and combinations.
    public func validate() throws(SpeechError) {
        guard [.post, .pronounce, .render].contains(op) else { return }
        let sources = [text != nil, ssml != nil, element != nil].filter { $0 }.count
        if sources != 1 {
            throw SpeechError(.invalidRequest, "post needs exactly one of 'text', 'ssml' or 'element'")
        }
        if let ssml, ssml.utf8.count > 64 * 1024 {
            throw SpeechError(.invalidSSML, "'ssml' is longer than 64 KiB")
        }
        if let text, text.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
            throw SpeechError(.invalidRequest, "'text' is empty")
        }
        if let rate, !(0...1).contains(rate) {
            throw SpeechError(.invalidRequest, "'rate' must be between 0 and 1 (0.5 is normal), got \(rate)")
        }
        if let pitch, !(0.5...2).contains(pitch) {
            throw SpeechError(.invalidRequest, "'pitch' must be between 0.5 and 2 (1 is normal), got \(pitch)")
        }
        if let volume, !(0...1).contains(volume) {
            throw SpeechError(.invalidRequest, "'volume' must be between 0 and 1, got \(volume)")
        }
        if spans != nil, text == nil {
            throw SpeechError(.invalidRequest, "'spans' apply to 'text' only")
        }
    }
}
