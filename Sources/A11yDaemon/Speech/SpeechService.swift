// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yPronunciation
import Logging
import ServiceLifecycle
import Synchronization

/// Speech for every front end: plans requests, runs the queue (`SpeechCoordinator`) and hands each
/// front end every event with the client it belongs to. It knows nothing of sockets.
///
/// As a service it runs until a graceful shutdown: then it stops every item (each gets its
/// `finished`), delivers those last events, and ends every front end's event stream. The daemon
/// lists it last in its service group so that it shuts down first, while connections are open.
public final class SpeechService: SpeechControl, Service {
    private let coordinator: SpeechCoordinator
    private let planner: UtterancePlanner
    private let engine: any SpeechEngine
    private let output: any AudioOutput
    private let pronouncer: Pronouncer
    private let fanOut = EventFanOut()
    private let logger: Logger
    private let byteLimit: Int
    /// Config `earcon.screen_changed`, read at start (a reload does not change it).
    private let earcon: Bool

    public init(
        engine: any SpeechEngine, output: any AudioOutput, pronouncer: Pronouncer, lexicon: LexiconStore,
        configuration: DaemonConfiguration, environment: [String: String], logger: Logger
    ) {
        var settings = SpeechCoordinator.Configuration()
        settings.pendingByteLimit = configuration.queueMaxBytes
        coordinator = SpeechCoordinator(engine: engine, output: output, configuration: settings)
        planner = UtterancePlanner(
            engine: engine, pronouncer: pronouncer, lexicon: lexicon, configuration: configuration,
            environment: environment, logger: logger)
        self.engine = engine
        self.output = output
        self.pronouncer = pronouncer
        self.logger = logger
        self.byteLimit = configuration.queueMaxBytes
        self.earcon = configuration.earcon
    }

    public var currentConfiguration: DaemonConfiguration { planner.configuration.withLock { $0 } }

    /// Applies a reloaded configuration to what comes next. Only the voice settings take effect
    /// without a restart (`ConfigReloadService` says which).
    public func update(_ new: DaemonConfiguration) {
        planner.configuration.withLock { $0 = new }
    }

    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                // Ends when the coordinator's stream does: after the last `finished` of a shutdown.
                for await delivery in self.coordinator.events {
                    self.fanOut.deliver(delivery)
                    if case .finished(let id, _, let reason, let message) = delivery.event {
                        if reason == .dropped, message == SpeechQueue.droppedForBound {
                            self.logger.warning(
                                "an item was dropped: the waiting items reached the queue's memory bound",
                                metadata: ["utterance": "\(id)", "queue.max_bytes": "\(self.byteLimit)"])
                        }
                        self.logger.debug("finished", metadata: ["utterance": "\(id)", "reason": "\(reason)", "message": "\(message ?? "")"])
                    }
                }
                self.fanOut.finish()
            }
            // Cancellation (the group gave up waiting) is a shutdown too.
            try? await gracefulShutdown()
            await coordinator.shutDown()
        }
    }

    // MARK: - SpeechControl

    public func prepare(_ request: SpeechRequest, for client: ClientID) async throws -> SpeechItem {
        // Each event of the item comes back from the queue with its owner.
        return SpeechItem(
            id: coordinator.makeID(), kind: request.kind, urgency: request.urgency,
            playsEarcon: Self.playsEarcon(request, earcon: earcon), utterance: try await planner.plan(request),
            owner: client)
    }

    /// The one place that decides whether an item opens with the earcon: a new screen, when the
    /// configuration wants it (`SpeechItem.playsEarcon`).
    static func playsEarcon(_ request: SpeechRequest, earcon: Bool) -> Bool {
        earcon && request.kind == .screenChanged
    }

    public func post(_ items: [SpeechItem]) async -> Bool {
        await coordinator.post(items)
    }

    public func pause(_ scope: ControlScope, at boundary: PauseBoundary) async -> Bool {
        await coordinator.pause(scope, at: boundary)
    }

    public func resume(_ scope: ControlScope) async -> Bool {
        await coordinator.resume(scope)
    }

    public func stop(_ scope: ControlScope) async -> Bool {
        await coordinator.stop(scope)
    }

    public func clientLeft(_ client: ClientID) async {
        await coordinator.clientLeft(client)
    }

    public func status() async -> SpeechStatus {
        var status = await coordinator.status()
        status.audio = await output.serverStatus()
        return status
    }

    public func voices() async -> [VoiceInfo] {
        await engine.voices()
    }

    public func pronounce(_ request: SpeechRequest) async throws -> String {
        try await pronouncer.showIPA(try await planner.plan(request).segments)
    }

    public func render(_ request: SpeechRequest) async throws -> RenderedAudio {
        var samples: [Int16] = []
        for try await chunk in engine.synthesize(try await planner.plan(request)) {
            samples += chunk.samples
            // About 2 minutes of audio is the most one reply carries.
            if samples.count > engine.format.sampleRate * 120 {
                throw SpeechError(.invalidRequest, "the utterance is longer than 2 minutes; render it in parts")
            }
        }
        return RenderedAudio(format: engine.format, samples: samples)
    }

    public func lexicon(_ change: LexiconChange) async throws -> [LexiconListing] {
        let store = planner.lexicon
        do {
            switch change {
            case .add(let entry):
                try await store.add(entry, checkedWith: pronouncer, defaultVoice: try await planner.defaultVoice())
                return [LexiconListing(entry: entry, source: store.location.userFile)]
            case .remove(let grapheme, let language):
                return try store.remove(grapheme: grapheme, language: language)
                    .map { LexiconListing(entry: $0, source: store.location.userFile) }
            case .list:
                return store.sources.flatMap { source in
                    source.lexicon.entries.map { LexiconListing(entry: $0, source: source.path) }
                }
            }
        } catch let error as LexiconFileError {
            throw SpeechError(.lexiconFile, error.description)
        }
    }

    /// Reads the lexicon files again (SIGHUP); a file that does not parse keeps its last good
    /// version, and is returned with where and why.
    public func reloadLexicon() -> [LexiconFileError] {
        planner.lexicon.reload()
    }

    public func events() -> AsyncStream<ClientEvent> {
        fanOut.subscribe()
    }
}

/// Copies every event, as the queue emitted it (`SpeechQueue.Effect.emit`), to each front end's stream.
final class EventFanOut: Sendable {
    private struct State {
        var subscribers: [AsyncStream<ClientEvent>.Continuation] = []
        var isFinished = false
    }

    private let state = Mutex(State())

    func subscribe() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self)
        let finished = state.withLock { state in
            if !state.isFinished { state.subscribers.append(continuation) }
            return state.isFinished
        }
        if finished { continuation.finish() }
        return stream
    }

    func deliver(_ event: ClientEvent) {
        let subscribers = state.withLock { $0.subscribers }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    func finish() {
        let subscribers = state.withLock { state in
            state.isFinished = true
            defer { state.subscribers.removeAll() }
            return state.subscribers
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
