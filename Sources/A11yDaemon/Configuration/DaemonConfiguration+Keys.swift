// SPDX-License-Identifier: GPL-3.0-or-later
import A11yConfiguration
import A11yCore
import A11ySSIP

extension DaemonConfiguration {
    /// When a changed key takes effect after a reload (SIGHUP).
    public enum TakesEffect: Sendable, Equatable {
        /// At once: the next utterance, the next idle check, the next a11ysay.
        case onReload
        /// Read once at start: a reload logs the change for the next start.
        case atNextStart
        /// Never: an obsolete key, still accepted so that old files keep working.
        case never
    }

    /// One row of `keys`: a key of the file, where its value goes, when a change takes effect and
    /// what the documented file says of it.
    public struct Key: Sendable {
        public let section: String
        /// nil when the section itself is the value (`[voices]`).
        public let name: String?
        public let takesEffect: TakesEffect
        /// Comment lines for the documented file, without their `# `.
        public let documentation: [String]
        /// The values accepted, when the type alone does not say (`80...450`).
        public let accepted: String?
        /// Reads the key in a document into a configuration (nothing when it is absent).
        let read: @Sendable (TOMLTable, inout DaemonConfiguration) throws(ConfigurationValueError) -> Void
        /// The value as the reload log shows it; nil for a key never applied.
        let shown: (@Sendable (DaemonConfiguration) -> String)?
        /// The value as the file writes it; nil for a key never applied.
        let written: (@Sendable (DaemonConfiguration) -> TOMLValue)?

        /// `voice.rate`; `voices` for a whole section.
        public var dottedName: String { name.map { "\(section).\($0)" } ?? section }

        /// A key whose value is a member of the configuration.
        init<Value>(
            _ key: ConfigurationKey<Value>, _ member: WritableKeyPath<DaemonConfiguration, Value> & Sendable, _ takesEffect: TakesEffect,
            shown: @escaping @Sendable (Value) -> String = { "\($0)" }, _ documentation: [String]
        ) {
            section = key.section
            name = key.name
            accepted = key.accepted
            self.takesEffect = takesEffect
            self.documentation = documentation
            read = { document, configuration throws(ConfigurationValueError) in
                if let value = try key.value(in: document) { configuration[keyPath: member] = value }
            }
            self.shown = { shown($0[keyPath: member]) }
            written = { key.written($0[keyPath: member]) }
        }

        /// A key that is still read (and refused when wrong) but applied nowhere.
        init<Value>(obsolete key: ConfigurationKey<Value>, _ documentation: [String]) {
            section = key.section
            name = key.name
            accepted = key.accepted
            takesEffect = .never
            self.documentation = documentation
            read = { document, _ throws(ConfigurationValueError) in _ = try key.value(in: document) }
            shown = nil
            written = nil
        }
    }

    /// Every key of a11yd's configuration file, in the documented file's order: reading and its
    /// refusals (`parse`), what a reload applies at once (`Change.takesEffect`), the reload log
    /// (`settings`) and the documented file (`documentedFile`, config/a11yd.toml) come from here.
    /// The defaults are `DaemonConfiguration()`'s.
    public static let keys: [Key] = [
        Key(
            .optionalString("voice", "language"), \.voice.language, .onReload, shown: { $0 ?? "(from LANG)" },
            [
                "Language of the voice when a post names none: BCP 47 or POSIX (\"fr\", \"fr-FR\", \"en_US\").",
                "Empty: the user's locale (LC_ALL, LC_MESSAGES, LANG), as VoiceOver speaks the system language;",
                "a locale eSpeak-NG has no voice for falls back to English.",
            ]),
        Key(
            detectLanguagesKey, \.detectLanguages, .onReload, shown: { $0.isEmpty ? "(off)" : $0.joined(separator: ",") },
            [
                "The languages you read, as BCP 47 tags: [\"fr\", \"en\", \"de\", \"es\", \"it\"]. Each sentence of every text",
                "(a long sentence: each clause) that is clearly in another of them than the language it was posted in",
                "is said in that language, by its voice ([voices], else eSpeak-NG's). Choosing only among the",
                "languages listed is what makes short texts reliable: list only those you read. A text of 2-4 words",
                "(a button, a label) moves only when the evidence is overwhelming; a single word or key never does;",
                "a language given by the client (a span's lang, SSML <lang>) always wins. Empty: off.",
            ]),
        Key(.integer("voice", "rate", in: 80...450), \.voice.rate, .onReload, ["Words per minute at a post's normal rate (rate 0.5)."]),
        Key(
            .integer("voice", "top_rate", in: 450...900), \.voice.topRate, .onReload,
            [
                "Words per minute at the top of the scale (a post's rate 1.0, SSIP RATE 100), in every voice. Past",
                "450, eSpeak-NG speeds up by its own time-stretch (libsonic) and the natural voice by a11yd's: the",
                "words stay whole and the pitch held, but vowels shorten and pauses shrink; at 900, twice eSpeak's",
                "usual top, a listener used to fast speech follows it, a newcomer does not.",
            ]),
        Key(.integer("voice", "pitch", in: 0...100), \.voice.pitch, .onReload, ["eSpeak pitch at a post's normal pitch (pitch 1.0)."]),
        Key(
            .integer("voice", "volume", in: 0...200), \.voice.volume, .onReload,
            [
                "eSpeak volume at a post's full volume (volume 1.0, SSIP VOLUME 100), on eSpeak's scale as",
                "speech-dispatcher's espeak-ng module uses it (SSIP VOLUME v is eSpeak v + 100 there): the",
                "default, 200, is as loud as speech-dispatcher at its default volume. Above 100 eSpeak itself would",
                "clip; a11yd synthesises at 100 and adds the rest as gain through a limiter (peaks under -1 dBFS).",
            ]),
        Key(
            voicesKey, \.voices, .onReload, shown: { $0.map { "\($0.language)=\($0.voice)" }.joined(separator: ",") },
            [
                "The voice that says a language, before eSpeak-NG's own choice: language tag = voice identifier",
                "(`a11ysay --list-voices`). A post's `voice` field (`a11ysay --voice ID`) still picks any voice.",
                "English through the natural voice installed by `make voices`, every other language through eSpeak:",
                "en = \"piper:en_US-joe-medium\"",
            ]),
        Key(
            .integer("piper", "idle_unload_seconds", in: 0...86_400), \.piperIdleSeconds, .atNextStart,
            [
                "Seconds the Piper worker may sit idle before it is ended to give its memory (150-400 MB) back; the",
                "next item in a Piper voice starts it again (about a second). 0 keeps it loaded.",
            ]),
        Key(
            .integer("queue", "max_bytes", in: (1 << 20)...(1 << 30)), \.queueMaxBytes, .atNextStart,
            [
                "Most bytes the items waiting to be spoken may hold: their text, segments and a fixed share each",
                "(about 300 bytes for a short message or a key echo). Past it, the lowest-priority oldest waiting",
                "item is dropped: its `finished` says reason \"dropped\" and why (SSIP: 703 CANCELED), and the log",
                "says so. The default, 16 MiB, holds tens of thousands of short messages: no real client's burst",
                "(Orca's say-all, a run of key echoes) comes near it.",
            ]),
        // The count the queue was once bounded by: still read, so that files written then keep
        // working, and ignored (a real client's burst exceeded it).
        Key(
            obsolete: ConfigurationKey<Int>.integer("queue", "limit", in: 1...10_000),
            ["(`limit`, the item count the queue was bounded by before, is still accepted and ignored.)"]),
        Key(
            .boolean("earcon", "screen_changed"), \.earcon, .atNextStart,
            ["Play a short two-tone sound before a screenChanged item, as VoiceOver does on a new screen."]),
        Key(
            .optionalString("audio", "server"), \.audioServer, .atNextStart, shown: { $0 ?? "(default)" },
            [
                "PulseAudio server (PipeWire's pulse server works too). Empty: libpulse's default, which",
                "honours PULSE_SERVER and the session's server.",
            ]),
        Key(
            .choice("audio", "duck", requirement: { "must be \"off\" or \"speaking\", got \"\($0)\"" }), \.duck, .atNextStart,
            shown: { $0.rawValue },
            [
                "Lower every other playback stream on a11yd's sound card while speech is heard: \"off\" or \"speaking\".",
                "They get their volume back as soon as speech stops being heard, and on every way a11yd ends; the",
                "streams lowered are remembered in $XDG_RUNTIME_DIR/a11yd/ducked, so that after a crash or a kill",
                "the next a11yd restores them. (Desktops whose sound server ducks by role can use a11yd's stream",
                "role instead: media.role = \"a11y\".)",
            ]),
        Key(.integer("audio", "duck_db", in: 1...60), \.duckDecibels, .atNextStart, ["How far they are lowered, in dB."]),
        Key(
            ClientKeys.socket, \.socketPath, .atNextStart, shown: { $0 ?? "(default)" },
            ["Socket path. Empty: $A11YD_SOCKET, else $XDG_RUNTIME_DIR/a11yd/socket. `a11yd --socket` wins."]),
        Key(
            ClientKeys.autospawn, \.autospawn, .onReload,
            [
                "Let a11ysay start a11yd when nothing listens (machines without systemd). A11YD_NO_AUTOSPAWN=1",
                "turns it off too.",
            ]),
        Key(
            .integer("daemon", "idle_exit_seconds", in: 0...86_400), \.idleExitSeconds, .onReload,
            ["Exit after this many seconds with no client and nothing to say. 0: never."]),
        Key(
            allowedUIDsKey, \.allowedUIDs, .atNextStart, shown: { $0.map(String.init).joined(separator: ",") },
            [
                "Only clients of the daemon's own user (and root) are served; list other user ids to let them in",
                "(each connection's peer is checked with SO_PEERCRED, whatever the socket's mode).",
            ]),
        Key(
            .boolean("ssip", "enabled"), \.ssipEnabled, .atNextStart,
            [
                "Also speak speech-dispatcher's protocol (SSIP), so that Orca, spd-say and every libspeechd or",
                "python3-speechd client use a11yd unchanged (docs/ssip.md). If a speech-dispatcher already listens",
                "there, a11yd says so in its log and serves its JSON socket only. `a11yd --no-ssip` turns it off.",
            ]),
        Key(
            .optionalString("ssip", "socket"), \.ssipSocketPath, .atNextStart, shown: { $0 ?? "(default)" },
            [
                "Empty: $XDG_RUNTIME_DIR/speech-dispatcher/speechd.sock, where every SSIP client looks first.",
                "`a11yd --ssip-socket` wins.",
            ]),
        Key(
            .choice("ssip", "default_priority", named: \.ssipName),
            \.ssipDefaultPriority, .atNextStart, shown: { $0.ssipName },
            [
                "The priority of a client's messages until it sends SET self PRIORITY: important, message, text,",
                "notification or progress. speech-dispatcher's default is message (each message is said to its",
                "end, in order); text would make each message cut the one before.",
            ]),
    ]

    /// The sections, in the table's order.
    static let sections: [String] = keys.reduce(into: []) { sections, key in
        if sections.last != key.section { sections.append(key.section) }
    }

    /// `[voices]`: language = voice identifier, in the file's order.
    private static let voicesKey = ConfigurationKey<[LanguageVoice]>(
        section: "voices", name: nil,
        parse: { value, key throws(ConfigurationValueError) in
            guard let section = value.table else {
                throw ConfigurationValueError(key: key, "must be a table ([voices]) of language = \"voice\"")
            }
            var voices: [LanguageVoice] = []
            for language in section.keys {
                guard let voice = section[language]?.string, !voice.isEmpty else {
                    throw ConfigurationValueError(
                        key: "\(key).\(language)", "must be a voice identifier, e.g. \"piper:en_US-joe-medium\" (a11ysay --list-voices)")
                }
                voices.append(LanguageVoice(language: language, voice: voice))
            }
            return voices
        },
        encode: { voices in
            var table = TOMLTable()
            for entry in voices { table[entry.language] = .string(entry.voice) }
            return .table(table)
        })

    /// `voice.detect_languages`: language tags, each once.
    private static let detectLanguagesKey = ConfigurationKey<[String]>(
        section: "voice", name: "detect_languages",
        parse: { value, key throws(ConfigurationValueError) in
            let requirement = "must be a list of language tags, e.g. [\"fr\", \"en\", \"de\"]"
            guard let values = value.array else { throw ConfigurationValueError(key: key, requirement) }
            var tags: [String] = []
            for value in values {
                // A tag: an ASCII letter, then letters, digits, '-' or '_' ("fr", "en-GB", "pt_BR").
                guard let tag = value.string, let first = tag.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
                      tag.unicodeScalars.count <= 35,
                      tag.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") })
                else { throw ConfigurationValueError(key: key, requirement) }
                if !tags.contains(where: { $0.lowercased() == tag.lowercased() }) { tags.append(tag) }
            }
            return tags
        },
        encode: { .array($0.map { .string($0) }) })

    /// `daemon.allowed_uids`: user ids, each fitting a uid_t.
    private static let allowedUIDsKey = ConfigurationKey<[UInt32]>(
        section: "daemon", name: "allowed_uids",
        parse: { value, key throws(ConfigurationValueError) in
            let numbers = value.array?.compactMap(\.integer).compactMap(UInt32.init(exactly:))
            guard let numbers, numbers.count == value.array?.count else {
                throw ConfigurationValueError(key: key, "must be a list of user ids, e.g. [1001]")
            }
            return numbers
        },
        encode: { .array($0.map { .integer(Int($0)) }) })
}
