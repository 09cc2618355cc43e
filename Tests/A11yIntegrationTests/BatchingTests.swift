// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11yJSONLines
import A11yProtocol
import A11yTestSupport
import Logging
import NIOCore
import Synchronization
import Testing

/// Whether posts reach the queue in one step is said by the client (`batch`), never decided by
/// how the kernel split its bytes into reads.
@Suite struct BatchingTests {
    /// Records the size of each step in which items reach the queue; speaks nothing.
    final class StepRecorder: SpeechControl {
        private let state = Mutex((next: UInt64(1), steps: [[UtteranceID]]()))
        var steps: [[UtteranceID]] { state.withLock { $0.steps } }

        func prepare(_ request: SpeechRequest, for client: ClientID) async throws -> SpeechItem {
            let id = state.withLock { state in
                defer { state.next += 1 }
                return UtteranceID(rawValue: state.next)
            }
            return SpeechItem(id: id, kind: request.kind, utterance: Utterance(text: "x", segments: [], rate: 175, pitch: 50, volume: 100), owner: client)
        }
        /// Speech that has shut down takes nothing.
        let isShutDown: Bool
        init(isShutDown: Bool = false) { self.isShutDown = isShutDown }

        func post(_ items: [SpeechItem]) async -> Bool {
            if isShutDown { return false }
            state.withLock { $0.steps.append(items.map(\.id)) }
            return true
        }
        func pause(_ scope: ControlScope, at boundary: PauseBoundary) async -> Bool { false }
        func resume(_ scope: ControlScope) async -> Bool { false }
        func stop(_ scope: ControlScope) async -> Bool { false }
        func clientLeft(_ client: ClientID) async {}
        func status() async -> SpeechStatus { SpeechStatus(state: .idle, current: nil, pending: []) }
        func voices() async -> [VoiceInfo] { [] }
        func pronounce(_ request: SpeechRequest) async throws -> String { "" }
        func render(_ request: SpeechRequest) async throws -> RenderedAudio { RenderedAudio(format: AudioFormat(sampleRate: 22050), samples: []) }
        func lexicon(_ change: LexiconChange) async throws -> [LexiconListing] { [] }
        func events() -> AsyncStream<ClientEvent> { AsyncStream { $0.finish() } }
    }

    /// Hands `lines` to a connection as one read, and returns the steps and what it answered.
    func deliver(
        _ lines: [String], to speech: StepRecorder = StepRecorder()
    ) async throws -> (steps: [[UtteranceID]], answers: [ServerMessage]) {
        let router = JSONLinesRouter(speech: speech, logger: Logger(label: "test"))
        let client = ClientID.next()
        let outbox = await router.register(client)
        let connection = JSONLinesConnection(client: client, speech: speech, router: router, outbox: outbox)
        await connection.handle(LineBatch(lines: lines.map { ByteBuffer(string: $0) }, skippedOverlongLine: false))
        outbox.finish()
        let answers = Collected<ServerMessage>()
        try await outbox.drain { answers.append($0) }
        return (speech.steps, answers.all)
    }

    @Test func postsThatArriveInOneReadAreStillAppliedOneByOne() async throws {
        let (steps, answers) = try await deliver([
            #"{"op":"post","id":1,"text":"page deux","kind":"pageScrolled"}"#,
            #"{"op":"post","id":2,"text":"page trois","kind":"pageScrolled"}"#,
        ])
        #expect(steps == [[UtteranceID(rawValue: 1)], [UtteranceID(rawValue: 2)]])
        #expect(answers == [
            .reply(.posted(UtteranceID(rawValue: 1)), to: .number(1)),
            .reply(.posted(UtteranceID(rawValue: 2)), to: .number(2)),
        ])
    }

    @Test func aBatchIsAppliedInOneStepAndAnsweredWithEveryUtterance() async throws {
        let (steps, answers) = try await deliver([
            #"{"op":"batch","id":"b","posts":[{"text":"page deux","kind":"pageScrolled"},{"text":"page trois","kind":"pageScrolled"}]}"#,
        ])
        let ids = [UtteranceID(rawValue: 1), UtteranceID(rawValue: 2)]
        #expect(steps == [ids])
        #expect(answers == [.reply(.postedBatch(ids), to: .string("b"))])
    }

    @Test func aBatchWithOneBadPostIsRefusedWholeNamingIt() async throws {
        let (steps, answers) = try await deliver([
            #"{"op":"batch","id":3,"posts":[{"text":"bien"},{"text":"trop vite","rate":7}]}"#,
            #"{"op":"batch","id":4,"posts":[]}"#,
        ])
        #expect(steps.isEmpty)
        guard answers.count == 2, case .failure(let bad, .number(3)) = answers[0], case .failure(let empty, .number(4)) = answers[1] else {
            Issue.record("expected two failures, got \(answers)")
            return
        }
        #expect(bad.code == "invalid_request")
        #expect(bad.message.hasPrefix("posts[1]: 'rate'"))
        #expect(empty.code == "invalid_request")
    }

    @Test func postsThatArriveAsSpeechShutsDownEachGetTheirOneFinished() async throws {
        let (steps, answers) = try await deliver([
            #"{"op":"post","id":1,"text":"trop tard"}"#,
            #"{"op":"batch","id":2,"posts":[{"text":"un"},{"text":"deux"}]}"#,
        ], to: StepRecorder(isShutDown: true))
        #expect(steps.isEmpty)
        let finished = answers.compactMap { message -> (UtteranceID, FinishReason, String?)? in
            if case .event(.finished(let id, _, let reason, let why)) = message { return (id, reason, why) }
            return nil
        }
        #expect(finished.map(\.0) == [1, 2, 3].map { UtteranceID(rawValue: $0) }, "each accepted post ends once: \(answers)")
        #expect(finished.allSatisfy { $0.1 == .stopped && $0.2?.contains("shutting down") == true })
    }

    @Test func aBatchRoundTripsThroughTheCodec() throws {
        let line = RequestLine(.batch([Post(text: "un"), Post(text: "deux", queue: true)]), id: .number(9))
        let decoded = try LineCodec.decodeRequest(LineCodec.encode(line)).get()
        #expect(decoded == line)
        let tooMany = RequestLine(.batch(Array(repeating: Post(text: "x"), count: Request.batchLimit + 1)))
        guard case .failure(let failure) = LineCodec.decodeCheckedRequest(LineCodec.encode(tooMany)) else {
            Issue.record("a batch over the limit was accepted")
            return
        }
        #expect(failure.error.code == "invalid_request")
    }
}
