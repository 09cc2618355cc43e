// SPDX-License-Identifier: GPL-3.0-or-later
import A11yJSONLines
import NIOCore
import NIOTestUtils
import Testing

/// The JSON Lines framer checked the way swift-nio checks its own decoders: `ByteToMessageDecoderVerifier`
/// feeds every input whole, one byte at a time (each byte in a buffer of its own, amid other bytes)
/// and all of them at once in shuffled orders, through one decoder, and wants the same frames each time
/// (SSIP's framer: A11ySSIPTests' `SSIPFramingVerifierTests`).
@Suite struct FramingVerifierTests {
    /// A small limit, so that the over-long lines are short to write.
    static let limit = 8

    @Test func jsonLinesFramesDoNotDependOnTheReads() throws {
        let long = String(repeating: "x", count: 40)
        try ByteToMessageDecoderVerifier.verifyDecoder(
            stringInputOutputPairs: [
                ("{}\n", [.line("{}")]),
                ("\n", [.line("")]),
                ("12345678\n", [.line("12345678")]),  // exactly the limit
                ("123456789\n", [.overlong]),  // one byte over
                ("\(long)\n", [.overlong]),
                // JSON Lines ends lines at LF only: a CR before it stays in the line (JSON whitespace).
                ("1234567\r\n", [.line("1234567\r")]),
                ("12345678\r\n", [.overlong]),
                ("\r\n", [.line("\r")]),
                ("é\u{1F600}\n", [.line("é\u{1F600}")]),
            ],
            decoderFactory: { LineFrames(LineFrameDecoder(maximumLength: Self.limit)) })
    }
}

/// `LineFrameDecoder`'s batches as the frames in them: how many lines one batch carries follows the
/// reads (a batch only saves a hop), the lines and over-long marks and their order must not
/// (docs/protocol.md: each line is applied on its own, however the bytes arrive). The verifier's
/// inputs are whole lines, so the last line without a newline (`decodeLast`) is not its business.
private struct LineFrames: ByteToMessageDecoder {
    enum Frame: Equatable { case line(String), overlong }
    typealias InboundOut = Frame

    private var decoder: LineFrameDecoder

    init(_ decoder: LineFrameDecoder) { self.decoder = decoder }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        for batch in decoder.batches(from: &buffer) {
            for line in batch.lines { context.fireChannelRead(wrapInboundOut(.line(String(buffer: line)))) }
            if batch.skippedOverlongLine { context.fireChannelRead(wrapInboundOut(.overlong)) }
        }
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}
