// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Synchronization

/// A speech API that speaks nothing: it records what front ends ask and tells each posted item's
/// life on `events()` (started, each SSML mark, finished), after `eventDelay`. With `holds` set,
/// items stay "speaking" until stopped.
final class FakeSpeech: SpeechControl {
    struct Control: Equatable, Sendable {
        var name: String
        var scope: ControlScope
    }

    private struct State {
        var nextID: UInt64 = 1
        var requests: [UtteranceID: SpeechRequest] = [:]
        var posted: [(item: SpeechItem, client: ClientID)] = []
        var speaking: [(item: SpeechItem, client: ClientID)] = []
        var controls: [Control] = []
        var left: [ClientID] = []
        var subscribers: [AsyncStream<ClientEvent>.Continuation] = []
        var whilePosting: (@Sendable ([SpeechItem]) async -> Void)?
    }

    private let state = Mutex(State())
    let eventDelay: Duration
    let holds: Bool

    init(eventDelay: Duration = .milliseconds(20), holds: Bool = false) {
        self.eventDelay = eventDelay
        self.holds = holds
    }

    var posted: [(request: SpeechRequest, client: ClientID)] {
        state.withLock { state in state.posted.map { (state.requests[$0.item.id]!, $0.client) } }
    }

    var controls: [Control] { state.withLock { $0.controls } }
    /// Runs inside `post`, before it returns: what may happen while a post is under way.
    var whilePosting: (@Sendable ([SpeechItem]) async -> Void)? {
        get { state.withLock { $0.whilePosting } }
        set { state.withLock { $0.whilePosting = newValue } }
    }
    /// The clients whose departure was told (`clientLeft`), in order.
    var left: [ClientID] { state.withLock { $0.left } }

    func prepare(_ request: SpeechRequest, for client: ClientID) async throws -> SpeechItem {
        if case .ssml(let markup) = request.content, !markup.contains("<speak") {
            throw SpeechError(.invalidSSML, "no <speak>")
        }
        return state.withLock { state in
            let id = UtteranceID(rawValue: state.nextID)
            state.nextID += 1
            state.requests[id] = request
            return SpeechItem(
                id: id, kind: request.kind, urgency: request.urgency,
                utterance: Utterance(text: Self.text(request.content), segments: [], rate: 175, pitch: 50, volume: 100),
                owner: client)
        }
    }

    func post(_ items: [SpeechItem]) async -> Bool {
        await whilePosting?(items)
        state.withLock { state in
            for item in items {
                let client = item.owner!
                state.posted.append((item, client))
                if holds { state.speaking.append((item, client)) }
            }
        }
        for item in items {
            let client = item.owner!
            let request = state.withLock { $0.requests[item.id]! }
            let delay = eventDelay
            let holds = self.holds
            Task {
                try? await Task.sleep(for: delay)
                self.emit(.started(item.id), to: client)
                if case .ssml(let markup) = request.content {
                    for name in Self.marks(in: markup) { self.emit(.mark(item.id, name: name), to: client) }
                }
                if !holds { self.emit(.finished(item.id, text: item.text, reason: .spoken, message: nil), to: client) }
            }
        }
        return true
    }

    func pause(_ scope: ControlScope, at boundary: PauseBoundary) async -> Bool {
        record("pause", scope)
        return true
    }

    func resume(_ scope: ControlScope) async -> Bool {
        record("resume", scope)
        return true
    }

    func stop(_ scope: ControlScope) async -> Bool {
        record("stop", scope)
        let stopped = state.withLock { state in
            let stopped = state.speaking.filter { Self.inScope($0.client, scope) }
            state.speaking.removeAll { Self.inScope($0.client, scope) }
            return stopped
        }
        for (item, client) in stopped {
            emit(.finished(item.id, text: item.text, reason: .stopped, message: "stopped"), to: client)
        }
        return !stopped.isEmpty
    }

    func clientLeft(_ client: ClientID) async {
        state.withLock { $0.left.append(client) }
    }

    func status() async -> SpeechStatus { SpeechStatus(state: .idle, current: nil, pending: []) }

    func voices() async -> [VoiceInfo] {
        [
            VoiceInfo(identifier: "fr", name: "French (France)", languages: ["fr-fr"]),
            VoiceInfo(identifier: "en-us", name: "English (America)", languages: ["en-us"]),
            VoiceInfo(identifier: "de", name: "German", languages: ["de"]),
        ]
    }

    func pronounce(_ request: SpeechRequest) async throws -> String { "" }

    func render(_ request: SpeechRequest) async throws -> RenderedAudio {
        RenderedAudio(format: AudioFormat(sampleRate: 22050), samples: [])
    }

    func lexicon(_ change: LexiconChange) async throws -> [LexiconListing] { [] }

    func events() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self)
        state.withLock { $0.subscribers.append(continuation) }
        return stream
    }

    /// Ends every event stream, as speech does at shutdown.
    func shutDown() {
        for subscriber in state.withLock({ $0.subscribers }) { subscriber.finish() }
    }

    private func emit(_ event: SpeechEvent, to client: ClientID) {
        for subscriber in state.withLock({ $0.subscribers }) { subscriber.yield(ClientEvent(event, owner: client)) }
    }

    private func record(_ name: String, _ scope: ControlScope) {
        state.withLock { $0.controls.append(Control(name: name, scope: scope)) }
    }

    private static func inScope(_ client: ClientID, _ scope: ControlScope) -> Bool {
        switch scope {
        case .all: true
        case .client(let other): other == client
        }
    }

    private static func text(_ content: SpeechRequest.Content) -> String {
        switch content {
        case .text(let text, _): text
        case .ssml(let markup): markup
        case .element(let element): element.label ?? ""
        }
    }

    /// The names of `<mark name="…"/>` in order (enough for the tests' markup).
    static func marks(in markup: String) -> [String] {
        markup.split(separator: "<mark name=\"").dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
    }
}
