import A11yDaemon
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
            limit = 5
            [earcon]
            screen_changed = false
            """)
        #expect(parsed.voice.language == "en-GB")
        #expect(parsed.voice.rate == 300)
        #expect(parsed.queueLimit == 5)
        #expect(parsed.earcon == false)
        #expect(parsed.changes(from: DaemonConfiguration()).map(\.description) == [
            "voice.language: (from LANG) -> en-GB", "voice.rate: 175 -> 300", "queue.limit: 100 -> 5",
            "earcon.screen_changed: true -> false",
        ])
    }

    @Test(arguments: [
        ("[voice]\nrate = 9000", "'voice.rate' must be within 80...450, got 9000"),
        ("[voice]\nrat = 100", "unknown key 'voice.rat'"),
        ("[voices]\nrate = 100", "unknown section 'voices'"),
        ("[voice]\nrate = \"fast\"", "'voice.rate' must be an integer"),
        ("[earcon]\nscreen_changed = 1", "'earcon.screen_changed' must be true or false"),
    ])
    func badValuesAreRefusedWithTheKeyNamed(text: String, message: String) {
        #expect {
            try DaemonConfiguration.parse(text)
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.path == "<config>" && error?.message == message
        }
    }

    @Test func malformedTOMLNamesTheLine() {
        do {
            _ = try DaemonConfiguration.parse("[voice]\nrate = = 3")
            Issue.record("parsed malformed TOML")
        } catch {
            #expect(error.message.contains("line 2"))
        }
    }

    @Test func aMissingDefaultFileMeansDefaultsButANamedOneMustExist() throws {
        #expect(try DaemonConfiguration.load(path: "/nonexistent/a11yd.toml", mustExist: false) == DaemonConfiguration())
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.load(path: "/nonexistent/a11yd.toml", mustExist: true) }
    }
}
