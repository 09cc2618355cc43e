// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// Set when the consumer of a synthesis stream goes away (cancelled task, dropped stream).
/// Written from any thread by `onTermination`, read by the worker thread: an atomic, so `Sendable`.
public final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func cancel() { flag.store(true, ordering: .relaxed) }
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}

/// Where a synthesis delivers its chunks, on the eSpeak thread as they are made: a stream's
/// continuation in process, or the channel back to the daemon in the engine worker process.
/// `finish` is called exactly once, last, with the failure if there was one.
public struct SynthesisSink: Sendable {
    private let deliver: @Sendable (SynthesisChunk) -> Void
    private let end: @Sendable ((any Error)?) -> Void

    public init(yield: @escaping @Sendable (SynthesisChunk) -> Void, finish: @escaping @Sendable ((any Error)?) -> Void) {
        self.deliver = yield
        self.end = finish
    }

    public init(_ continuation: AsyncThrowingStream<SynthesisChunk, any Error>.Continuation) {
        self.init(yield: { continuation.yield($0) }, finish: { continuation.finish(throwing: $0) })
    }

    public func yield(_ chunk: SynthesisChunk) { deliver(chunk) }
    public func finish() { end(nil) }
    public func finish(throwing error: any Error) { end(error) }
}
