// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yJSONLines
import A11yProtocol
import FuzzSupport
import NIOCore
import NIOEmbedded

/// The JSON Lines front door: bytes, split into reads as the fuzzer chooses, through the frame
/// decoder (a small line limit, so overlong lines are common), then each line through the codec.
///
/// Invariants: the lines and overlong-line reports, in order, do not depend on how the bytes were
/// split into reads; a line holds no newline and fits the limit; a decoded request re-encodes to a
/// line that decodes to the same request; an error carries one of the codes a line can earn, a
/// message, and encodes as one line; `bad_utf8` exactly when the line is not UTF-8.
@main enum Fuzzer {
    static func main() { runFuzzer(fuzzLines) }
}

func fuzzLines(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limit = 16 + Int(input.byte())
    let splits = (0..<4).map { _ in Int(input.byte()) }
    let bytes = input.rest()

    let whole = frames(of: bytes, limit: limit, reads: [bytes.count])
    var reads: [Int] = []
    var left = bytes.count
    for split in splits where left > 0 {
        let read = min(left, split + 1)
        reads.append(read)
        left -= read
    }
    if left > 0 { reads.append(left) }
    let pieces = frames(of: bytes, limit: limit, reads: reads)
    require(whole == pieces, "framing depends on the reads \(reads): \(whole) vs \(pieces)")

    for case .line(let line) in whole {
        require(!line.contains(UInt8(ascii: "\n")), "a line holds a newline")
        require(line.count <= limit, "a line of \(line.count) bytes passed the limit \(limit)")
        check(line)
    }
    return 0
}

enum Frame: Equatable, CustomStringConvertible {
    case line([UInt8])
    case overlong

    var description: String {
        switch self {
        case .line(let bytes): "line(\(bytes.count))"
        case .overlong: "overlong"
        }
    }
}

/// What the decoder hands the connection, flattened: each batch's lines, then its overlong mark.
func frames(of bytes: [UInt8], limit: Int, reads: [Int]) -> [Frame] {
    let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maximumLength: limit)))
    var result: [Frame] = []
    func drain() {
        while let batch = try! channel.readInbound(as: LineBatch.self) {
            result += batch.lines.map { .line(Array($0.readableBytesView)) }
            if batch.skippedOverlongLine { result.append(.overlong) }
        }
    }
    var offset = 0
    for read in reads {
        var buffer = channel.allocator.buffer(capacity: read)
        buffer.writeBytes(bytes[offset..<offset + read])
        offset += read
        try! channel.writeInbound(buffer)
        drain()
    }
    _ = try! channel.finish()
    drain()
    return result
}

/// The codes a request line can be refused with (ProtocolError's, and SpeechError's wire names).
let lineCodes: Set<String> = ["bad_json", "bad_utf8", "invalid_request", "unknown_op", "invalid_ssml"]

func check(_ line: [UInt8]) {
    let isUTF8 = String(validating: line, as: UTF8.self) != nil
    switch LineCodec.decodeRequest(line) {
    case .success(let request):
        require(isUTF8, "a line that is not UTF-8 was accepted")
        let again = LineCodec.encode(request)
        require(!again.contains(UInt8(ascii: "\n")), "a request encodes with a newline")
        switch LineCodec.decodeRequest(again) {
        case .success(let decoded):
            require(decoded == request, "re-encoded request differs: \(request) vs \(decoded)")
        case .failure(let failure):
            require(false, "re-encoded request refused: \(failure.error) for \(String(decoding: again, as: UTF8.self))")
        }
    case .failure:
        break
    }
    // As the daemon reads it: decoded, then checked for the speech API.
    if case .failure(let failure) = LineCodec.decodeCheckedRequest(line) {
        let code = failure.error.code
        require(lineCodes.contains(code), "unexpected code \(code)")
        require((code == "bad_utf8") == !isUTF8, "bad_utf8 is \(code == "bad_utf8") for a line whose UTF-8 validity is \(isUTF8)")
        require(!failure.error.message.isEmpty, "an error without a message")
        let reply = LineCodec.encode(ServerMessage.failure(failure.error, to: failure.id))
        require(!reply.isEmpty && !reply.contains(UInt8(ascii: "\n")), "an error reply is not one line")
        require((try? LineCodec.decodeMessage(reply)) == .failure(failure.error, to: failure.id),
                "an error reply does not read back")
    }
}
