// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine

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

    /// `message` as one frame.
    public static func encode(_ message: WorkerMessage) -> [UInt8] {
        var body = ByteWriter()
        let kind: Kind
        switch message {
        case .synthesize(let id, let utterance):
            kind = .synthesize
            body.u32(id)
            body.string(utterance.text)
            body.int(utterance.rate)
            body.int(utterance.pitch)
            body.int(utterance.volume)
            body.count(utterance.segments.count)
            for segment in utterance.segments {
                switch segment.content {
                case .text(let text):
                    body.u8(0)
                    body.string(text)
                case .phonemes(let mnemonics):
                    body.u8(1)
                    body.string(mnemonics)
                }
                body.string(segment.voice)
                body.int(segment.sourceStart)
                body.int(segment.sourceLength)
                let options = segment.options
                body.u8((options.spellOut ? 1 : 0) | (options.punctuation ? 2 : 0))
                body.double(options.rateScale)
                body.double(options.pitchScale)
                body.double(options.volumeScale)
                body.int(options.pauseBeforeMilliseconds)
                body.optionalString(options.markBefore)
            }
        case .cancel(let id):
            kind = .cancel
            body.u32(id)
        case .ask(let id, let question):
            kind = .ask
            body.u32(id)
            switch question {
            case .voices:
                body.u8(Question.voices.rawValue)
            case .ipaOfText(let text, let voice):
                body.u8(Question.ipaOfText.rawValue)
                body.string(voice)
                body.string(text)
            case .ipaOfMnemonics(let mnemonics, let voice):
                body.u8(Question.ipaOfMnemonics.rawValue)
                body.string(voice)
                body.string(mnemonics)
            case .ipaOfLetter(let character, let voice):
                body.u8(Question.ipaOfLetter.rawValue)
                body.string(voice)
                body.string(character)
            case .phonemeInventory(let voice):
                body.u8(Question.phonemeInventory.rawValue)
                body.string(voice)
            case .allMnemonics:
                body.u8(Question.allMnemonics.rawValue)
            }
        case .answer(let id, let answer):
            kind = .answer
            body.u32(id)
            body.u8(answer.kind.rawValue)
            switch answer {
            case .voices(let voices):
                body.count(voices.count)
                for voice in voices {
                    body.string(voice.info.identifier)
                    body.string(voice.info.name)
                    body.count(voice.info.languages.count)
                    for (language, priority) in zip(voice.info.languages, voice.priorities) {
                        body.string(language)
                        body.int(priority)
                    }
                }
            case .text(let text):
                body.string(text)
            case .phonemes(let entries):
                body.count(entries.count)
                for entry in entries {
                    body.string(entry.mnemonic)
                    body.string(entry.ipa)
                    body.u8(entry.stable ? 1 : 0)
                }
            case .names(let names):
                body.count(names.count)
                for name in names { body.string(name) }
            }
        case .ready(let sampleRate, let protection):
            kind = .ready
            body.int(sampleRate)
            body.string(protection)
        case .chunk(let id, let chunk):
            kind = .chunk
            body.u32(id)
            body.count(chunk.samples.count)
            body.samples(chunk.samples)
            body.count(chunk.words.count)
            for word in chunk.words {
                body.int(word.frame)
                body.int(word.start)
                body.int(word.length)
            }
            body.count(chunk.marks.count)
            for mark in chunk.marks {
                body.int(mark.frame)
                body.string(mark.name)
            }
        case .end(let id, let failure):
            kind = .end
            body.u32(id)
            switch failure?.code {
            case nil: body.u8(0)
            case .unknownVoice?: body.u8(2)
            default: body.u8(1)
            }
            body.string(failure?.message ?? "")
        }
        var frame = ByteWriter()
        frame.u32(UInt32(body.bytes.count + 1))
        frame.u8(kind.rawValue)
        frame.bytes += body.bytes
        return frame.bytes
    }

    /// The message in one frame's type and body (what follows the length).
    static func decode(_ frame: ArraySlice<UInt8>) throws(WorkerProtocolError) -> WorkerMessage {
        var reader = ByteReader(frame)
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

/// Cuts a byte stream into messages, whatever pieces it arrives in.
public struct WorkerFrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole message, or nil until more bytes arrive.
    public mutating func next() throws(WorkerProtocolError) -> WorkerMessage? {
        let available = buffer.count - start
        guard available >= 4 else { return nil }
        var length = 0
        for index in 0..<4 { length |= Int(buffer[start + index]) << (8 * index) }
        guard length >= 1, length <= WorkerFrame.maximumLength else { throw WorkerProtocolError("frame length \(length)") }
        guard available >= 4 + length else { return nil }
        let frame = buffer[(start + 4)..<(start + 4 + length)]
        start += 4 + length
        defer { compact() }
        return try WorkerFrame.decode(frame)
    }

    /// Drops what was read once it is most of the buffer (no copy per frame).
    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1 << 16, start > buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
    }
}

struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }
    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
    mutating func int(_ value: Int) { u64(UInt64(bitPattern: Int64(value))) }
    /// Each sample little-endian: copied whole on a little-endian machine (every one a11yd builds for).
    mutating func samples(_ values: [Int16]) {
        if Int16(1).littleEndian == 1 {
            values.withUnsafeBytes { bytes += $0 }
        } else {
            for value in values { u16(UInt16(bitPattern: value)) }
        }
    }
    mutating func count(_ value: Int) { u32(UInt32(clamping: value)) }
    mutating func double(_ value: Double) { u64(value.bitPattern) }
    mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes += value.utf8
    }
    mutating func optionalString(_ value: String?) {
        if let value {
            u8(1)
            string(value)
        } else {
            u8(0)
        }
    }
}

/// Reads a frame's body; every read checks what is left, so no length in a frame is trusted.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    var remaining: Int { bytes.endIndex - position }
    var isAtEnd: Bool { remaining == 0 }

    private mutating func take(_ count: Int) throws(WorkerProtocolError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw WorkerProtocolError("a message ends early") }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    mutating func u8() throws(WorkerProtocolError) -> UInt8 { try take(1).first! }
    /// `count` little-endian samples (the count already checked against what is left).
    mutating func samples(_ count: Int) throws(WorkerProtocolError) -> [Int16] {
        let raw = try take(count * 2)
        return [Int16](unsafeUninitializedCapacity: count) { buffer, initialized in
            raw.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: source)
            }
            if Int16(1).littleEndian != 1 {
                for index in 0..<count { buffer[index] = Int16(littleEndian: buffer[index]) }
            }
            initialized = count
        }
    }
    mutating func u16() throws(WorkerProtocolError) -> UInt16 {
        let b = try take(2)
        return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
    }
    mutating func u32() throws(WorkerProtocolError) -> UInt32 {
        try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
    mutating func u64() throws(WorkerProtocolError) -> UInt64 {
        try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
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
        let length = Int(try u32())
        let raw = try take(length)
        guard let text = String(validating: raw, as: UTF8.self) else { throw WorkerProtocolError("a string that is not UTF-8") }
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
