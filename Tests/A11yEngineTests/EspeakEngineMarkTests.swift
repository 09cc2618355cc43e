// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Testing

/// Words and SSML marks of a synthesis, with every sample.
struct RenderedWithMarks {
    var samples: [Int16] = []
    var words: [WordMark] = []
    var marks: [NamedMark] = []
    /// For each mark, how many samples had been delivered once the chunk that carried it was in.
    var markDeliveredWith: [Int] = []
}

func renderWithMarks(_ engine: EspeakEngine, _ segments: [SpeechSegment]) async throws -> RenderedWithMarks {
    var result = RenderedWithMarks()
    let request = Utterance(segments: segments, rate: 175, pitch: 50, volume: 100)
    for try await chunk in engine.synthesize(request) {
        result.words += chunk.words
        result.samples += chunk.samples
        for mark in chunk.marks {
            result.marks.append(mark)
            result.markDeliveredWith.append(result.samples.count)
        }
    }
    return result
}

func marked(
    _ string: String, voice: String = "fr", sourceStart: Int, mark: String? = nil, pause: Int = 0
) -> SpeechSegment {
    SpeechSegment(
        content: .text(string), voice: voice, sourceStart: sourceStart, sourceLength: string.unicodeScalars.count,
        options: .init(pauseBeforeMilliseconds: pause, markBefore: mark))
}

extension EngineTests {
    @Suite("SSML marks")
    struct Marks {
        let engine: EspeakEngine

        init() throws { engine = try makeEngine() }

        @Test func markBetweenSegmentsFallsBetweenTheirWords() async throws {
            // "bonjour le monde" with a mark before "le".
            let rendered = try await renderWithMarks(engine, [
                marked("bonjour", sourceStart: 0), marked("le monde", sourceStart: 8, mark: "middle"),
            ])
            #expect(rendered.marks.map(\.name) == ["middle"])
            let mark = try #require(rendered.marks.first)
            let bonjour = try #require(rendered.words.first { $0.start == 0 })
            let le = try #require(rendered.words.first { $0.start == 8 })
            #expect(bonjour.frame < mark.frame && mark.frame <= le.frame, "\(bonjour.frame) < \(mark.frame) <= \(le.frame)")
            // "bonjour" has been said by then (well over 200 ms of audio).
            #expect(mark.frame > engine.format.frames(milliseconds: 200))
            // Delivered with the chunk holding its frame, not before that audio exists.
            #expect(rendered.markDeliveredWith[0] > mark.frame)
            #expect(mark.frame < rendered.samples.count)
        }

        @Test func markComesAfterThePauseBeforeItsSegment() async throws {
            let rendered = try await renderWithMarks(engine, [
                marked("bonjour", sourceStart: 0), marked("monde", sourceStart: 8, mark: "after-pause", pause: 500),
            ])
            let mark = try #require(rendered.marks.first)
            let pause = engine.format.frames(milliseconds: 500)
            #expect(mark.frame >= pause)
            // The half second just before the mark is the inserted silence.
            #expect(rendered.samples[(mark.frame - pause)..<mark.frame].allSatisfy { $0 == 0 })
            let monde = try #require(rendered.words.first { $0.start == 8 })
            #expect(mark.frame <= monde.frame)
        }

        @Test func marksAtTheStartAndAtTheEndAreReported() async throws {
            let rendered = try await renderWithMarks(engine, [
                marked("bonjour", sourceStart: 0, mark: "start"), marked("", sourceStart: 7, mark: "end"),
            ])
            #expect(rendered.marks.map(\.name) == ["start", "end"])
            #expect(rendered.marks.first?.frame == 0)
            // The end mark stands at the end of the audio, after the last word.
            #expect(rendered.marks.last?.frame == rendered.samples.count)
            #expect(rendered.samples.count > engine.format.frames(milliseconds: 200))
            let last = try #require(rendered.words.last)
            #expect(last.frame < rendered.marks[1].frame)
        }

        @Test func consecutiveMarksKeepTheirOrder() async throws {
            let rendered = try await renderWithMarks(engine, [
                marked("", sourceStart: 0, mark: "a"), marked("", sourceStart: 0, mark: "b"),
                marked("bonjour", sourceStart: 0, mark: "c"),
            ])
            #expect(rendered.marks.map(\.name) == ["a", "b", "c"])
            #expect(rendered.marks.allSatisfy { $0.frame == 0 })
            #expect(rendered.words.map(\.start) == [0])
        }

        @Test func aMarkAloneYieldsAChunkWithTheMark() async throws {
            let rendered = try await renderWithMarks(engine, [marked("", sourceStart: 0, mark: "only")])
            #expect(rendered.marks == [NamedMark(frame: 0, name: "only")])
            #expect(rendered.samples.isEmpty)
            #expect(rendered.words.isEmpty)
        }

        @Test func segmentsWithoutMarksReportNone() async throws {
            let rendered = try await renderWithMarks(engine, [marked("bonjour le monde", sourceStart: 0)])
            #expect(rendered.marks.isEmpty)
            #expect(rendered.words.count == 3)
        }
    }
}
