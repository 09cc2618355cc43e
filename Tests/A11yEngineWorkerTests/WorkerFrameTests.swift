// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import A11yPronunciation
import NIOCore
import Testing

@testable import A11yEngineWorker

/// The engine worker's channel: every message comes back as it went, whatever pieces the bytes
/// arrive in, and a frame that lies about its lengths is an error, never a trap or a huge allocation.
struct WorkerFrameTests {
    static let utterance = Utterance(
        text: "Bonjour <b> monde",
        segments: [
            SpeechSegment(content: .text("Bonjour <b>"), voice: "fr", sourceStart: 0, sourceLength: 11,
                options: .init(spellOut: true, rateScale: 1.5, pauseBeforeMilliseconds: 250, markBefore: "m1")),
            SpeechSegment(content: .phonemes("m'O~d"), voice: "fr", sourceStart: 12, sourceLength: 5,
                options: .init(punctuation: true, pitchScale: 0.5, volumeScale: 2)),
        ],
        rate: 210, pitch: 40, volume: 150)

    static let messages: [WorkerMessage] = [
        .synthesize(id: 7, utterance),
        .cancel(id: 7),
        .ready(sampleRate: 22050, protection: "landlock, seccomp, no_new_privs"),
        .chunk(id: 7, SynthesisChunk(samples: [0, -1, 32767, -32768, 12], words: [WordMark(frame: 3, start: 0, length: 7)],
            marks: [NamedMark(frame: 3, name: "m1")])),
        .end(id: 7, failure: nil),
        .end(id: 8, failure: SpeechError(.engineFailed, "espeak_Synth failed (2)")),
        .end(id: 9, failure: SpeechError(.unknownVoice, "no eSpeak voice named 'xx'")),
        .ask(id: 10, .voices),
        .ask(id: 11, .ipaOfText("Bonjour", voice: "fr")),
        .ask(id: 12, .ipaOfMnemonics("m'O~d", voice: "fr")),
        .ask(id: 13, .ipaOfLetter("é", voice: "fr")),
        .ask(id: 14, .phonemeInventory(voice: "en-us")),
        .ask(id: 15, .allMnemonics),
        .answer(id: 10, .voices([
            VoiceEntry(info: VoiceInfo(identifier: "fr", name: "French (France)", languages: ["fr-fr", "fr"]), priorities: [5, 3]),
            VoiceEntry(info: VoiceInfo(identifier: "xx", name: "", languages: []), priorities: []),
        ])),
        .answer(id: 11, .text("bɔ̃ʒˈuʁ")),
        .answer(id: 14, .phonemes([PhonemeEntry(mnemonic: "a", ipa: "a"), PhonemeEntry(mnemonic: "t", ipa: "ɾ", stable: false)])),
        .answer(id: 15, .names(["a", "O~", ""])),
    ]

    /// The frames of `messages`, one after the other.
    static func frames(_ messages: [WorkerMessage]) -> [UInt8] {
        messages.flatMap { Array(buffer: WorkerFrame.encode($0)) }
    }

    /// Every message in `bytes`, fed to the decoder in pieces of `pieceSize`.
    static func decoded(_ bytes: [UInt8], pieceSize: Int) throws -> [WorkerMessage] {
        let decoder = NIOSingleStepByteToMessageProcessor(WorkerFrameDecoder())
        var decoded: [WorkerMessage] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + pieceSize, bytes.count)
            try decoder.process(buffer: ByteBuffer(bytes: bytes[offset..<end])) { decoded.append($0) }
            offset = end
        }
        return decoded
    }

    @Test func everyMessageRoundTrips() throws {
        let bytes = Self.frames(Self.messages)
        // One byte at a time, then all at once.
        for pieceSize in [1, 5, bytes.count] {
            #expect(try Self.decoded(bytes, pieceSize: pieceSize) == Self.messages, "in pieces of \(pieceSize)")
        }
    }

    /// The bytes each message is on the wire, as the Python worker (engines/piper/a11yd_piper/frames.py)
    /// and the fuzz corpus know them: written by the encoder before it wrote into a `ByteBuffer`.
    static let wire: [String] = [
        "c6000000010700000011000000426f6e6a6f7572203c623e206d6f6e6465d2000000000000002800000000000000960000000000000002000000000b000000426f6e6a6f7572203c623e02000000667200000000000000000b0000000000000001000000000000f83f000000000000f03f000000000000f03ffa0000000000000001020000006d3101050000006d274f7e640200000066720c00000000000000050000000000000002000000000000f03f000000000000e03f0000000000000040000000000000000000",
        "050000000207000000",
        "2c0000000a22560000000000001f0000006c616e646c6f636b2c20736563636f6d702c206e6f5f6e65775f7072697673",
        "410000000b07000000050000000000ffffff7f00800c0001000000030000000000000000000000000000000700000000000000010000000300000000000000020000006d31",
        "0a0000000c070000000000000000",
        "210000000c08000000011700000065737065616b5f53796e7468206661696c656420283229",
        "240000000c09000000021a0000006e6f2065537065616b20766f696365206e616d65642027787827",
        "06000000030a00000000",
        "17000000030b0000000102000000667207000000426f6e6a6f7572",
        "15000000030c00000002020000006672050000006d274f7e64",
        "12000000030d0000000302000000667202000000c3a9",
        "0f000000030e0000000405000000656e2d7573",
        "06000000030f00000005",
        "540000000d0a00000000020000000200000066720f0000004672656e636820284672616e636529020000000500000066722d6672050000000000000002000000667203000000000000000200000078780000000000000000",
        "160000000d0b000000010c00000062c994cc83ca92cb8875ca81",
        "210000000d0e00000002020000000100000061010000006101010000007402000000c9be00",
        "190000000d0f00000003030000000100000061020000004f7e00000000",
    ]

    @Test func theBytesOnTheWireDoNotChange() {
        #expect(Self.wire.count == Self.messages.count)
        for (message, wire) in zip(Self.messages, Self.wire) {
            let hex = Array(buffer: WorkerFrame.encode(message)).map { byte in
                String(byte >> 4, radix: 16) + String(byte & 0xf, radix: 16)
            }.joined()
            #expect(hex == wire, "\(message)")
        }
    }

    @Test func aFrameLongerThanAllowedIsRefusedBeforeItArrives() {
        var decoder = WorkerFrameDecoder()
        var length = ByteBuffer()
        length.writeInteger(UInt32(WorkerFrame.maximumLength + 1), endianness: .little)
        #expect(throws: WorkerProtocolError.self) { try decoder.decode(buffer: &length) }
    }

    /// Every frame cut short, and every frame with one byte changed, decodes or fails cleanly.
    @Test func damagedFramesFailCleanly() throws {
        for message in Self.messages {
            let frame = Array(buffer: WorkerFrame.encode(message))
            for cut in 5..<frame.count {
                // The length kept, the body short: a wrong count inside, read past the body.
                var short = frame
                short.removeLast(frame.count - cut)
                let length = UInt32(short.count - 4)
                for index in 0..<4 { short[index] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(index))) }
                _ = try? Self.decoded(short, pieceSize: short.count)
            }
            for index in 4..<frame.count {
                for value: UInt8 in [0, 0xff, 0x7f] {
                    var damaged = frame
                    damaged[index] = value
                    _ = try? Self.decoded(damaged, pieceSize: damaged.count)
                }
            }
        }
    }

    @Test func countsLargerThanTheirFrameAreRefused() {
        // A chunk claiming 2^32 - 1 samples in a frame of a few bytes.
        var chunk = ByteBuffer()
        chunk.writeInteger(UInt32(10), endianness: .little)
        chunk.writeInteger(UInt8(11))
        chunk.writeInteger(UInt32(1), endianness: .little)
        chunk.writeInteger(UInt32.max, endianness: .little)
        chunk.writeInteger(UInt8(0))
        #expect(throws: WorkerProtocolError.self) { try Self.decoded(Array(buffer: chunk), pieceSize: 1) }
    }

    /// An answer claiming 2^32 - 1 voices, or an unknown question or answer kind, is refused.
    @Test func answersAndQuestionsThatCannotBeAreRefused() {
        var voices = ByteBuffer()
        voices.writeInteger(UInt32(10), endianness: .little)
        voices.writeInteger(UInt8(13))
        voices.writeInteger(UInt32(1), endianness: .little)
        voices.writeInteger(UInt8(0))
        voices.writeInteger(UInt32.max, endianness: .little)
        var unknownAnswer = ByteBuffer()
        unknownAnswer.writeInteger(UInt32(6), endianness: .little)
        unknownAnswer.writeInteger(UInt8(13))
        unknownAnswer.writeInteger(UInt32(1), endianness: .little)
        unknownAnswer.writeInteger(UInt8(9))
        var unknownQuestion = ByteBuffer()
        unknownQuestion.writeInteger(UInt32(6), endianness: .little)
        unknownQuestion.writeInteger(UInt8(3))
        unknownQuestion.writeInteger(UInt32(1), endianness: .little)
        unknownQuestion.writeInteger(UInt8(6))
        for frame in [voices, unknownAnswer, unknownQuestion] {
            #expect(throws: WorkerProtocolError.self) { try Self.decoded(Array(buffer: frame), pieceSize: frame.readableBytes) }
        }
    }
}
