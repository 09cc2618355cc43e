// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import NIOCore
import NIOEmbedded
import NIOTestUtils
import SystemPackage
import Testing

@testable import A11yEngineWorker

/// The engine worker's frames as NIO handlers: the decoder checked the way swift-nio checks its own
/// (and A11yJSONLinesTests' `FramingVerifierTests` the JSON Lines framer), the encoder and decoder in
/// a pipeline, and the fuzz corpus, which pins what the Python worker reads and writes, read again.
@Suite struct WorkerFrameCodecTests {
    /// `ByteToMessageDecoderVerifier` feeds every frame whole, one byte at a time (each byte in a
    /// buffer of its own, amid other bytes) and all of them at once in shuffled orders, through one
    /// decoder, and wants the same messages each time.
    @Test func messagesDoNotDependOnTheReads() throws {
        var pairs = WorkerFrameTests.messages.map { (WorkerFrame.encode($0), [$0]) }
        // Two frames in one input: the second starts in the bytes that end the first.
        var two = WorkerFrame.encode(.cancel(id: 1))
        WorkerFrame.write(.end(id: 1, failure: nil), into: &two)
        pairs.append((two, [.cancel(id: 1), .end(id: 1, failure: nil)]))
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs, decoderFactory: WorkerFrameDecoder.init)
    }

    /// Both handlers in one pipeline: what is written goes out as its frame's bytes, and those bytes
    /// read back are the message.
    @Test func aPipelineWritesAndReadsFrames() throws {
        let channel = EmbeddedChannel(handlers: [ByteToMessageHandler(WorkerFrameDecoder()), MessageToByteHandler(WorkerFrameEncoder())])
        defer { _ = try? channel.finish() }
        for message in WorkerFrameTests.messages {
            try channel.writeOutbound(message)
            let bytes = try #require(try channel.readOutbound(as: ByteBuffer.self))
            #expect(bytes == WorkerFrame.encode(message))
            try channel.writeInbound(bytes)
            #expect(try channel.readInbound(as: WorkerMessage.self) == message)
        }
    }

    /// A frame cut short by the end of the stream is an error of the pipeline, not a message.
    @Test func aFrameCutShortAtTheEndIsLeftOver() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WorkerFrameDecoder()))
        var frame = WorkerFrame.encode(.cancel(id: 3))
        frame.moveWriterIndex(to: frame.writerIndex - 1)
        try channel.writeInbound(frame)
        #expect(try channel.readInbound(as: WorkerMessage.self) == nil)
        let error = #expect(throws: ByteToMessageDecoderError.self) { try channel.finish() }
        guard case .leftoverDataWhenDone(let left)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(left.readableBytes == frame.readableBytes)
    }

    /// Every input of Fuzz/corpus/frames decodes to the same messages, or the same refusal, whole and
    /// in pieces, and every message decoded encodes to a frame that decodes to it again.
    @Test func theFuzzCorpusReadsTheSameInAnyPieces() throws {
        let corpus = FilePath(#filePath).removingLastComponent().removingLastComponent().removingLastComponent()
            .appending("Fuzz/corpus/frames")
        let names = try Directory.names(in: corpus.string)
        #expect(names.count > 50)
        for name in names {
            let bytes = try #require(try TextFile.bytes(corpus.appending(name).string, limit: 1 << 20))
            // The fuzzer's first byte picks the size of the reads; the rest is the stream.
            guard let first = bytes.first else { continue }
            let stream = Array(bytes.dropFirst())
            let whole = Self.decoded(stream, pieceSize: max(stream.count, 1))
            let cut = Self.decoded(stream, pieceSize: 1 + Int(first % 64))
            #expect(whole == cut, "\(name)")
            for message in whole.messages {
                #expect(Self.decoded(Array(buffer: WorkerFrame.encode(message)), pieceSize: 7) == Decoded(messages: [message], refused: false), "\(name)")
            }
        }
    }

    struct Decoded: Equatable {
        var messages: [WorkerMessage] = []
        var refused = false
    }

    static func decoded(_ bytes: [UInt8], pieceSize: Int) -> Decoded {
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
}
