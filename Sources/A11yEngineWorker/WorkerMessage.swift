// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import NIOCore

/// What travels between a11yd and its engine worker process (docs/architecture.md, "The engine
/// worker"). Each message is one frame: a 4-byte little-endian length (of what follows, at most
/// `WorkerFrame.maximumLength`), a 1-byte type, then the body. Integers are little-endian, strings
/// are a 4-byte length and UTF-8. Nothing here knows eSpeak: any engine could answer it.
public enum WorkerMessage: Sendable, Equatable {
    // a11yd → worker
    /// Say `utterance`; the worker answers with `chunk`s then one `end`, all with `id`.
    case synthesize(id: UInt32, Utterance)
    /// Stop saying `id` as soon as possible (an `end` still follows). Ignored for any other id.
    case cancel(id: UInt32)
    /// Answer `question`: the worker sends one `answer`, or one `end` with the failure, with `id`.
    case ask(id: UInt32, WorkerQuestion)

    // worker → a11yd
    /// Sent once, when the engine is loaded and the sandbox in force: the sample rate of every
    /// chunk (mono, 16-bit) and, in words, what protects the worker (for a11yd's log).
    case ready(sampleRate: Int, protection: String)
    case chunk(id: UInt32, SynthesisChunk)
    /// What `ask` asked for; its kind must be the question's (`WorkerQuestion.expects`).
    case answer(id: UInt32, WorkerAnswer)
    /// The last message of `id`: nil when every chunk was sent, else why not.
    case end(id: UInt32, failure: SpeechError?)
}

/// What a11yd asks its engine worker besides synthesis: the voices, and the phoneme facts the
/// pronouncer needs (`PronunciationEngine`), so that no text reaches an engine in a11yd's process.
public enum WorkerQuestion: Sendable, Hashable {
    /// Every installed voice, with its languages' priorities (a11yd asks once, at start).
    case voices
    /// The IPA the engine says for `text` read literally (no markup), in `voice`.
    case ipaOfText(String, voice: String)
    /// The IPA the engine says for phoneme mnemonics (`.phonemes` content), in `voice`.
    case ipaOfMnemonics(String, voice: String)
    /// The IPA of a character's name as `voice` spells it.
    case ipaOfLetter(String, voice: String)
    /// Every phoneme `voice` can say, mnemonic and IPA.
    case phonemeInventory(voice: String)
    /// Every mnemonic the engine knows, all languages.
    case allMnemonics

    /// The kind of answer this question takes.
    public var expects: WorkerAnswer.Kind {
        switch self {
        case .voices: .voices
        case .ipaOfText, .ipaOfMnemonics, .ipaOfLetter: .text
        case .phonemeInventory: .phonemes
        case .allMnemonics: .names
        }
    }
}

public enum WorkerAnswer: Sendable, Equatable {
    case voices([VoiceEntry])
    case text(String)
    case phonemes([PhonemeEntry])
    case names([String])

    public enum Kind: UInt8, Sendable {
        case voices = 0, text = 1, phonemes = 2, names = 3
    }

    public var kind: Kind {
        switch self {
        case .voices: .voices
        case .text: .text
        case .phonemes: .phonemes
        case .names: .names
        }
    }
}

/// Something in a frame that cannot be: the other side is broken (or a worker was subverted).
public struct WorkerProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

public enum WorkerFrame {
    /// No frame is longer: a chunk of 20 ms is about 1 KB, a request at most a few MB of text.
    public static let maximumLength = 64 << 20

    enum Kind: UInt8 {
        case synthesize = 1, cancel = 2, ask = 3, ready = 10, chunk = 11, end = 12, answer = 13
    }

    /// Each question's code in an `ask` body.
    enum Question: UInt8 {
        case voices = 0, ipaOfText = 1, ipaOfMnemonics = 2, ipaOfLetter = 3, phonemeInventory = 4, allMnemonics = 5
    }

    /// `message` as one frame, written at `frame`'s writer index: the length is written last, once
    /// the body is.
    static func write(_ message: WorkerMessage, into frame: inout ByteBuffer) {
        let lengthIndex = frame.writerIndex
        frame.writeInteger(UInt32(0), endianness: .little)
        let kindIndex = frame.writerIndex
        frame.writeInteger(UInt8(0))
        let kind: Kind
        switch message {
        case .synthesize(let id, let utterance):
            kind = .synthesize
            frame.writeFrameU32(id)
            frame.writeFrameString(utterance.text)
            frame.writeFrameInt(utterance.rate)
            frame.writeFrameInt(utterance.pitch)
            frame.writeFrameInt(utterance.volume)
            frame.writeFrameCount(utterance.segments.count)
            for segment in utterance.segments {
                switch segment.content {
                case .text(let text):
                    frame.writeFrameByte(0)
                    frame.writeFrameString(text)
                case .phonemes(let mnemonics):
                    frame.writeFrameByte(1)
                    frame.writeFrameString(mnemonics)
                }
                frame.writeFrameString(segment.voice)
                frame.writeFrameInt(segment.sourceStart)
                frame.writeFrameInt(segment.sourceLength)
                let options = segment.options
                frame.writeFrameByte((options.spellOut ? 1 : 0) | (options.punctuation ? 2 : 0))
                frame.writeFrameDouble(options.rateScale)
                frame.writeFrameDouble(options.pitchScale)
                frame.writeFrameDouble(options.volumeScale)
                frame.writeFrameInt(options.pauseBeforeMilliseconds)
                frame.writeFrameOptionalString(options.markBefore)
            }
        case .cancel(let id):
            kind = .cancel
            frame.writeFrameU32(id)
        case .ask(let id, let question):
            kind = .ask
            frame.writeFrameU32(id)
            switch question {
            case .voices:
                frame.writeFrameByte(Question.voices.rawValue)
            case .ipaOfText(let text, let voice):
                frame.writeFrameByte(Question.ipaOfText.rawValue)
                frame.writeFrameString(voice)
                frame.writeFrameString(text)
            case .ipaOfMnemonics(let mnemonics, let voice):
                frame.writeFrameByte(Question.ipaOfMnemonics.rawValue)
                frame.writeFrameString(voice)
                frame.writeFrameString(mnemonics)
            case .ipaOfLetter(let character, let voice):
                frame.writeFrameByte(Question.ipaOfLetter.rawValue)
                frame.writeFrameString(voice)
                frame.writeFrameString(character)
            case .phonemeInventory(let voice):
                frame.writeFrameByte(Question.phonemeInventory.rawValue)
                frame.writeFrameString(voice)
            case .allMnemonics:
                frame.writeFrameByte(Question.allMnemonics.rawValue)
            }
        case .answer(let id, let answer):
            kind = .answer
            frame.writeFrameU32(id)
            frame.writeFrameByte(answer.kind.rawValue)
            switch answer {
            case .voices(let voices):
                frame.writeFrameCount(voices.count)
                for voice in voices {
                    frame.writeFrameString(voice.info.identifier)
                    frame.writeFrameString(voice.info.name)
                    frame.writeFrameCount(voice.info.languages.count)
                    for (language, priority) in zip(voice.info.languages, voice.priorities) {
                        frame.writeFrameString(language)
                        frame.writeFrameInt(priority)
                    }
                }
            case .text(let text):
                frame.writeFrameString(text)
            case .phonemes(let entries):
                frame.writeFrameCount(entries.count)
                for entry in entries {
                    frame.writeFrameString(entry.mnemonic)
                    frame.writeFrameString(entry.ipa)
                    frame.writeFrameByte(entry.stable ? 1 : 0)
                }
            case .names(let names):
                frame.writeFrameCount(names.count)
                for name in names { frame.writeFrameString(name) }
            }
        case .ready(let sampleRate, let protection):
            kind = .ready
            frame.writeFrameInt(sampleRate)
            frame.writeFrameString(protection)
        case .chunk(let id, let chunk):
            kind = .chunk
            frame.writeFrameU32(id)
            frame.writeFrameCount(chunk.samples.count)
            frame.writeFrameSamples(chunk.samples)
            frame.writeFrameCount(chunk.words.count)
            for word in chunk.words {
                frame.writeFrameInt(word.frame)
                frame.writeFrameInt(word.start)
                frame.writeFrameInt(word.length)
            }
            frame.writeFrameCount(chunk.marks.count)
            for mark in chunk.marks {
                frame.writeFrameInt(mark.frame)
                frame.writeFrameString(mark.name)
            }
        case .end(let id, let failure):
            kind = .end
            frame.writeFrameU32(id)
            switch failure?.code {
            case nil: frame.writeFrameByte(0)
            case .unknownVoice?: frame.writeFrameByte(2)
            default: frame.writeFrameByte(1)
            }
            frame.writeFrameString(failure?.message ?? "")
        }
        frame.setInteger(kind.rawValue, at: kindIndex)
        frame.setInteger(UInt32(frame.writerIndex - kindIndex), at: lengthIndex, endianness: .little)
    }

    /// `message` as one frame in a buffer of its own.
    public static func encode(_ message: WorkerMessage) -> ByteBuffer {
        var frame = ByteBuffer()
        write(message, into: &frame)
        return frame
    }

    /// The message in one frame's type and body (what follows the length).
    static func decode(_ frame: ByteBuffer) throws(WorkerProtocolError) -> WorkerMessage {
        var reader = FrameBodyReader(frame)
        guard let kind = Kind(rawValue: try reader.u8()) else { throw WorkerProtocolError("unknown message type") }
        let message: WorkerMessage
        switch kind {
        case .synthesize:
            let id = try reader.u32()
            let text = try reader.string()
            let rate = try reader.int(), pitch = try reader.int(), volume = try reader.int()
            var segments: [SpeechSegment] = []
            for _ in 0..<(try reader.count(atLeast: 4)) {
                let content: SpeechSegment.Content
                switch try reader.u8() {
                case 0: content = .text(try reader.string())
                case 1: content = .phonemes(try reader.string())
                default: throw WorkerProtocolError("unknown segment content")
                }
                let voice = try reader.string()
                let start = try reader.int(), length = try reader.int()
                let flags = try reader.u8()
                let options = SpeechSegment.Options(
                    spellOut: flags & 1 != 0, punctuation: flags & 2 != 0, rateScale: try reader.double(),
                    pitchScale: try reader.double(), volumeScale: try reader.double(),
                    pauseBeforeMilliseconds: try reader.int(), markBefore: try reader.optionalString())
                segments.append(SpeechSegment(content: content, voice: voice, sourceStart: start, sourceLength: length, options: options))
            }
            message = .synthesize(id: id, Utterance(text: text, segments: segments, rate: rate, pitch: pitch, volume: volume))
        case .cancel:
            message = .cancel(id: try reader.u32())
        case .ask:
            let id = try reader.u32()
            guard let question = Question(rawValue: try reader.u8()) else { throw WorkerProtocolError("unknown question") }
            switch question {
            case .voices: message = .ask(id: id, .voices)
            case .ipaOfText, .ipaOfMnemonics, .ipaOfLetter:
                let voice = try reader.string()
                let text = try reader.string()
                message = .ask(id: id, question == .ipaOfText ? .ipaOfText(text, voice: voice)
                    : question == .ipaOfMnemonics ? .ipaOfMnemonics(text, voice: voice) : .ipaOfLetter(text, voice: voice))
            case .phonemeInventory: message = .ask(id: id, .phonemeInventory(voice: try reader.string()))
            case .allMnemonics: message = .ask(id: id, .allMnemonics)
            }
        case .answer:
            let id = try reader.u32()
            guard let kind = WorkerAnswer.Kind(rawValue: try reader.u8()) else { throw WorkerProtocolError("unknown answer") }
            switch kind {
            case .voices:
                var voices: [VoiceEntry] = []
                for _ in 0..<(try reader.count(atLeast: 12)) {
                    let identifier = try reader.string(), name = try reader.string()
                    var languages: [String] = [], priorities: [Int] = []
                    for _ in 0..<(try reader.count(atLeast: 12)) {
                        languages.append(try reader.string())
                        priorities.append(try reader.int())
                    }
                    voices.append(VoiceEntry(info: VoiceInfo(identifier: identifier, name: name, languages: languages), priorities: priorities))
                }
                message = .answer(id: id, .voices(voices))
            case .text:
                message = .answer(id: id, .text(try reader.string()))
            case .phonemes:
                var entries: [PhonemeEntry] = []
                for _ in 0..<(try reader.count(atLeast: 9)) {
                    let mnemonic = try reader.string(), ipa = try reader.string()
                    let stable = try reader.u8()
                    guard stable <= 1 else { throw WorkerProtocolError("bad stable flag") }
                    entries.append(PhonemeEntry(mnemonic: mnemonic, ipa: ipa, stable: stable == 1))
                }
                message = .answer(id: id, .phonemes(entries))
            case .names:
                var names: [String] = []
                for _ in 0..<(try reader.count(atLeast: 4)) { names.append(try reader.string()) }
                message = .answer(id: id, .names(names))
            }
        case .ready:
            let rate = try reader.int()
            guard (1000...384_000).contains(rate) else { throw WorkerProtocolError("sample rate \(rate) out of range") }
            message = .ready(sampleRate: rate, protection: try reader.string())
        case .chunk:
            let id = try reader.u32()
            let samples = try reader.samples(try reader.count(atLeast: 2))
            var words: [WordMark] = []
            for _ in 0..<(try reader.count(atLeast: 24)) {
                let word = WordMark(frame: try reader.int(), start: try reader.int(), length: try reader.int())
                guard word.frame >= 0, word.start >= 0, word.length >= 0 else { throw WorkerProtocolError("a negative word position") }
                words.append(word)
            }
            var marks: [NamedMark] = []
            for _ in 0..<(try reader.count(atLeast: 12)) {
                let mark = NamedMark(frame: try reader.int(), name: try reader.string())
                guard mark.frame >= 0 else { throw WorkerProtocolError("a negative mark frame") }
                marks.append(mark)
            }
            message = .chunk(id: id, SynthesisChunk(samples: samples, words: words, marks: marks))
        case .end:
            let id = try reader.u32()
            let status = try reader.u8()
            let text = try reader.string()
            switch status {
            case 0: message = .end(id: id, failure: nil)
            case 2: message = .end(id: id, failure: SpeechError(.unknownVoice, text))
            default: message = .end(id: id, failure: SpeechError(.engineFailed, text))
            }
        }
        guard reader.isAtEnd else { throw WorkerProtocolError("\(reader.remaining) bytes after a message") }
        return message
    }
}

/// Cuts a byte stream into messages, whatever pieces it arrives in: a11yd's end of the channel in
/// its pipeline, and the worker's (`EngineWorkerProcess`) through `NIOSingleStepByteToMessageProcessor`.
/// A length out of bounds is refused as soon as its four bytes are in, before the frame arrives.
public struct WorkerFrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = WorkerMessage

    public init() {}

    public mutating func decode(buffer: inout ByteBuffer) throws -> WorkerMessage? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, endianness: .little, as: UInt32.self) else { return nil }
        guard length >= 1, length <= WorkerFrame.maximumLength else { throw WorkerProtocolError("frame length \(length)") }
        guard buffer.readableBytes >= 4 + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: 4)
        return try WorkerFrame.decode(buffer.readSlice(length: Int(length))!)
    }

    /// At the end of the stream, whole frames only: a frame cut short is an error, not a message.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> WorkerMessage? {
        if let message = try decode(buffer: &buffer) { return message }
        guard buffer.readableBytes == 0 else { throw ByteToMessageDecoderError.leftoverDataWhenDone(buffer) }
        return nil
    }
}

/// Writes each message as one frame, for either end.
public struct WorkerFrameEncoder: MessageToByteEncoder {
    public typealias OutboundIn = WorkerMessage

    public init() {}

    public func encode(data message: WorkerMessage, out: inout ByteBuffer) {
        WorkerFrame.write(message, into: &out)
    }
}

/// A frame body's pieces, little-endian.
extension ByteBuffer {
    mutating func writeFrameByte(_ value: UInt8) { writeInteger(value) }
    mutating func writeFrameU32(_ value: UInt32) { writeInteger(value, endianness: .little) }
    mutating func writeFrameInt(_ value: Int) { writeInteger(Int64(value), endianness: .little) }
    /// Each sample little-endian: copied whole on a little-endian machine (every one a11yd builds for).
    mutating func writeFrameSamples(_ values: [Int16]) {
        if Int16(1).littleEndian == 1 {
            values.withUnsafeBytes { _ = writeBytes($0) }
        } else {
            for value in values { writeInteger(value, endianness: .little) }
        }
    }
    mutating func writeFrameCount(_ value: Int) { writeFrameU32(UInt32(clamping: value)) }
    mutating func writeFrameDouble(_ value: Double) { writeInteger(value.bitPattern, endianness: .little) }
    mutating func writeFrameString(_ value: String) {
        writeFrameCount(value.utf8.count)
        writeString(value)
    }
    mutating func writeFrameOptionalString(_ value: String?) {
        if let value {
            writeFrameByte(1)
            writeFrameString(value)
        } else {
            writeFrameByte(0)
        }
    }
}

/// Reads a frame's body; every read checks what is left, so no length in a frame is trusted.
struct FrameBodyReader {
    private var bytes: ByteBuffer

    init(_ bytes: ByteBuffer) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.readableBytes }
    var isAtEnd: Bool { remaining == 0 }

    private mutating func take(_ count: Int) throws(WorkerProtocolError) -> ByteBuffer {
        guard count >= 0, let piece = bytes.readSlice(length: count) else { throw WorkerProtocolError("a message ends early") }
        return piece
    }

    private mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) throws(WorkerProtocolError) -> Integer {
        guard let value = bytes.readInteger(endianness: .little, as: Integer.self) else { throw WorkerProtocolError("a message ends early") }
        return value
    }

    mutating func u8() throws(WorkerProtocolError) -> UInt8 { try integer(UInt8.self) }
    mutating func u32() throws(WorkerProtocolError) -> UInt32 { try integer(UInt32.self) }
    mutating func u64() throws(WorkerProtocolError) -> UInt64 { try integer(UInt64.self) }
    /// `count` little-endian samples (the count already checked against what is left).
    mutating func samples(_ count: Int) throws(WorkerProtocolError) -> [Int16] {
        let raw = try take(count * 2)
        return [Int16](unsafeUninitializedCapacity: count) { buffer, initialized in
            raw.withUnsafeReadableBytes { source in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: source)
            }
            if Int16(1).littleEndian != 1 {
                for index in 0..<count { buffer[index] = Int16(littleEndian: buffer[index]) }
            }
            initialized = count
        }
    }
    /// A 64-bit integer that must fit `Int` (it does on every platform a11yd builds for).
    mutating func int() throws(WorkerProtocolError) -> Int {
        guard let value = Int(exactly: Int64(bitPattern: try u64())) else { throw WorkerProtocolError("integer out of range") }
        return value
    }
    mutating func double() throws(WorkerProtocolError) -> Double {
        let value = Double(bitPattern: try u64())
        guard value.isFinite else { throw WorkerProtocolError("a number that is not finite") }
        return value
    }
    /// A count of items each at least `itemSize` bytes: never more than the bytes left could hold.
    mutating func count(atLeast itemSize: Int) throws(WorkerProtocolError) -> Int {
        let value = Int(try u32())
        guard value <= remaining / max(itemSize, 1) else { throw WorkerProtocolError("a count larger than its message") }
        return value
    }
    mutating func string() throws(WorkerProtocolError) -> String {
        let raw = try take(Int(try u32()))
        guard let text = raw.withUnsafeReadableBytes({ String(validating: $0, as: UTF8.self) }) else {
            throw WorkerProtocolError("a string that is not UTF-8")
        }
        return text
    }
    mutating func optionalString() throws(WorkerProtocolError) -> String? {
        switch try u8() {
        case 0: return nil
        case 1: return try string()
        default: throw WorkerProtocolError("bad optional string")
        }
    }
}
