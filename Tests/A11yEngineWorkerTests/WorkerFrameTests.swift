// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import A11yPronunciation
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

    @Test func everyMessageRoundTrips() throws {
        let bytes = Self.messages.flatMap(WorkerFrame.encode)
        // One byte at a time, then all at once.
        for pieceSize in [1, 5, bytes.count] {
            var decoder = WorkerFrameDecoder()
            var decoded: [WorkerMessage] = []
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + pieceSize, bytes.count)
                bytes[offset..<end].withUnsafeBytes { decoder.append($0) }
                while let message = try decoder.next() { decoded.append(message) }
                offset = end
            }
            #expect(decoded == Self.messages, "in pieces of \(pieceSize)")
        }
    }

    @Test func aFrameLongerThanAllowedIsRefusedBeforeItArrives() {
        var decoder = WorkerFrameDecoder()
        let length = UInt32(WorkerFrame.maximumLength + 1)
        [UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 24)]
            .withUnsafeBytes { decoder.append($0) }
        #expect(throws: WorkerProtocolError.self) { try decoder.next() }
    }

    /// Every frame cut short, and every frame with one byte changed, decodes or fails cleanly.
    @Test func damagedFramesFailCleanly() throws {
        for message in Self.messages {
            let frame = WorkerFrame.encode(message)
            for cut in 5..<frame.count {
                // The length kept, the body short: a wrong count inside, read past the body.
                var decoder = WorkerFrameDecoder()
                var short = frame
                short.removeLast(frame.count - cut)
                let length = UInt32(short.count - 4)
                for index in 0..<4 { short[index] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(index))) }
                short.withUnsafeBytes { decoder.append($0) }
                _ = try? decoder.next()
            }
            for index in 4..<frame.count {
                for value: UInt8 in [0, 0xff, 0x7f] {
                    var damaged = frame
                    damaged[index] = value
                    var decoder = WorkerFrameDecoder()
                    damaged.withUnsafeBytes { decoder.append($0) }
                    _ = try? decoder.next()
                }
            }
        }
    }

    @Test func countsLargerThanTheirFrameAreRefused() {
        // A chunk claiming 2^32 - 1 samples in a frame of a few bytes.
        var writer = ByteWriter()
        writer.u32(10)
        writer.u8(11)
        writer.u32(1)
        writer.u32(.max)
        writer.u8(0)
        var decoder = WorkerFrameDecoder()
        writer.bytes.withUnsafeBytes { decoder.append($0) }
        #expect(throws: WorkerProtocolError.self) { try decoder.next() }
    }

    /// An answer claiming 2^32 - 1 voices, or an unknown question or answer kind, is refused.
    @Test func answersAndQuestionsThatCannotBeAreRefused() {
        var voices = ByteWriter()
        voices.u32(10)
        voices.u8(13)
        voices.u32(1)
        voices.u8(0)
        voices.u32(.max)
        var unknownAnswer = ByteWriter()
        unknownAnswer.u32(6)
        unknownAnswer.u8(13)
        unknownAnswer.u32(1)
        unknownAnswer.u8(9)
        var unknownQuestion = ByteWriter()
        unknownQuestion.u32(6)
        unknownQuestion.u8(3)
        unknownQuestion.u32(1)
        unknownQuestion.u8(6)
        for writer in [voices, unknownAnswer, unknownQuestion] {
            var decoder = WorkerFrameDecoder()
            writer.bytes.withUnsafeBytes { decoder.append($0) }
            #expect(throws: WorkerProtocolError.self) { try decoder.next() }
        }
    }
}
