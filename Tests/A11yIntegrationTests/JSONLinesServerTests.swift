// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yJSONLines
import A11yProtocol
import A11ySystem
import A11yTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The JSON Lines front end over a real Unix socket, against a speech API that speaks nothing: what
/// its connections do at their end, through the connection loop every front end shares
/// (`SocketFrontEnd`).
@Suite(.serialized) struct JSONLinesServerTests {
    /// Each item ends as it is posted: its `started` and `finished` are on `events()` before `post`
    /// returns (a moment later, so that the front end's router runs them first if it can). Records
    /// which clients were told gone.
    final class InstantSpeech: SpeechControl {
        private let state = Mutex((next: UInt64(1), left: [ClientID](), subscribers: [AsyncStream<ClientEvent>.Continuation]()))
        var left: [ClientID] { state.withLock { $0.left } }

        func prepare(_ request: SpeechRequest, for client: ClientID) async throws -> SpeechItem {
            let id = state.withLock { state in
                defer { state.next += 1 }
                return UtteranceID(rawValue: state.next)
            }
            return SpeechItem(
                id: id, kind: request.kind, utterance: Utterance(text: "x", segments: [], rate: 175, pitch: 50, volume: 100), owner: client)
        }
        func post(_ items: [SpeechItem]) async -> Bool {
            for item in items {
                emit(ClientEvent(.started(item.id), owner: item.owner))
                emit(ClientEvent(.finished(item.id, text: item.text, reason: .spoken, message: nil), owner: item.owner))
            }
            try? await Task.sleep(for: .milliseconds(50))
            return true
        }
        func pause(_ scope: ControlScope, at boundary: PauseBoundary) async -> Bool { false }
        func resume(_ scope: ControlScope) async -> Bool { false }
        func stop(_ scope: ControlScope) async -> Bool { false }
        func clientLeft(_ client: ClientID) async { state.withLock { $0.left.append(client) } }
        func status() async -> SpeechStatus { SpeechStatus(state: .idle, current: nil, pending: []) }
        func voices() async -> [VoiceInfo] { [] }
        func pronounce(_ request: SpeechRequest) async throws -> String { "" }
        func render(_ request: SpeechRequest) async throws -> RenderedAudio { RenderedAudio(format: AudioFormat(sampleRate: 22050), samples: []) }
        func lexicon(_ change: LexiconChange) async throws -> [LexiconListing] { [] }
        func events() -> AsyncStream<ClientEvent> {
            let (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self)
            state.withLock { $0.subscribers.append(continuation) }
            return stream
        }
        func shutDown() {
            for subscriber in state.withLock({ $0.subscribers }) { subscriber.finish() }
        }
        private func emit(_ event: ClientEvent) {
            for subscriber in state.withLock({ $0.subscribers }) { subscriber.yield(event) }
        }
    }

    /// A server on a fresh private socket, stopped at the end of `body`.
    func withServer(_ body: (_ path: String, _ speech: InstantSpeech) async throws -> Void) async throws {
        let folder = NSTemporaryDirectory() + "a11y-jsonlines-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let path = folder + "/a11yd.sock"
        let speech = InstantSpeech()
        let server = JSONLinesServer(listener: .path(path), speech: speech, logger: Logger(label: "test"))
        let running = Task { try await server.run() }
        defer {
            running.cancel()
            speech.shutDown()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !SocketProbe.accepts(path: path) {
            guard ContinuousClock.now < deadline else { throw TestFailure("the socket never accepted") }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await body(path, speech)
    }

    @Test func speechIsToldWhenAClientLeavesByClosingOrHalfClosing() async throws {
        try await withServer { path, speech in
            for halfCloses in [false, true] {
                let before = speech.left.count
                let client = try await TestClient.connect(path: path)
                _ = try await client.post(Post(text: "bonjour"))
                if halfCloses { await client.closeWriting() } else { await client.close() }
                let deadline = ContinuousClock.now + .seconds(5)
                while speech.left.count == before {
                    guard ContinuousClock.now < deadline else {
                        throw TestFailure("speech was not told the client left (half-closed: \(halfCloses))")
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
                if halfCloses { try await client.waitUntilClosed() }
            }
        }
    }

    @Test func anItemThatEndsAsItIsPostedStillEndsAHalfClosedConversation() async throws {
        try await withServer { path, _ in
            let client = try await TestClient.connect(path: path)
            let id = try await client.post(Post(text: "bonjour"))
            // Its `finished` reached the router while the post was still under way: the router knew
            // the item was the client's from before, so the connection closes once it is sent.
            await client.closeWriting()
            _ = try await client.finished(id, timeout: .seconds(5))
            try await client.waitUntilClosed(timeout: .seconds(5))
            #expect(await client.received.map(\.utterance) == [id, id, id], "the reply, started and finished, in that order")
        }
    }
}
