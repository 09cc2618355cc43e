// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

// How the speech API's values are written in JSON Lines (docs/protocol.md): the one place their wire
// names and fields are spelled. A11yCore declares them without `Codable` and without names meant for
// a wire, so that renaming a case or a property there cannot change the protocol, and a new case does
// not compile until it has its name here (each `wireName` is an exhaustive switch;
// Tests/A11yProtocolTests/ProtocolTests+CoreValues.swift pins every name and field).
//
// Why conformances in this module: the JSON model's own types (`Post`, `ServerMessage`…) hold these
// values as they are, so its synthesized and hand-written coding read and write them with the same
// calls as before, and the bytes and refusal sentences stay what they were; wire types mapped to core
// values would repeat every enum and struct for a copy. A conformance outside the type's module goes
// wrong only if that module adds the same one (two implementations, and which runs depends on what is
// linked). Swift does not call these retroactive (it refuses `@retroactive` within one package, whose
// modules change together); what keeps them safe is A11yCore's promise never to make these types
// `Codable` (SpeechControl.swift; ProtocolTests' `theCoreDeclaresNoWireForm` reads its source), and
// that no module but this one conforms them.

/// A speech API enum the protocol writes as one JSON string, its case's `wireName`.
public protocol WireNamed: CaseIterable, Codable {
    /// The case's name in JSON.
    var wireName: String { get }
}

extension WireNamed {
    /// The case whose JSON name is `wireName`; nil if none is.
    public init?(wireName: String) {
        guard let value = Self.allCases.first(where: { $0.wireName == wireName }) else { return nil }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wireName)
    }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(wireName: name) else {
            // The sentence the standard library's raw-value decoding wrote, which clients have been sent
            // since protocol v1 (after the field's path: `LineCodec`).
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "Cannot initialize \(Self.self) from invalid String value \(name)"))
        }
        self = value
    }
}

extension NotificationKind: Codable, WireNamed {
    public var wireName: String {
        switch self {
        case .announcement: "announcement"
        case .layoutChanged: "layoutChanged"
        case .screenChanged: "screenChanged"
        case .pageScrolled: "pageScrolled"
        }
    }
}

extension Priority: Codable, WireNamed {
    public var wireName: String {
        switch self {
        case .low: "low"
        case .default: "default"
        case .high: "high"
        }
    }
}

extension PauseBoundary: Codable, WireNamed {
    public var wireName: String {
        switch self {
        case .immediate: "immediate"
        case .word: "word"
        }
    }
}

extension FinishReason: Codable, WireNamed {
    public var wireName: String {
        switch self {
        case .spoken: "spoken"
        case .interrupted: "interrupted"
        case .flushed: "flushed"
        case .stopped: "stopped"
        case .dropped: "dropped"
        case .error: "error"
        }
    }
}

extension SpeechQueue.State: Codable, WireNamed {
    public var wireName: String {
        switch self {
        case .idle: "idle"
        case .speaking: "speaking"
        case .paused: "paused"
        }
    }
}

extension AccessibilityElement.Trait: Codable, WireNamed {
    public var wireName: String {
        switch self {
        case .button: "button"
        case .link: "link"
        case .header: "header"
        case .selected: "selected"
        case .adjustable: "adjustable"
        case .image: "image"
        case .searchField: "searchField"
        case .notEnabled: "notEnabled"
        case .tabBar: "tabBar"
        case .toggle: "toggle"
        }
    }
}

/// An utterance is its number: `"utterance":7`.
extension UtteranceID: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(UInt64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

// The structs' fields: a field the value lacks (nil) is left out, one the protocol requires is
// refused when missing.

/// `{"label":"OK","value":"on","traits":["button"],"hint":"…"}`: `traits` required, may be empty.
extension AccessibilityElement: Codable {
    private enum Keys: String, CodingKey { case label, value, traits, hint }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            label: try container.decodeIfPresent(String.self, forKey: .label),
            value: try container.decodeIfPresent(String.self, forKey: .value),
            traits: try container.decode([Trait].self, forKey: .traits),
            hint: try container.decodeIfPresent(String.self, forKey: .hint))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encodeIfPresent(label, forKey: .label)
        try container.encodeIfPresent(value, forKey: .value)
        try container.encode(traits, forKey: .traits)
        try container.encodeIfPresent(hint, forKey: .hint)
    }
}

/// `{"start":0,"length":4,"ipa":"…","lang":"fr","spellOut":true,"punctuation":true}`.
extension SpeechSpan: Codable {
    private enum Keys: String, CodingKey { case start, length, ipa, lang, spellOut, punctuation }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            start: try container.decode(Int.self, forKey: .start),
            length: try container.decode(Int.self, forKey: .length),
            ipa: try container.decodeIfPresent(String.self, forKey: .ipa),
            lang: try container.decodeIfPresent(String.self, forKey: .lang),
            spellOut: try container.decodeIfPresent(Bool.self, forKey: .spellOut),
            punctuation: try container.decodeIfPresent(Bool.self, forKey: .punctuation))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(start, forKey: .start)
        try container.encode(length, forKey: .length)
        try container.encodeIfPresent(ipa, forKey: .ipa)
        try container.encodeIfPresent(lang, forKey: .lang)
        try container.encodeIfPresent(spellOut, forKey: .spellOut)
        try container.encodeIfPresent(punctuation, forKey: .punctuation)
    }
}

/// `{"identifier":"fr","name":"French (France)","languages":["fr-fr","fr"],"engine":"espeak-ng","quality":…,"problem":…}`.
extension VoiceInfo: Codable {
    private enum Keys: String, CodingKey { case identifier, name, languages, engine, quality, problem }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        self.init(
            identifier: try container.decode(String.self, forKey: .identifier),
            name: try container.decode(String.self, forKey: .name),
            languages: try container.decode([String].self, forKey: .languages),
            engine: try container.decode(String.self, forKey: .engine),
            quality: try container.decodeIfPresent(String.self, forKey: .quality),
            problem: try container.decodeIfPresent(String.self, forKey: .problem))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(name, forKey: .name)
        try container.encode(languages, forKey: .languages)
        try container.encode(engine, forKey: .engine)
        try container.encodeIfPresent(quality, forKey: .quality)
        try container.encodeIfPresent(problem, forKey: .problem)
    }
}
