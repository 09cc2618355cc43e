// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import CEspeakNG

/// The state of one utterance while libespeak-ng renders it on the worker thread.
///
/// Reached from the synth callback through `user_data` (an unretained pointer that stays valid
/// because `EspeakSession.synthesize` keeps the context alive across every `espeak_Synth` call).
/// Only the worker thread touches it.
final class SynthesisContext {
    typealias Continuation = SynthesisSink

    /// Samples whose magnitude is at most this are "near-silence" for leading-silence trimming
    /// (about -54 dBFS; eSpeak's lead-in stays well below it, speech onsets cross it at once).
    static let silenceThreshold = 64

    private let continuation: Continuation
    private let cancellation: CancellationFlag
    /// At most this many frames are kept before the first audible sample, so that a quiet onset is
    /// not clipped (1 ms): eSpeak's own lead-in, from its first non-zero sample.
    private let keepFrames: Int
    /// The last `keepFrames` frames dropped so far, while trimming: the onset can open a new
    /// buffer, and the frames kept before it then come from the previous one.
    private var droppedTail: [Int16] = []

    /// Raw (untrimmed) frames that earlier segments of this utterance produced.
    private var rawFramesBeforeSegment = 0
    /// Raw frames the current segment has produced so far.
    private var rawFramesInSegment = 0
    /// Leading frames dropped by trimming; raw frame r is utterance frame r - trimmedFrames.
    private var trimmedFrames = 0
    /// Whether the first audible sample has been seen (trimming is over).
    private var audible = false
    /// Frames yielded to the consumer so far.
    private(set) var producedFrames = 0
    /// A word or an SSML mark not yet delivered (its audio has not been produced yet).
    private enum Pending {
        case word(start: Int, length: Int)
        case named(String)
    }
    /// Word and SSML marks not yet delivered, with their raw frame, in increasing order.
    private var pendingMarks: [(rawFrame: Int, mark: Pending)] = []
    /// Frame of the last word delivered: word frames strictly increase.
    private var lastMarkFrame = -1
    /// Frame of the last SSML mark delivered: marks never go back before one another, nor before
    /// a word already delivered (so a player reporting "mark first at equal frames" keeps text order).
    private var lastNamedFrame = -1
    private var segment: SpeechSegment?
    /// `text_position`s already turned into marks in the current segment (never duplicate).
    private var seenPositions: Set<Int> = []

    /// Loudness above eSpeak's clean volume, limited (`PeakLimiter`); one envelope per utterance.
    private var limiter: PeakLimiter
    /// The current segment's gain (from `EspeakSession.setParameters`).
    var gain: Double {
        get { limiter.gain }
        set { limiter.gain = newValue }
    }

    init(continuation: Continuation, cancellation: CancellationFlag, sampleRate: Int) {
        self.continuation = continuation
        self.cancellation = cancellation
        self.keepFrames = max(sampleRate / 1000, 1)
        self.limiter = PeakLimiter(sampleRate: sampleRate)
    }

    var isCancelled: Bool { cancellation.isCancelled }

    /// eSpeak `text_position - 1` → offset in the segment's text, when the input eSpeak read is
    /// not the segment's text itself (spell-out markup).
    private var positionMap: [Int]?

    func beginSegment(_ segment: SpeechSegment, positionMap: [Int]? = nil) {
        self.segment = segment
        self.positionMap = positionMap
        rawFramesInSegment = 0
        seenPositions.removeAll(keepingCapacity: true)
        if let name = segment.options.markBefore {
            // At the segment's first frame: after its pause (already emitted), before its words.
            pendingMarks.append((rawFramesBeforeSegment, .named(name)))
        }
        if case .phonemes = segment.content {
            // eSpeak's positions inside `[[…]]` are unreliable: one mark for the whole segment.
            pendingMarks.append(
                (rawFramesBeforeSegment, .word(start: segment.sourceStart, length: max(segment.sourceLength, 0))))
        }
    }

    func endSegment() {
        rawFramesBeforeSegment += rawFramesInSegment
        rawFramesInSegment = 0
        segment = nil
    }

    /// Inserts `frames` of silence at this point of the utterance (between segments).
    func emitSilence(frames: Int) {
        guard frames > 0, !cancellation.isCancelled else { return }
        rawFramesBeforeSegment += frames
        audible = true
        producedFrames += frames
        let taken = takeMarks(flushAll: false)
        continuation.yield(
            SynthesisChunk(samples: Array(repeating: 0, count: frames), words: taken.words, marks: taken.marks))
    }

    /// Delivers marks still pending (a segment that made no sound, a mark at the very end) and
    /// ends the stream.
    func finish() {
        if !pendingMarks.isEmpty {
            let taken = takeMarks(flushAll: true)
            continuation.yield(SynthesisChunk(samples: [], words: taken.words, marks: taken.marks))
        }
        continuation.finish()
    }

    /// The process-wide synth callback: finds the context in `user_data` and hands over.
    static func callback(
        wav: UnsafeMutablePointer<Int16>?, count: Int, events: UnsafeMutablePointer<espeak_EVENT>?
    ) -> Int32 {
        guard let events, let userData = events.pointee.user_data else { return 0 }
        let context = Unmanaged<SynthesisContext>.fromOpaque(userData).takeUnretainedValue()
        return context.handle(wav: wav, count: count, events: events)
    }

    /// Returns 1 (abort) once the consumer has gone away, 0 otherwise.
    private func handle(
        wav: UnsafeMutablePointer<Int16>?, count: Int, events: UnsafeMutablePointer<espeak_EVENT>
    ) -> Int32 {
        if cancellation.isCancelled { return 1 }

        var event = events
        while event.pointee.type != espeakEVENT_LIST_TERMINATED {
            if event.pointee.type == espeakEVENT_WORD {
                addWord(event.pointee)
            }
            event += 1
        }

        var samples: [Int16] = []
        if let wav, count > 0 {
            let buffer = UnsafeBufferPointer(start: wav, count: count)
            if audible {
                samples = Array(buffer)
            } else if let onset = buffer.firstIndex(where: { abs(Int($0)) > Self.silenceThreshold }) {
                // The lead-in kept before the onset (the previous buffer's end may hold part of
                // it) starts at its first non-zero sample: zeros there would only delay the sound.
                let leadIn = (droppedTail + buffer[..<onset]).suffix(keepFrames).drop { $0 == 0 }
                trimmedFrames += onset - leadIn.count
                audible = true
                samples = Array(leadIn) + buffer[onset...]
                droppedTail = []
            } else {
                trimmedFrames += count
                droppedTail = Array((droppedTail + buffer).suffix(keepFrames))
            }
            rawFramesInSegment += count
        }

        limiter.process(&samples)
        producedFrames += samples.count
        let taken = audible ? takeMarks(flushAll: false) : (words: [], marks: [])
        if !samples.isEmpty || !taken.words.isEmpty || !taken.marks.isEmpty {
            continuation.yield(SynthesisChunk(samples: samples, words: taken.words, marks: taken.marks))
        }
        return cancellation.isCancelled ? 1 : 0
    }

    private func addWord(_ event: espeak_EVENT) {
        guard let segment, case .text = segment.content else { return }
        guard event.text_position >= 1, seenPositions.insert(Int(event.text_position)).inserted,
            let word = Self.wordRange(
                textPosition: event.text_position, length: event.length, sourceStart: segment.sourceStart,
                sourceLength: segment.sourceLength, positionMap: positionMap)
        else { return }
        // `sample` counts frames from the start of this espeak_Synth call, i.e. of the segment
        // (an Int32: adding it to an Int cannot overflow).
        pendingMarks.append((rawFramesBeforeSegment + Int(event.sample), .word(start: word.start, length: word.length)))
    }

    /// The client's text that an eSpeak WORD event names: `textPosition` is 1-based in what eSpeak
    /// read (mapped back through `positionMap` when that was not the segment's text), `length` in
    /// code points. Clamped to the segment's source range; `nil` when it names no text (eSpeak
    /// sometimes reports a zero-length "word" at the very end). Total for any `Int32`s eSpeak gives.
    static func wordRange(
        textPosition: Int32, length: Int32, sourceStart: Int, sourceLength: Int, positionMap: [Int]?
    ) -> (start: Int, length: Int)? {
        guard textPosition >= 1 else { return nil }
        var offset = Int(textPosition) - 1
        if let positionMap {
            guard offset < positionMap.count else { return nil }
            offset = positionMap[offset]
        }
        let sourceEnd = sourceStart + max(sourceLength, 0)
        let start = min(max(sourceStart + offset, sourceStart), sourceEnd)
        let length = max(0, min(Int(length), sourceEnd - start))
        return length > 0 ? (start, length) : nil
    }

    /// Takes the pending marks whose frame lies in the audio produced so far (all of them when
    /// `flushAll`), as utterance frames. Word frames strictly increase, except where clamping at
    /// the very end makes two words share the last frame; an SSML mark left at the end stands at
    /// the end of the audio (`producedFrames`), a word there on the last produced frame.
    private func takeMarks(flushAll: Bool) -> (words: [WordMark], marks: [NamedMark]) {
        var words: [WordMark] = []
        var marks: [NamedMark] = []
        var taken = 0
        scan: for pending in pendingMarks {
            var frame = max(pending.rawFrame - trimmedFrames, 0, lastMarkFrame + 1, lastNamedFrame)
            switch pending.mark {
            case .word(let start, let length):
                if frame >= producedFrames {
                    guard flushAll else { break scan }
                    frame = max(producedFrames - 1, 0)
                }
                lastMarkFrame = frame
                words.append(WordMark(frame: frame, start: start, length: length))
            case .named(let name):
                if frame >= producedFrames {
                    guard flushAll else { break scan }
                    frame = producedFrames
                }
                lastNamedFrame = frame
                marks.append(NamedMark(frame: frame, name: name))
            }
            taken += 1
        }
        pendingMarks.removeFirst(taken)
        return (words, marks)
    }
}
