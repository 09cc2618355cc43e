// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Synchronization

/// Saying again from `SpeechMemory`: the replay, and the recording of what an engine says.
extension EngineRouter {
    typealias Chunks = AsyncThrowingStream<SynthesisChunk, any Error>

    /// What was kept, as a stream that has it all at once.
    static func replaying(_ chunks: [SynthesisChunk]) -> Chunks {
        AsyncThrowingStream { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }
    }

    /// `stream` as its consumer takes it, chunk by chunk in the consumer's own task (no task between
    /// them, so the first chunk comes no later), kept in `memory` once the engine ended it itself.
    /// Nothing is kept of a stream that failed, was cut short (its consumer cancelled or gone: the
    /// engine's stream is let go with this one, which stops the engine) or grew too long to keep.
    func remembering(_ stream: Chunks, of request: Utterance) -> Chunks {
        let taken = TakenChunks(stream.makeAsyncIterator(), limit: memory.withLock { $0.limits.samplesPerUtterance })
        return AsyncThrowingStream { [self] in
            if let chunk = try await taken.next() { return chunk }
            if !Task.isCancelled, let whole = taken.whole {
                self.memory.withLock { $0.remember(whole, of: request) }
            }
            return nil
        }
    }
}

/// The engine's stream and the chunks taken from it so far, while they may still be kept.
///
/// `@unchecked Sendable`: only the closure of one `AsyncThrowingStream(unfolding:)` uses it, and
/// that stream calls its closure for one `next()` at a time, never two at once.
private final class TakenChunks: @unchecked Sendable {
    private var iterator: EngineRouter.Chunks.AsyncIterator
    private var chunks: [SynthesisChunk] = []
    private var samples = 0
    private let limit: Int

    init(_ iterator: EngineRouter.Chunks.AsyncIterator, limit: Int) {
        self.iterator = iterator
        self.limit = limit
    }

    /// All the chunks, while they fit the limit; nil once they did not.
    var whole: [SynthesisChunk]? { samples <= limit ? chunks : nil }

    func next() async throws -> SynthesisChunk? {
        guard let chunk = try await iterator.next() else { return nil }
        if samples <= limit {
            samples += chunk.samples.count
            if samples <= limit { chunks.append(chunk) } else { chunks = [] }
        }
        return chunk
    }
}
