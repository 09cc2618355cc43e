// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySSIP
import NIOCore
import NIOTestUtils
import Testing

/// The SSIP framer checked as the JSON Lines one is (A11yJSONLinesTests' `FramingVerifierTests`):
/// `ByteToMessageDecoderVerifier` feeds every input whole, one byte at a time and all at once in
/// shuffled orders, and wants the same frames each time.
@Suite struct SSIPFramingVerifierTests {
    /// A small limit, so that the over-long lines are short to write.
    static let limit = 8

    @Test func ssipFramesDoNotDependOnTheReads() throws {
        let long = String(repeating: "x", count: 40)
        try ByteToMessageDecoderVerifier.verifyDecoder(
            stringInputOutputPairs: [
                ("SPEAK\r\n", [.line(Array("SPEAK".utf8), crlf: true)]),
                // Inside SPEAK data a bare LF belongs to the text: the frame says how the line ended.
                ("texte\n", [.line(Array("texte".utf8), crlf: false)]),
                (".\r\n", [.line(Array(".".utf8), crlf: true)]),
                ("\r\n", [.line([], crlf: true)]),
                ("\n", [.line([], crlf: false)]),
                ("a\rb\r\n", [.line(Array("a\rb".utf8), crlf: true)]),
                ("a\r\r\n", [.line(Array("a\r".utf8), crlf: true)]),
                ("12345678\r\n", [.line(Array("12345678".utf8), crlf: true)]),  // exactly the limit, and its CR
                ("123456789\r\n", [.overlong]),
                ("\(long)\r\n", [.overlong]),
                ("\(long)\n", [.overlong]),
            ],
            decoderFactory: { SSIPLineDecoder(maximumLength: Self.limit) })
    }
}
