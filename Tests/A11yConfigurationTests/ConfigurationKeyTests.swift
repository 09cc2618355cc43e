// SPDX-License-Identifier: GPL-3.0-or-later
import A11yConfiguration
import A11yCore
import A11yDaemon
import A11ySSIP
import Foundation
import Testing

/// a11yd's table of keys (`DaemonConfiguration.keys`), row by row, and what comes from it: the
/// documented file, when a change takes effect, the refusals, a11ysay's keys.
@Suite struct ConfigurationKeyTests {
    static let documentedFilePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../config/a11yd.toml").standardized.path

    /// config/a11yd.toml is the table written out. After changing the table, write the file again:
    /// `A11YD_WRITE_DOCUMENTED_CONFIG=1 swift test --skip-build --filter theShippedFileIsWhatTheTableWrites`.
    @Test func theShippedFileIsWhatTheTableWrites() throws {
        let written = DaemonConfiguration().documentedFile
        if ProcessInfo.processInfo.environment["A11YD_WRITE_DOCUMENTED_CONFIG"] == "1" {
            try written.write(toFile: Self.documentedFilePath, atomically: true, encoding: .utf8)
        }
        let shipped = try String(contentsOfFile: Self.documentedFilePath, encoding: .utf8)
        #expect(shipped == written, "config/a11yd.toml differs from the table: write it again (see above)")
    }

    /// Every row when a change takes effect: what the reload log's "applied" and "at_next_start" say.
    @Test(arguments: [
        ("voice.language", DaemonConfiguration.TakesEffect.onReload), ("voice.detect_languages", .onReload), ("voice.rate", .onReload), ("voice.top_rate", .onReload), ("voice.pitch", .onReload),
        ("voice.volume", .onReload), ("voices", .onReload), ("piper.idle_unload_seconds", .atNextStart),
        ("queue.max_bytes", .atNextStart), ("queue.limit", .never), ("earcon.screen_changed", .atNextStart),
        ("audio.server", .atNextStart), ("audio.duck", .atNextStart), ("audio.duck_db", .atNextStart),
        ("daemon.socket", .atNextStart), ("daemon.autospawn", .onReload), ("daemon.idle_exit_seconds", .onReload),
        ("daemon.allowed_uids", .atNextStart), ("ssip.enabled", .atNextStart), ("ssip.socket", .atNextStart),
        ("ssip.default_priority", .atNextStart),
    ])
    func eachKeyTakesEffectWhenItsRowSays(key: String, takesEffect: DaemonConfiguration.TakesEffect) {
        #expect(DaemonConfiguration.keys.first { $0.dottedName == key }?.takesEffect == takesEffect)
    }

    @Test func theRowsAreTheKeysAboveInTheDocumentedOrder() {
        #expect(DaemonConfiguration.keys.map(\.dottedName) == [
            "voice.language", "voice.detect_languages", "voice.rate", "voice.top_rate", "voice.pitch", "voice.volume", "voices", "piper.idle_unload_seconds", "queue.max_bytes",
            "queue.limit", "earcon.screen_changed", "audio.server", "audio.duck", "audio.duck_db", "daemon.socket", "daemon.autospawn",
            "daemon.idle_exit_seconds", "daemon.allowed_uids", "ssip.enabled", "ssip.socket", "ssip.default_priority",
        ])
        #expect(DaemonConfiguration().settings.map(\.key) == DaemonConfiguration.keys.filter { $0.takesEffect != .never }.map(\.dottedName))
    }

    /// A reload's changes, each with its row's timing.
    @Test func changesSayWhenTheyTakeEffect() {
        var new = DaemonConfiguration()
        new.voice.rate = 300
        new.duck = .speaking
        new.autospawn = false
        let changes = new.changes(from: DaemonConfiguration())
        #expect(changes.map(\.description) == ["voice.rate: 175 -> 300", "audio.duck: off -> speaking", "daemon.autospawn: true -> false"])
        #expect(changes.map(\.takesEffectAtOnce) == [true, false, true])
    }

    /// A configuration unlike the defaults in every key: its documented file reads back as itself,
    /// so every row writes what it reads.
    @Test func everyKeyReadsBackWhatItWrites() throws {
        var configuration = DaemonConfiguration()
        configuration.voice.language = "fr-FR"
        configuration.detectLanguages = ["fr", "en-GB", "de"]
        configuration.voice.rate = 300
        configuration.voice.topRate = 800
        configuration.voice.pitch = 40
        configuration.voice.volume = 150
        configuration.voices = [.init(language: "en", voice: "piper:en_US-joe-medium"), .init(language: "pt-BR", voice: "pt \"br\"")]
        configuration.piperIdleSeconds = 0
        configuration.queueMaxBytes = 2 << 20
        configuration.earcon = false
        configuration.audioServer = "unix:/run/pulse/native"
        configuration.duck = .speaking
        configuration.duckDecibels = 20
        configuration.socketPath = "/tmp/a11yd \\ é.sock"
        configuration.autospawn = false
        configuration.idleExitSeconds = 30
        configuration.allowedUIDs = [1001, 4_294_967_295]
        configuration.ssipEnabled = false
        configuration.ssipSocketPath = "/tmp/ssip.sock"
        configuration.ssipDefaultPriority = .text
        #expect(configuration.changes(from: DaemonConfiguration()).count == configuration.settings.count, "every key differs")
        #expect(try DaemonConfiguration.parse(configuration.documentedFile) == configuration)
    }

    /// `ssip.default_priority` reads speech-dispatcher's names, which A11ySSIP spells (the core's
    /// `MessagePriority` has none): each one, and another is refused with the five listed.
    @Test func theSSIPDefaultPriorityReadsSpeechDispatchersNames() throws {
        #expect(MessagePriority.allCases.map(\.ssipName) == ["important", "message", "text", "notification", "progress"])
        for priority in MessagePriority.allCases {
            #expect(try DaemonConfiguration.parse("[ssip]\ndefault_priority = \"\(priority.ssipName)\"").ssipDefaultPriority == priority)
            #expect(MessagePriority(ssipName: priority.ssipName) == priority)
        }
        #expect {
            try DaemonConfiguration.parse("[ssip]\ndefault_priority = \"urgent\"")
        } throws: { error in
            (error as? ConfigurationError)?.message
                == "'ssip.default_priority' must be important, message, text, notification or progress, got \"urgent\""
        }
    }

    /// `voice.detect_languages`: language tags, each once (case aside), in the file's order; empty is
    /// off; anything that is not a tag is refused with the key named.
    @Test func detectLanguagesReadsTagsAndRefusesTheRest() throws {
        #expect(DaemonConfiguration().detectLanguages.isEmpty)
        #expect(try DaemonConfiguration.parse("[voice]\ndetect_languages = [\"fr\", \"en-GB\", \"EN-gb\", \"pt_BR\"]").detectLanguages
            == ["fr", "en-GB", "pt_BR"])
        #expect(try DaemonConfiguration.parse("[voice]\ndetect_languages = []").detectLanguages.isEmpty)
        for bad in ["\"fr\"", "[1]", "[\"\"]", "[\"f r\"]", "[\"-fr\"]", "[\"fr/../x\"]", "[\"é\"]"] {
            #expect {
                try DaemonConfiguration.parse("[voice]\ndetect_languages = \(bad)")
            } throws: { error in
                (error as? ConfigurationError)?.message.hasPrefix("'voice.detect_languages' must be a list of language tags") == true
            }
        }
    }

    /// No key takes a float: each is refused with the key named, whichever row reads it.
    @Test(arguments: DaemonConfiguration.keys.map(\.dottedName))
    func aValueOfTheWrongTypeIsRefusedWithItsKeyNamed(key: String) {
        let (section, name) = key.contains(".") ? (String(key.prefix { $0 != "." }), String(key.drop { $0 != "." }.dropFirst())) : (key, "en")
        #expect {
            try DaemonConfiguration.parse("[\(section)]\n\(name) = 1.5")
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.code == .invalidValue && error?.message.hasPrefix("'\(section).\(name)' must be ") == true
        }
    }

    @Test(arguments: ["voice", "piper", "queue", "earcon", "audio", "daemon", "ssip"])
    func eachSectionRefusesAKeyItDoesNotHave(section: String) {
        #expect(throws: ConfigurationError.unknownName(path: "<config>", "unknown key '\(section).nope'")) {
            try DaemonConfiguration.parse("[\(section)]\nnope = 1")
        }
        #expect(throws: ConfigurationError.invalidValue(path: "<config>", "'\(section)' must be a table ([\(section)])")) {
            try DaemonConfiguration.parse("\(section) = 1")
        }
    }

    /// a11ysay's keys are rows of a11yd's table, read the same way.
    @Test func theClientKeysAreRowsOfTheTable() throws {
        for key in [ClientKeys.socket.dottedName, ClientKeys.autospawn.dottedName] {
            #expect(DaemonConfiguration.keys.contains { $0.dottedName == key })
        }
        func document(_ text: String) throws -> TOMLTable { try TOMLReader.read(text) }
        #expect(try ClientKeys.socket.value(in: document("[daemon]\nsocket = '/run/x.sock'")) == "/run/x.sock")
        #expect(try ClientKeys.socket.value(in: document("daemon.socket = \"\"")) == .some(nil), "empty: the default place")
        #expect(try ClientKeys.socket.value(in: document("[voice]\nrate = 100")) == nil)
        #expect(try ClientKeys.socket.value(in: document("daemon = 3")) == nil, "a daemon that is no table holds no socket")
        #expect(try ClientKeys.autospawn.value(in: document("\"daemon\".'autospawn' = false")) == false)
        #expect(throws: ConfigurationValueError(key: "daemon.autospawn", "must be true or false")) {
            try ClientKeys.autospawn.value(in: document("[daemon]\nautospawn = \"no\""))
        }
    }
}
