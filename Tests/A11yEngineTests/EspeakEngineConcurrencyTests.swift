// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Testing

extension EngineTests {
    @Suite("cancellation and concurrency")
    struct Concurrency {
        let engine: EspeakEngine

        init() throws { engine = try makeEngine() }

        /// About a minute of speech: rendering it whole takes long enough (about a second) that a
        /// request served after a cancel, or after a dropped stream, shows whether it waited for it.
        static let longText = String(
            repeating: "Ceci est une phrase assez longue pour occuper le synthétiseur un bon moment. ",
            count: 60)

        @Test func cancellingTheConsumerStopsSynthesisQuickly() async throws {
            let engine = self.engine
            // Reference: how long the whole long text takes when nobody cancels.
            let clock = ContinuousClock()
            let fullStart = clock.now
            let full = try await render(engine, text(Self.longText))
            let fullDuration = clock.now - fullStart
            #expect(full.seconds(engine.format) > 60)

            let (firstChunk, firstChunkSignal) = AsyncStream.makeStream(of: Void.self)
            let consumer = Task {
                var frames = 0
                for try await chunk in engine.synthesize(text(Self.longText)) {
                    frames += chunk.samples.count
                    firstChunkSignal.yield()
                }
                return frames
            }
            for await _ in firstChunk { break }
            let cancelledAt = clock.now
            consumer.cancel()
            let frames = try await consumer.value
            let stopped = clock.now - cancelledAt

            // The next request is served at once: the worker is no longer busy with the long text.
            let nextStart = clock.now
            var firstNext: Duration?
            var next = Rendered()
            for try await chunk in engine.synthesize(text("bonjour")) {
                if firstNext == nil { firstNext = clock.now - nextStart }
                next.samples += chunk.samples
                next.words += chunk.words
            }
            print("cancel: full render \(fullDuration), consumer ended \(stopped) after cancel, next first chunk \(firstNext!)")
            #expect(stopped < .milliseconds(50))
            #expect(frames < full.samples.count / 2)
            #expect(firstNext! < fullDuration / 4)
            #expect(next.rms > 1000)
            // Nothing of the aborted text leaks into the next utterance.
            #expect(next.words == [WordMark(frame: 0, start: 0, length: 7)])
            #expect(next.seconds(engine.format) < 1.5)
        }

        @Test func droppedStreamIsNeverStarted() async throws {
            let clock = ContinuousClock()
            let fullStart = clock.now
            _ = try await render(engine, text(Self.longText))
            let fullDuration = clock.now - fullStart
            // A stream nobody iterates and that is dropped: its onTermination cancels the queued job.
            do { _ = engine.synthesize(text(Self.longText)) }
            let start = clock.now
            let rendered = try await render(engine, text("bonjour"))
            let elapsed = clock.now - start
            #expect(rendered.rms > 1000)
            #expect(elapsed < fullDuration / 4, "\(elapsed) vs full render \(fullDuration)")
        }

        @Test func eightConcurrentRequestsAllComplete() async throws {
            let engine = self.engine
            let phrases: [(String, String)] = [
                ("fr", "bonjour tout le monde"), ("en-us", "hello world"), ("de", "guten Tag"),
                ("es", "buenos días"), ("fr", "phrase numéro 3"), ("en", "good morning"),
                ("pt-BR", "bom dia"), ("fr", "au revoir"),
            ]
            let results = try await withThrowingTaskGroup(of: (Int, Rendered).self) { group in
                for (index, (voice, phrase)) in phrases.enumerated() {
                    group.addTask { (index, try await render(engine, text(phrase, voice: voice))) }
                }
                var results: [Int: Rendered] = [:]
                for try await (index, rendered) in group { results[index] = rendered }
                return results
            }
            #expect(results.count == 8)
            for (index, rendered) in results {
                #expect(rendered.rms > 500, "\(phrases[index])")
                #expect(!rendered.words.isEmpty, "\(phrases[index])")
            }
        }

        @Test func secondEngineInstanceSharesTheThread() async throws {
            let other = try makeEngine()
            async let a = render(engine, text("bonjour"))
            async let b = render(other, text("hello", voice: "en-us"))
            let (ra, rb) = try await (a, b)
            #expect(ra.rms > 1000 && rb.rms > 1000)
            #expect(other.format == engine.format)
        }

        @Test func timeToFirstChunk() async throws {
            let clock = ContinuousClock()
            // The first request may be the process's first synthesis and first use of "fr".
            let coldStart = clock.now
            for try await _ in engine.synthesize(text("bonjour")) { break }
            print("first request of this test (cold if run alone): \(clock.now - coldStart)")
            var samples: [Duration] = []
            for _ in 0..<20 {
                let start = clock.now
                for try await _ in engine.synthesize(text("bonjour")) {
                    samples.append(clock.now - start)
                    break
                }
            }
            samples.sort()
            print("synthesize() to first chunk, 20 runs: median \(samples[10]), max \(samples.last!)")
            #expect(samples[10] < .milliseconds(10))

            // Alternating voices (each already loaded once): the switch stays cheap.
            _ = try await render(engine, text("hello", voice: "en-us"))
            var switching: [Duration] = []
            for index in 0..<20 {
                let start = clock.now
                for try await _ in engine.synthesize(text("bonjour", voice: index.isMultiple(of: 2) ? "en-us" : "fr")) {
                    switching.append(clock.now - start)
                    break
                }
            }
            switching.sort()
            print("with a voice switch, 20 runs: median \(switching[10]), max \(switching.last!)")
            #expect(switching[10] < .milliseconds(10))
        }
    }
}
