// SPDX-License-Identifier: GPL-3.0-or-later

/// A voice as an engine lists it, with the priority the engine gives each of its languages
/// (parallel arrays; lower is preferred).
public struct VoiceEntry: Sendable, Equatable {
    public var info: VoiceInfo
    public var priorities: [Int]

    public init(info: VoiceInfo, priorities: [Int]) {
        self.info = info
        self.priorities = priorities
    }
}

/// The installed voices and the rules that pick one for a language tag: pure, so that a11yd can
/// resolve voices from a list an engine worker sent once, without the engine in its own process.
public struct VoiceCatalog: Sendable, Equatable {
    public let entries: [VoiceEntry]

    public init(_ entries: [VoiceEntry]) {
        self.entries = entries
    }

    public var voices: [VoiceInfo] { entries.map(\.info) }

    /// The voice for a BCP 47 ("fr", "en-GB") or POSIX ("en_US.UTF-8") tag; `unknown_voice` if none fits.
    public func resolve(language: String) throws(SpeechError) -> String {
        guard let voice = Self.bestVoice(for: Self.normalize(language: language), in: entries) else {
            throw SpeechError(.unknownVoice, "no voice for '\(language)'; run a11ysay --list-voices")
        }
        return voice
    }

    /// The tag a voice is chosen by (`LanguageTag.normalized`); the C locale ("C", "POSIX") and a
    /// blank language are English, eSpeak's own default.
    public static func normalize(language: String) -> String {
        let tag = LanguageTag.normalized(language) ?? "en"
        return tag == "c" || tag == "posix" ? "en" : tag
    }

    /// The voice for a normalised tag:
    /// 1. a voice listing the tag itself ("fr-fr", "pt-br", "en-gb");
    /// 2. else a voice listing its base language ("fr" for "fr-ca");
    /// 3. else a voice listing some variant of the base language ("fr-xx" for "fr").
    /// Among several candidates the lowest priority wins, then the listing order.
    /// For "en" this is eSpeak's reference English voice `en` (British, gmw/en), the same voice
    /// `espeak-ng -v en` uses; ask for "en-us" to get American English.
    static func bestVoice(for tag: String, in entries: [VoiceEntry]) -> String? {
        func best(_ matches: (String) -> Bool) -> String? {
            var choice: (priority: Int, identifier: String)?
            for entry in entries {
                for (language, priority) in zip(entry.info.languages, entry.priorities) where matches(language) {
                    if choice == nil || priority < choice!.priority {
                        choice = (priority, entry.info.identifier)
                    }
                }
            }
            return choice?.identifier
        }
        if let voice = best({ $0 == tag }) { return voice }
        let base = String(tag.split(separator: "-").first ?? Substring(tag))
        if let voice = best({ $0 == base }) { return voice }
        return best({ $0.hasPrefix(base + "-") })
    }
}

/// An engine's answers to `resolveVoice`, by the tag asked: every item asks, and the voices do not
/// change under a running engine. Bounded, as a client can name any number of tags: past `limit`
/// it starts again empty.
public struct ResolvedVoices: Sendable {
    public static let limit = 256
    private var voices: [String: String] = [:]

    public init() {}

    public subscript(tag tag: String) -> String? { voices[tag] }

    public mutating func remember(_ voice: String, for tag: String) {
        if voices.count >= Self.limit { voices.removeAll() }
        voices[tag] = voice
    }
}
