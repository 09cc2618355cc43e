// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Glibc

/// One request line from a client: the operation and the client's own tag, echoed in the reply.
/// See docs/protocol.md; the JSON is flat (`{"op":"post","id":1,"text":…}`).
public struct RequestLine: Sendable, Equatable {
    public var id: RequestID?
    public var request: Request

    public init(_ request: Request, id: RequestID? = nil) {
        self.request = request
        self.id = id
    }
}

/// What a client can ask of the daemon, as it writes it: posts as `Post`s, the wire's optional
/// fields, unchecked. Why two enums with the same cases (this and `CheckedRequest.Action`): this one
/// is what a client builds and encodes (a11ysay, the tests) and what JSON decoding yields; what
/// decoding cannot check (ranges, exactly one of text/ssml/element, a batch's size) is checked once,
/// after it, into the form the daemon acts on, whose `SpeechRequest`s have no wire form. One enum
/// would make either the daemon check a post again where it uses it, or a client build speech API
/// values it never sends.
public enum Request: Sendable, Equatable {
    case post(Post)
    /// Posts that reach the queue in one step, as if posted in the same instant (docs/protocol.md,
    /// "Batches"). Lines are never batched by how they happen to arrive: only this asks for it.
    case batch([Post])
    case pause(PauseBoundary)
    case resume
    case stop
    case status
    case voices
    /// `all: true`: this connection also receives every event of every client.
    case subscribe(all: Bool)
    /// The IPA eSpeak-NG will pronounce for a post's fields, without speaking.
    case pronounce(Post)
    /// A post's audio, returned instead of played.
    case render(Post)
    /// The user's pronunciation lexicon.
    case lexicon(LexiconRequest)

    /// The wire name of each operation (`op`).
    public enum Operation: String, Sendable, CaseIterable {
        case post, batch, pause, resume, stop, status, voices, subscribe, pronounce, render, lexicon
    }

    /// Most posts in one `batch`: a batch is decided in one step, so it is kept short.
    public static let batchLimit = 64

    public var operation: Operation {
        switch self {
        case .post: .post
        case .batch: .batch
        case .pause: .pause
        case .resume: .resume
        case .stop: .stop
        case .status: .status
        case .voices: .voices
        case .subscribe: .subscribe
        case .pronounce: .pronounce
        case .render: .render
        case .lexicon: .lexicon
        }
    }
}

/// The fields of `post` (and of `pronounce` and `render`), as they travel.
public struct Post: Sendable, Equatable, Codable {
    public var kind: NotificationKind?
    public var text: String?
    public var ssml: String?
    public var element: AccessibilityElement?
    public var queue: Bool?
    public var priority: Priority?
    public var lang: String?
    /// A voice identifier from `voices` ("piper:en_US-joe-medium"); unknown: `unknown_voice`.
    public var voice: String?
    /// 0...1, 0.5 is the normal rate (AVSpeechUtterance.rate).
    public var rate: Double?
    /// 0.5...2, 1 is the voice's normal pitch (AVSpeechUtterance.pitchMultiplier).
    public var pitch: Double?
    /// 0...1, 1 is full volume (AVSpeechUtterance.volume).
    public var volume: Double?
    /// Pronunciation spans (IPA, language, spell-out, punctuation) over `text`.
    public var spans: [SpeechSpan]?

    public init(
        text: String? = nil, ssml: String? = nil, element: AccessibilityElement? = nil,
        kind: NotificationKind? = nil, queue: Bool? = nil, priority: Priority? = nil, lang: String? = nil,
        rate: Double? = nil, pitch: Double? = nil, volume: Double? = nil, spans: [SpeechSpan]? = nil, voice: String? = nil
    ) {
        self.voice = voice
        self.text = text
        self.ssml = ssml
        self.element = element
        self.kind = kind
        self.queue = queue
        self.priority = priority
        self.lang = lang
        self.rate = rate
        self.pitch = pitch
        self.volume = volume
        self.spans = spans
    }

    /// The speech API's request, once what decoding cannot check (ranges, combinations) holds.
    public func speechRequest() throws(SpeechError) -> SpeechRequest {
        let content: SpeechRequest.Content
        switch (text, ssml, element) {
        case (let text?, nil, nil):
            if text.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
                throw SpeechError(.invalidRequest, "'text' is empty")
            }
            content = .text(text, spans: spans ?? [])
        case (nil, let ssml?, nil):
            if ssml.utf8.count > 64 * 1024 { throw SpeechError(.invalidSSML, "'ssml' is longer than 64 KiB") }
            content = .ssml(ssml)
        case (nil, nil, let element?):
            content = .element(element)
        default:
            throw SpeechError(.invalidRequest, "post needs exactly one of 'text', 'ssml' or 'element'")
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
        let kind = kind ?? .announcement
        return SpeechRequest(
            content, kind: kind, urgency: .voiceOver(priority ?? kind.defaultPriority, queued: queue ?? false),
            language: lang, rate: rate, pitch: pitch.map { PitchShift(octaves: log2($0)) }, volume: volume, voice: voice)
    }
}

// MARK: - Wire form

extension RequestLine: Codable {
    private enum Keys: String, CodingKey {
        case op, id, at, all, posts
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decodeIfPresent(RequestID.self, forKey: .id)
        let operation = try container.decode(Request.Operation.self, forKey: .op)
        switch operation {
        case .post: request = .post(try Post(from: decoder))
        case .batch: request = .batch(try container.decode([Post].self, forKey: .posts))
        case .pronounce: request = .pronounce(try Post(from: decoder))
        case .render: request = .render(try Post(from: decoder))
        case .lexicon: request = .lexicon(try LexiconRequest(from: decoder))
        case .pause: request = .pause(try container.decodeIfPresent(PauseBoundary.self, forKey: .at) ?? .immediate)
        case .resume: request = .resume
        case .stop: request = .stop
        case .status: request = .status
        case .voices: request = .voices
        case .subscribe: request = .subscribe(all: try container.decodeIfPresent(Bool.self, forKey: .all) ?? true)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(request.operation, forKey: .op)
        try container.encodeIfPresent(id, forKey: .id)
        switch request {
        case .post(let post), .pronounce(let post), .render(let post): try post.encode(to: encoder)
        case .batch(let posts): try container.encode(posts, forKey: .posts)
        case .lexicon(let lexicon): try lexicon.encode(to: encoder)
        case .pause(let boundary): try container.encode(boundary, forKey: .at)
        case .subscribe(let all): try container.encode(all, forKey: .all)
        case .resume, .stop, .status, .voices: break
        }
    }
}

extension Request.Operation: Codable {}

/// The fields of `lexicon`: add, remove or list the user's pronunciations.
public struct LexiconRequest: Sendable, Equatable, Codable {
    public enum Action: String, Sendable, Codable { case add, remove, list }

    public var action: Action
    public var grapheme: String?
    public var ipa: String?
    public var alias: String?
    public var lang: String?
    public var caseSensitive: Bool?

    public init(
        _ action: Action, grapheme: String? = nil, ipa: String? = nil, alias: String? = nil, lang: String? = nil,
        caseSensitive: Bool? = nil
    ) {
        self.action = action
        self.grapheme = grapheme
        self.ipa = ipa
        self.alias = alias
        self.lang = lang
        self.caseSensitive = caseSensitive
    }

    /// The speech API's change, once the fields make sense together.
    public func change() throws(SpeechError) -> LexiconChange {
        func grapheme() throws(SpeechError) -> String {
            guard let grapheme = self.grapheme, !grapheme.trimmed.isEmpty else {
                throw SpeechError(.invalidRequest, "lexicon \(action.rawValue) needs a 'grapheme'")
            }
            return grapheme
        }
        switch action {
        case .list:
            return .list
        case .remove:
            return .remove(grapheme: try grapheme(), language: lang.flatMap(LanguageTag.normalized))
        case .add:
            let written = try grapheme()
            let pronunciation: LexiconEntry.Pronunciation
            switch (ipa?.trimmed, alias?.trimmed) {
            case (let ipa?, nil) where !ipa.isEmpty: pronunciation = .ipa(ipa)
            case (nil, let alias?) where !alias.isEmpty: pronunciation = .alias(alias)
            default: throw SpeechError(.invalidRequest, "lexicon add needs exactly one of 'ipa' or 'alias'")
            }
            return .add(LexiconEntry(grapheme: written, pronunciation: pronunciation, language: lang, caseSensitive: caseSensitive ?? false))
        }
    }
}
