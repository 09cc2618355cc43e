// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yDaemon
import A11ySystem
import Foundation
import Testing

@Suite struct ConfigurationTests {
    @Test func theDocumentedFileParsesToTheDefaults() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../config/a11yd.toml").standardized.path
        let parsed = try DaemonConfiguration.load(path: path, mustExist: true)
        #expect(parsed == DaemonConfiguration())
    }

    @Test func valuesAreRead() throws {
        let parsed = try DaemonConfiguration.parse("""
            [voice]
            language = "en-GB"
            rate = 300
            [queue]
            max_bytes = 2097152
            [earcon]
            screen_changed = false
            """)
        #expect(parsed.voice.language == "en-GB")
        #expect(parsed.voice.rate == 300)
        #expect(parsed.queueMaxBytes == 2_097_152)
        #expect(parsed.earcon == false)
        #expect(parsed.changes(from: DaemonConfiguration()).map(\.description) == [
            "voice.language: (from LANG) -> en-GB", "voice.rate: 175 -> 300", "queue.max_bytes: 16777216 -> 2097152",
            "earcon.screen_changed: true -> false",
        ])
    }

    @Test(arguments: [
        ("[voice]\nrate = 9000", "'voice.rate' must be within 80...450, got 9000"),
        ("[voice]\nrat = 100", "unknown key 'voice.rat'"),
        ("[voicez]\nrate = 100", "unknown section 'voicez'"),
        ("[voices]\nen = 100", "'voices.en' must be a voice identifier, e.g. \"piper:en_US-joe-medium\" (a11ysay --list-voices)"),
        ("[piper]\nidle_unload_seconds = -1", "'piper.idle_unload_seconds' must be within 0...86400, got -1"),
        ("[voice]\nrate = \"fast\"", "'voice.rate' must be an integer"),
        ("[earcon]\nscreen_changed = 1", "'earcon.screen_changed' must be true or false"),
        ("[audio]\nduck = \"always\"", "'audio.duck' must be \"off\" or \"speaking\", got \"always\""),
        ("[audio]\nduck = true", "'audio.duck' must be a string"),
        ("[audio]\nduck_db = 0", "'audio.duck_db' must be within 1...60, got 0"),
    ])
    func badValuesAreRefusedWithTheKeyNamed(text: String, message: String) {
        #expect {
            try DaemonConfiguration.parse(text)
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.path == "<config>" && error?.message == message
        }
    }

    @Test func malformedTOMLNamesTheLineAndColumn() {
        do {
            _ = try DaemonConfiguration.parse("[voice]\nrate = = 3", path: "a11yd.toml")
            Issue.record("parsed malformed TOML")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.description
                == "a11yd.toml: line 2, column 8: expected a value (a string, number, true, false or an array), found '='")
        }
    }

    @Test func whatTheSubsetLeavesOutIsRefusedByName() {
        for (text, message) in [
            ("[daemon]\nstarted = 2026-11-23", "line 2, column 11: dates and times are not supported"),
            ("voice = { rate = 200 }", "line 1, column 9: inline tables ({…}) are not supported: write a [table] section"),
        ] {
            #expect(throws: ConfigurationError.malformed(path: "<config>", message)) { try DaemonConfiguration.parse(text) }
        }
    }

    @Test func everyKeyOfTheDocumentedFileIsRead() throws {
        let parsed = try DaemonConfiguration.parse("""
            [voice]
            language = 'fr-FR'
            rate = 0x96
            pitch = 40
            volume = 1_50
            [voices]
            en = "piper:en_US-joe-medium"
            fr_CA = 'fr'
            [piper]
            idle_unload_seconds = 0
            [queue]
            max_bytes = 0x200000
            limit = 7  # obsolete, ignored
            [earcon]
            screen_changed = false
            [audio]
            server = "unix:/run/pulse/native"
            duck = "speaking"
            duck_db = 20
            [daemon]
            socket = "/tmp/a11yd \\u00e9.sock"
            autospawn = false
            idle_exit_seconds = 30
            allowed_uids = [ 1001,
                1002, ]  # trailing comma
            [ssip]
            enabled = false
            socket = "/tmp/ssip.sock"
            default_priority = "text"
            """)
        var expected = DaemonConfiguration()
        expected.voice.language = "fr-FR"
        expected.voice.rate = 150
        expected.voice.pitch = 40
        expected.voice.volume = 150
        expected.voices = [.init(language: "en", voice: "piper:en_US-joe-medium"), .init(language: "fr_CA", voice: "fr")]
        expected.piperIdleSeconds = 0
        expected.queueMaxBytes = 2 << 20
        expected.earcon = false
        expected.audioServer = "unix:/run/pulse/native"
        expected.duck = .speaking
        expected.duckDecibels = 20
        expected.socketPath = "/tmp/a11yd é.sock"
        expected.autospawn = false
        expected.idleExitSeconds = 30
        expected.allowedUIDs = [1001, 1002]
        expected.ssipEnabled = false
        expected.ssipSocketPath = "/tmp/ssip.sock"
        expected.ssipDefaultPriority = .text
        #expect(parsed == expected)
        #expect(throws: ConfigurationError.invalidValue(path: "<config>", "'daemon.allowed_uids' must be a list of user ids, e.g. [1001]")) {
            try DaemonConfiguration.parse("[daemon]\nallowed_uids = [-1]")
        }
    }

    /// Only a regular file is read, and a bounded one; what is wrong is said (a FIFO or a directory
    /// used to be "cannot read the file as UTF-8 text").
    @Test func onlyASmallRegularFileIsRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("a11yd-config-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/fifo.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, folder, "/dev/zero"] {
            #expect(throws: ConfigurationError.unreadable(path: path, "not a regular file")) {
                try DaemonConfiguration.load(path: path, mustExist: true)
            }
        }
        let large = folder + "/large.toml"
        #expect(FileManager.default.createFile(atPath: large, contents: Data(repeating: UInt8(ascii: "#"), count: (1 << 20) + 1)))
        #expect(throws: ConfigurationError.unreadable(path: large, "larger than 1048576 bytes")) {
            try DaemonConfiguration.load(path: large, mustExist: true)
        }
        let latin1 = folder + "/latin1.toml"
        // "# café" in Latin-1.
        #expect(FileManager.default.createFile(atPath: latin1, contents: Data([0x23, 0x20, 0x63, 0x61, 0x66, 0xE9, 0x0A])))
        #expect(throws: ConfigurationError.unreadable(path: latin1, "cannot read the file as UTF-8 text")) {
            try DaemonConfiguration.load(path: latin1, mustExist: true)
        }
    }

    @Test func aMissingDefaultFileMeansDefaultsButANamedOneMustExist() throws {
        #expect(try DaemonConfiguration.load(path: "/nonexistent/a11yd.toml", mustExist: false) == DaemonConfiguration())
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.load(path: "/nonexistent/a11yd.toml", mustExist: true) }
    }
}
