// SPDX-License-Identifier: GPL-3.0-or-later
import A11yConfiguration
import A11yTestSupport
import Testing

/// `TOMLWriter`: what the documented configuration is written with, and what fuzz-toml checks the
/// reader against. Here and in the fuzzer: what the reader accepts, written, reads back and
/// writes the same text.
@Suite struct TOMLWriterTests {
    /// The invariants fuzz-toml checks on every input (Fuzz/Sources/fuzz-toml): a refusal is placed
    /// inside the text; an accepted text, written, reads back and writes the same. True when accepted.
    @discardableResult
    static func checkRoundTrip(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let table: TOMLTable
        do {
            table = try TOMLReader.read(text)
        } catch {
            let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            guard let line = error.line, let column = error.column else {
                Issue.record("refused without a place: \(error.message)", sourceLocation: sourceLocation)
                return false
            }
            #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
            #expect(line >= 1 && line <= lines.count, "\(error.located) in \(text.debugDescription)", sourceLocation: sourceLocation)
            #expect(column >= 1 && column <= lines[max(0, min(line, lines.count) - 1)].count + 1,
                    "\(error.located) in \(text.debugDescription)", sourceLocation: sourceLocation)
            return false
        }
        let written = TOMLWriter.document(table)
        do {
            let again = try TOMLReader.read(written)
            #expect(TOMLWriter.document(again) == written, "from \(text.debugDescription)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("the writer's text is refused: \(error.located)\n\(written)", sourceLocation: sourceLocation)
        }
        return true
    }

    @Test func everyKindOfValueIsWrittenOnItsLine() throws {
        let table = try TOMLReader.read("""
            top = 'x'
            [a]
            string = "tab\\t quote\\" backslash\\\\ nul\\u0000 del\\u007F é"
            integer = -1_6
            floats = [1.5, -0.0, 1e300, inf, -inf, nan]
            booleans = [true, false]
            nested = [[1, 2], [], ["x"]]
            "a key" = 1
            "" = 2
            "é" = 3
            b.c = 4
            [a.empty]
            [z]
            """)
        #expect(TOMLWriter.document(table) == """
            top = "x"
            [a]
            string = "tab\\t quote\\" backslash\\\\ nul\\u0000 del\\u007F é"
            integer = -16
            floats = [1.5, -0.0, 1e+300, inf, -inf, nan]
            booleans = [true, false]
            nested = [[1, 2], [], ["x"]]
            "a key" = 1
            "" = 2
            "é" = 3
            [a.b]
            c = 4
            [a.empty]
            [z]

            """)
        Self.checkRoundTrip(TOMLWriter.document(table))
    }

    @Test func extremesReadBack() {
        for text in [
            "a = -9223372036854775808", "a = 9223372036854775807", "a = 5e-324", "a = 1.7976931348623157e308", "a = \"\\U0010FFFF\\b\\f\\r\\n\"",
            "a.b.c.d = 1", "[\"a.b\".'c d']\n\"\\u0001\" = 2", "\u{FEFF}a = 1\r\n", "a = [\n  1, # one\n  2,\n]",
        ] {
            #expect(Self.checkRoundTrip(text), "\(text.debugDescription) is accepted")
        }
    }
}

/// Texts near the documented configuration, mutated as a fuzzer would but the same on every run
/// (a seeded generator): the invariants fuzz-toml checks, in the unit suite. What `make fuzz` finds
/// goes here too, as a test that failed before its fix (docs/fuzzing.md).
@Suite struct TOMLFuzzTests {
    static let tokens = [
        "[", "]", "[[", "=", ".", ",", "#", "\n", "\r\n", "\r", "\"", "'", "\"\"\"", "\\u", "\\U0001F600", "\\", "{", "true", "false",
        "inf", "nan", "-", "+", "0x", "0o", "0b", "_", "e", "1979-05-27", "9223372036854775808", "\u{FEFF}", "\u{7F}", "\u{0}",
        "é", " ", "\t", "voice", "rate", "a.b", "\"q\"",
    ]

    static let bases = [
        "[voice]\nlanguage = \"fr\"\nrate = 175\n[daemon]\nallowed_uids = [1001, 1002]\n",
        "a.b = 1\n[c]\nd = 'x' # comment\ne = [1.5, -inf, \"s\", [true]]\n",
        "[a.b]\n\"k k\" = 0x_ff\n[a]\nc = 1_000\n",
    ]

    @Test func mutatedConfigurationsKeepTheReadersInvariants() {
        var random = SplitMix64(seed: 28)
        var accepted = 0, refused = 0
        for _ in 0..<2_000 {
            var scalars = Array(Self.bases.randomElement(using: &random)!.unicodeScalars)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0...scalars.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: scalars.insert(contentsOf: Self.tokens.randomElement(using: &random)!.unicodeScalars, at: at)
                case 1: scalars.removeSubrange(at..<min(scalars.count, at + Int.random(in: 1...4, using: &random)))
                default: if at < scalars.count { scalars[at] = Unicode.Scalar(UInt8.random(in: 0...127, using: &random)) }
                }
            }
            var text = String.UnicodeScalarView()
            text.append(contentsOf: scalars)
            if TOMLWriterTests.checkRoundTrip(String(text)) { accepted += 1 } else { refused += 1 }
        }
        // Both sides of the reader are exercised, not only its first refusal.
        #expect(accepted > 200 && refused > 200, "accepted \(accepted), refused \(refused)")
    }
}
