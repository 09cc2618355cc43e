// SPDX-License-Identifier: GPL-3.0-or-later
import A11yEngineWorker
import FuzzSupport
import NIOCore

/// The engine worker's frame decoder (`WorkerFrameDecoder`, a `NIOSingleStepByteToMessageDecoder`,
/// driven here as the worker drives it), as both ends use it: a11yd reading
/// what a possibly subverted worker sends, the worker reading a11yd's requests. Any bytes, cut into
/// reads of the size the first byte picks.
///
/// Invariants: nothing traps; the messages decoded, and whether the stream is refused, do not
/// depend on how the bytes were cut; every message decoded encodes to a frame that decodes to it
/// again, alone and whole.
@main enum Fuzzer {
    static func main() { runFuzzer(fuzzFrames) }
}

func fuzzFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let pieceSize = 1 + Int(input.byte() % 64)
    let bytes = input.rest()
    let whole = decode(bytes, pieceSize: max(bytes.count, 1))
    let cut = decode(bytes, pieceSize: pieceSize)
    require(whole == cut, "in reads of \(pieceSize) bytes: \(cut), whole: \(whole)")
    for message in whole.messages {
        let again = decode(Array(buffer: WorkerFrame.encode(message)), pieceSize: 7)
        require(again == Decoded(messages: [message], refused: false), "\(message) re-encoded reads as \(again)")
    }
    return 0
}

struct Decoded: Equatable {
    var messages: [WorkerMessage] = []
    var refused = false
}

/// Every message in `bytes` fed in reads of `pieceSize`, up to the first refusal.
func decode(_ bytes: [UInt8], pieceSize: Int) -> Decoded {
    let decoder = NIOSingleStepByteToMessageProcessor(WorkerFrameDecoder())
    var decoded = Decoded()
    var offset = 0
    while offset < bytes.count {
        let end = min(offset + pieceSize, bytes.count)
        do {
            try decoder.process(buffer: ByteBuffer(bytes: bytes[offset..<end])) { decoded.messages.append($0) }
        } catch {
            decoded.refused = true
            return decoded
        }
        offset = end
    }
    return decoded
}
