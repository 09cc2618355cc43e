// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// Runs the queue for real: applies `SpeechQueue`'s effects to an engine and an output, one
/// item at a time, and publishes every event on `events`.
public actor SpeechCoordinator {
    public struct Configuration: Sendable {
        /// Most bytes the waiting items may hold (config `queue.max_bytes`).
        public var pendingByteLimit = SpeechQueue.defaultPendingByteLimit
        /// How far ahead of what is heard the server may already hold audio.
        public var serverBufferMilliseconds: Int = 80
        /// How long an item waits for a lost sound server to come back before it fails.
        public var audioReconnectGrace: Duration = .seconds(3)
        /// How long audio that should be playing may stand still before the item is failed, so
        /// that one stuck item can never silence everything queued behind it.
        public var playbackStallLimit: Duration = .seconds(3)

        public init() {}
    }

    private var queue: SpeechQueue
    private let engine: any SpeechEngine
    private let output: any AudioOutput
    private let clock: any Clock<Duration>
    private let configuration: Configuration
    private var player: (id: UtteranceID, control: @Sendable (PlayerControl) -> Void, task: Task<Void, Never>)?
    /// The next item's id: a counter, taken without a hop onto the actor (as `ClientID.next()`).
    private let nextID = Atomic<UInt64>(1)
    private var isShutDown = false

    /// Every event of every item, in the order they happen, as the queue emits it
    /// (`SpeechQueue.Effect.emit`). One consumer.
    public nonisolated let events: AsyncStream<ClientEvent>
    private let eventSink: AsyncStream<ClientEvent>.Continuation

    public init(
        engine: any SpeechEngine, output: any AudioOutput, configuration: Configuration = .init(),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.engine = engine
        self.output = output
        self.configuration = configuration
        self.clock = clock
        self.queue = SpeechQueue(pendingByteLimit: configuration.pendingByteLimit)
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// A fresh id for an item about to be posted: 1, 2, 3… for this coordinator, from any thread.
    public nonisolated func makeID() -> UtteranceID {
        UtteranceID(rawValue: nextID.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    /// Accepts items, applied as one step. Each one's life is then told on `events`, ending with
    /// exactly one `finished`. Returns false, accepting nothing, once shut down.
    @discardableResult
    public func post(_ items: [SpeechItem]) -> Bool {
        guard !isShutDown else { return false }
        for item in items { apply(queue.post(item)) }
        return true
    }

    @discardableResult
    public func post(_ item: SpeechItem) -> Bool { post([item]) }

    @discardableResult
    public func pause(_ scope: ControlScope = .all, at boundary: PauseBoundary) -> Bool {
        let (effective, effects) = queue.pause(scope, at: boundary)
        apply(effects)
        return effective
    }

    @discardableResult
    public func resume(_ scope: ControlScope = .all) -> Bool {
        let (effective, effects) = queue.resume(scope)
        apply(effects)
        return effective
    }

    @discardableResult
    public func stop(_ scope: ControlScope = .all) -> Bool {
        let (effective, effects) = queue.stop(scope)
        apply(effects)
        return effective
    }

    /// The client has gone: what its own pause held ends (`SpeechQueue.clientLeft`).
    public func clientLeft(_ client: ClientID) {
        apply(queue.clientLeft(client))
    }

    public func status() -> SpeechStatus {
        SpeechStatus(state: queue.state, current: queue.current?.item, pending: Array(queue.pending))
    }

    /// Stops everything, refuses new items, waits until the current item has ended, and then
    /// finishes `events`: its last elements are the `finished` of everything that was queued.
    public func shutDown() async {
        isShutDown = true
        apply(queue.stop(reason: .stopped).effects)
        while let task = player?.task { await task.value }
        eventSink.finish()
    }

    // MARK: - Effects

    private func apply(_ effects: [SpeechQueue.Effect]) {
        for effect in effects {
            switch effect {
            case .play(let item):
                startPlayer(for: item)
            case .cancelPlayback(let id):
                if let player, player.id == id {
                    player.task.cancel()
                }
            case .pausePlayback(let id, let boundary):
                if let player, player.id == id { player.control(.pause(boundary)) }
            case .resumePlayback(let id):
                if let player, player.id == id { player.control(.resume) }
            case .emit(let event):
                eventSink.yield(event)
            }
        }
    }

    private func startPlayer(for item: SpeechItem) {
        let id = item.id
        let (run, control) = Self.player(
            for: item, engine: engine, output: output, clock: clock, settings: configuration,
            report: { [weak self] report in await self?.playerReported(report, for: id) })
        let task = Task {
            let outcome = await run()
            self.playerEnded(id, outcome)
        }
        player = (id, control, task)
    }

    /// The player's `run` and its controls, on the coordinator's clock as its own type.
    private static func player<C: Clock<Duration>>(
        for item: SpeechItem, engine: any SpeechEngine, output: any AudioOutput, clock: C,
        settings: Configuration, report: @escaping @Sendable (PlayerReport) async -> Void
    ) -> (run: @Sendable () async -> SpeechQueue.PlaybackOutcome, control: @Sendable (PlayerControl) -> Void) {
        let player = ItemPlayer(
            item: item, engine: engine, output: output, clock: clock, settings: settings, report: report)
        return ({ await player.run() }, { player.control($0) })
    }

    private func playerReported(_ report: PlayerReport, for id: UtteranceID) {
        guard queue.current?.item.id == id else { return }
        switch report {
        case .audible:
            apply(queue.playbackAudible(id))
        case .word(let start, let length):
            apply(queue.wordHeard(id, start: start, length: length))
        case .mark(let name):
            apply(queue.markHeard(id, name: name))
        case .pausedAtWord:
            apply(queue.playbackPaused(id))
        }
    }

    private func playerEnded(_ id: UtteranceID, _ outcome: SpeechQueue.PlaybackOutcome) {
        if player?.id == id { player = nil }
        apply(queue.playbackEnded(id, outcome))
    }
}
