// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Logging
import Testing

/// All engine tests, one at a time: they share the process's single libespeak-ng thread, so
/// the timing assertions (cancellation, first chunk) would otherwise measure other tests' queueing.
@Suite("EspeakEngine against the real libespeak-ng", .serialized)
enum EngineTests {}

/// Every test may make its own engine: they all share the process's one libespeak-ng thread.
func makeEngine() throws -> EspeakEngine {
    try EspeakEngine(logger: Logger(label: "a11yd.engine.tests"))
}

/// Everything a synthesis produced, plus where each chunk started.
struct Rendered {
    var samples: [Int16] = []
    var words: [WordMark] = []
    var chunkCount = 0
    /// For each mark, the first frame of the chunk that delivered it.
    var deliveredAt: [Int] = []

    var rms: Double {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot()
    }

    func seconds(_ format: AudioFormat) -> Double { Double(samples.count) / Double(format.sampleRate) }
}

func render(_ engine: EspeakEngine, _ request: Utterance) async throws -> Rendered {
    var result = Rendered()
    for try await chunk in engine.synthesize(request) {
        for word in chunk.words {
            result.words.append(word)
            result.deliveredAt.append(result.samples.count)
        }
        result.samples += chunk.samples
        result.chunkCount += 1
    }
    return result
}

func text(
    _ string: String, voice: String = "fr", sourceStart: Int = 0, rate: Int = 175
) -> Utterance {
    Utterance(
        segments: [segment(string, voice: voice, sourceStart: sourceStart)],
        rate: rate, pitch: 50, volume: 100)
}

func segment(_ string: String, voice: String, sourceStart: Int = 0) -> SpeechSegment {
    SpeechSegment(
        content: .text(string), voice: voice,
        sourceStart: sourceStart, sourceLength: string.unicodeScalars.count)
}

/// (start, length) in Unicode scalars of each whitespace-separated word, trailing punctuation dropped.
func wordRanges(_ string: String) -> [(start: Int, length: Int)] {
    let scalars = Array(string.unicodeScalars)
    var ranges: [(Int, Int)] = []
    var index = 0
    while index < scalars.count {
        while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
        let start = index
        while index < scalars.count, !scalars[index].properties.isWhitespace { index += 1 }
        var end = index
        while end > start, scalars[end - 1].properties.generalCategory == .otherPunctuation { end -= 1 }
        if end > start { ranges.append((start, end - start)) }
    }
    return ranges
}

/// The index of the first sample louder than `threshold`, if any.
func firstLoudSample(_ samples: [Int16], threshold: Int = 100) -> Int? {
    samples.firstIndex { abs(Int($0)) > threshold }
}
