// SPDX-License-Identifier: GPL-3.0-or-later
import OrderedCollections

/// The audio of the short utterances said last, to say one again without asking the engine.
///
/// A screen reader says the same short things over and over: the letter of each key typed, "espace",
/// a button's name. Each goes through the engine again (a wake-up of its worker, eSpeak's thread, the
/// way back), and that is most of what a key's echo costs a11yd before its first sample reaches the
/// sound server. An engine says an utterance the same way every time (its voice, rate, pitch, volume
/// and every segment's options are in the `Utterance`), so a short one heard before is replayed from
/// here, words and marks included.
///
/// Bounded twice: an utterance longer than `Limits.samplesPerUtterance` is never kept, and the oldest
/// recalled go first once the whole passes `Limits.bytes`. Only the engine's own, complete output is
/// kept: a synthesis cut short or failed leaves nothing.
public struct SpeechMemory: Sendable {
    public struct Limits: Sendable, Equatable {
        /// The longest utterance kept, in samples (the engines speak mono).
        public var samplesPerUtterance: Int
        /// All the audio kept, in bytes of samples.
        public var bytes: Int

        public init(samplesPerUtterance: Int, bytes: Int) {
            self.samplesPerUtterance = samplesPerUtterance
            self.bytes = bytes
        }

        /// Two seconds of speech per utterance (a letter's echo is about half a second, eSpeak's
        /// closing silence included), 1 MiB in all: some 50 letters' echoes at 22,050 Hz, the alphabet twice.
        public static func standard(sampleRate: Int) -> Limits {
            let twoSeconds = max(sampleRate, 0).multipliedReportingOverflow(by: 2)
            return Limits(samplesPerUtterance: twoSeconds.overflow ? 0 : twoSeconds.partialValue, bytes: 1 << 20)
        }
    }

    public let limits: Limits
    /// Least recently said first.
    private var said: OrderedDictionary<Utterance, [SynthesisChunk]> = [:]
    public private(set) var bytes = 0

    public init(limits: Limits) {
        self.limits = limits
    }

    public var count: Int { said.count }

    /// The chunks kept for `utterance`, now the most recently said; nil if none are.
    public mutating func recall(_ utterance: Utterance) -> [SynthesisChunk]? {
        guard let index = said.index(forKey: utterance) else { return nil }
        let (key, chunks) = said.remove(at: index)
        said[key] = chunks
        return chunks
    }

    /// Keeps what the engine said for `utterance`, whole, if it is short enough; the least recently
    /// said go to make room.
    public mutating func remember(_ chunks: [SynthesisChunk], of utterance: Utterance) {
        let samples = chunks.reduce(0) { $0 + $1.samples.count }
        guard samples <= limits.samplesPerUtterance else { return }
        let size = samples * MemoryLayout<Int16>.size
        guard size <= limits.bytes else { return }
        if let old = said.removeValue(forKey: utterance) { bytes -= old.sampleBytes }
        while bytes + size > limits.bytes, let (_, oldest) = said.elements.first {
            said.removeFirst()
            bytes -= oldest.sampleBytes
        }
        said[utterance] = chunks
        bytes += size
    }

    /// Drops everything (a voice's model may have changed under its name).
    public mutating func forgetAll() {
        said.removeAll()
        bytes = 0
    }

    /// May `utterance` be kept at all, is it likely to fit `samplesPerUtterance`? Its
    /// length is only known once said, so this is a first sieve on its text: a character's name is
    /// at most a few words, and 2 s of speech is some 30 characters at eSpeak's fastest.
    public func mayKeep(_ utterance: Utterance) -> Bool {
        // Counted no further than the limit: a post of megabytes is not walked to its end.
        limits.samplesPerUtterance > 0 && utterance.text.unicodeScalars.prefix(Self.longestText + 1).count <= Self.longestText
    }

    public static let longestText = 64
}

extension [SynthesisChunk] {
    /// The bytes their samples take: what `SpeechMemory` and `EchoMemory` count against their bounds.
    var sampleBytes: Int { reduce(0) { $0 + $1.samples.count * MemoryLayout<Int16>.size } }
}
