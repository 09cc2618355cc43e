// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Synchronization

func request(_ text: String) -> Utterance {
    Utterance(
        text: text,
        segments: [SpeechSegment(content: .text(text), voice: "fr", sourceStart: 0, sourceLength: text.unicodeScalars.count)],
        rate: 175, pitch: 50, volume: 100)
}

func item(
    _ id: UInt64, _ kind: NotificationKind = .announcement, priority: Priority? = nil, queued: Bool = false,
    text: String? = nil
) -> SpeechItem {
    SpeechItem(
        id: UtteranceID(rawValue: id), kind: kind, urgency: .voiceOver(priority ?? kind.defaultPriority, queued: queued),
        playsEarcon: kind == .screenChanged, utterance: request(text ?? "item \(id)"))
}

/// An engine that "speaks" every word of the text as 100 frames of a constant sample.
struct FakeEngine: SpeechEngine {
    var format: AudioFormat { AudioFormat(sampleRate: 1000) }
    var failOn: String?

    func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        AsyncThrowingStream { continuation in
            var frame = 0
            for segment in request.segments {
                guard case .text(let text) = segment.content else { continue }
                if text == failOn {
                    continuation.finish(throwing: SpeechError(.engineFailed, "fake failure"))
                    return
                }
                if let mark = segment.options.markBefore {
                    continuation.yield(SynthesisChunk(samples: [], marks: [NamedMark(frame: frame, name: mark)]))
                }
                var offset = 0
                for word in text.split(separator: " ", omittingEmptySubsequences: false) {
                    let length = word.unicodeScalars.count
                    continuation.yield(SynthesisChunk(
                        samples: [Int16](repeating: 1000, count: 100),
                        words: [WordMark(frame: frame, start: segment.sourceStart + offset, length: length)]))
                    frame += 100
                    offset += length + 1
                }
            }
            continuation.finish()
        }
    }

    func voices() async -> [VoiceInfo] { [VoiceInfo(identifier: "fr", name: "French", languages: ["fr"])] }
    func resolveVoice(language: String) async throws -> String { "fr" }
}

/// An output whose playhead moves only when the test says so (`advance`), or at once (`instant`).
/// Like a real output it tells the current track's progress whenever it changes, and ignores calls
/// for a track that is not its current one (and logs them).
final class FakeOutput: AudioOutput {
    struct State {
        var track = TrackID(rawValue: 0)
        var updates: AsyncStream<PlaybackProgress>.Continuation?
        var appended = 0
        var played = 0
        var ended = false
        var paused = false
        var hold: Int?
        var tracks = 0
        var cancels = 0
        var connection = PlaybackProgress.Connection.connected
        var log: [String] = []

        var progress: PlaybackProgress {
            PlaybackProgress(
                playedFrames: played, appendedFrames: appended,
                isFinished: ended && played >= appended,
                connection: connection)
        }
    }
    let state: Mutex<State>
    let instant: Bool

    init(instant: Bool) {
        self.instant = instant
        state = Mutex(State())
    }

    /// Changes the state and tells the track's progress.
    private func change(_ body: (inout State) -> Void) {
        state.withLock {
            body(&$0)
            $0.updates?.yield($0.progress)
        }
    }

    /// Applies `body` if `track` is current, else logs the stale call.
    private func on(_ track: TrackID, _ call: String, _ body: (inout State) -> Void) {
        change {
            guard $0.track == track else { return $0.log.append("ignored \(call) for \(track)") }
            body(&$0)
        }
    }

    func begin(format: AudioFormat) async -> PlaybackTrack {
        let (progress, updates) = AsyncStream.makeStream(of: PlaybackProgress.self, bufferingPolicy: .bufferingNewest(1))
        let track = state.withLock {
            $0.updates?.finish()
            let track = TrackID(rawValue: $0.track.rawValue + 1)
            $0 = State(
                track: track, updates: updates, tracks: $0.tracks + 1, cancels: $0.cancels, connection: $0.connection,
                log: $0.log + ["begin"])
            return track
        }
        return PlaybackTrack(id: track, progress: progress)
    }
    func append(_ samples: [Int16], to track: TrackID) async {
        on(track, "append") {
            $0.appended += samples.count
            if instant && !$0.paused { $0.played = min($0.appended, $0.hold ?? .max) }
        }
    }
    func end(_ track: TrackID) async { on(track, "end") { $0.ended = true; $0.log.append("end") } }
    func hold(_ track: TrackID, at frame: Int?) async {
        on(track, "hold") { $0.hold = frame; $0.log.append("hold \(frame.map(String.init) ?? "nil")") }
    }
    func setPaused(_ paused: Bool, _ track: TrackID) async {
        on(track, paused ? "cork" : "uncork") {
            $0.paused = paused
            $0.log.append(paused ? "cork" : "uncork")
            if instant && !paused { $0.played = min($0.appended, $0.hold ?? .max) }
        }
    }
    func cancel(_ track: TrackID) async {
        on(track, "cancel") {
            $0.cancels += 1; $0.appended = 0; $0.played = 0; $0.log.append("cancel")
            $0.updates?.finish()
            $0.updates = nil
        }
    }
    func progress(of track: TrackID) async -> PlaybackProgress? {
        state.withLock { $0.track == track ? $0.progress : nil }
    }

    /// Moves the playhead, as the server would, unless paused.
    func advance(by frames: Int) {
        change {
            guard !$0.paused else { return }
            $0.played = min($0.played + frames, $0.hold ?? $0.appended, $0.appended)
        }
    }

    /// The sound server goes away or comes back.
    func setConnected(_ connected: Bool) { change { $0.connection = connected ? .connected : .reconnecting } }
    func serverStatus() async -> SoundServerStatus {
        SoundServerStatus(server: "fake", state: state.withLock { $0.connection } == .connected ? .connected : .connecting)
    }
}

/// A clock whose sleeps return at once (after letting other tasks run): no real waiting in tests.
struct ImmediateClock: Clock {
    typealias Duration = Swift.Duration
    struct Instant: InstantProtocol {
        var offset: Swift.Duration
        func advanced(by duration: Swift.Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Swift.Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }
    var now: Instant { Instant(offset: .zero) }
    var minimumResolution: Swift.Duration { .zero }
    func sleep(until deadline: Instant, tolerance: Swift.Duration?) async throws {
        try Task.checkCancellation()
        await Task.yield()
        try Task.checkCancellation()
    }
}

/// Collects a coordinator's events until a condition holds.
actor EventLog {
    private(set) var events: [SpeechEvent] = []
    private var waiters: [(condition: @Sendable ([SpeechEvent]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    func record(_ event: SpeechEvent) {
        events.append(event)
        waiters.removeAll { waiter in
            if waiter.condition(events) { waiter.continuation.resume(); return true }
            return false
        }
    }

    func wait(until condition: @escaping @Sendable ([SpeechEvent]) -> Bool) async {
        if condition(events) { return }
        await withCheckedContinuation { waiters.append((condition, $0)) }
    }

    func finishedCount() -> Int { events.filter { if case .finished = $0 { true } else { false } }.count }
}

extension Array where Element == SpeechEvent {
    func finishes() -> [(UInt64, FinishReason)] {
        compactMap { if case .finished(let id, _, let reason, _) = $0 { (id.rawValue, reason) } else { nil } }
    }
    func count(finished: Int) -> Bool { finishes().count >= finished }
}

/// A `FakeOutput` whose `setPaused(true)` calls wait, in flight, until the test releases them:
/// a control that is slow to reach the output, as under load.
final class GatedOutput: AudioOutput {
    let fake = FakeOutput(instant: false)
    private let gate = Mutex<(held: [CheckedContinuation<Void, Never>], open: Bool)>(([], false))
    /// When set, `progress` calls are held too (until `release`).
    let gatesProgress = Mutex(false)
    /// When set, `begin` calls are held too (until `release`).
    let gatesBegin = Mutex(false)
    /// When set, `append` calls are held too (until `release`).
    let gatesAppend = Mutex(false)

    var heldCalls: Int { gate.withLock { $0.held.count } }

    /// Lets every held call through, and every later one at once.
    func release() {
        let held = gate.withLock { state in
            state.open = true
            defer { state.held = [] }
            return state.held
        }
        for call in held { call.resume() }
    }

    func begin(format: AudioFormat) async -> PlaybackTrack {
        if gatesBegin.withLock({ $0 }) { await passGate() }
        return await fake.begin(format: format)
    }
    func append(_ samples: [Int16], to track: TrackID) async {
        if gatesAppend.withLock({ $0 }) { await passGate() }
        await fake.append(samples, to: track)
    }
    func end(_ track: TrackID) async { await fake.end(track) }
    func hold(_ track: TrackID, at frame: Int?) async { await fake.hold(track, at: frame) }
    func setPaused(_ paused: Bool, _ track: TrackID) async {
        if paused { await passGate() }
        await fake.setPaused(paused, track)
    }
    func cancel(_ track: TrackID) async { await fake.cancel(track) }
    func progress(of track: TrackID) async -> PlaybackProgress? {
        if gatesProgress.withLock({ $0 }) { await passGate() }
        return await fake.progress(of: track)
    }
    func serverStatus() async -> SoundServerStatus { await fake.serverStatus() }

    private func passGate() async {
        await withCheckedContinuation { call in
            let open = gate.withLock { state in
                if !state.open { state.held.append(call) }
                return state.open
            }
            if open { call.resume() }
        }
    }
}

/// An engine whose audio comes when the test says: `say` yields one 100-frame word, `finish` ends.
final class ScriptedEngine: SpeechEngine {
    var format: AudioFormat { AudioFormat(sampleRate: 1000) }
    private let sink = Mutex<(continuation: AsyncThrowingStream<SynthesisChunk, any Error>.Continuation?, frame: Int)>((nil, 0))

    private let ended = Mutex(0)

    func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SynthesisChunk.self)
        continuation.onTermination = { [weak self] _ in self?.ended.withLock { $0 += 1 } }
        sink.withLock { $0 = (continuation, 0) }
        return stream
    }

    var isSynthesizing: Bool { sink.withLock { $0.continuation != nil } }
    /// Streams ended, by the engine or by their consumer (a real engine stops synthesising then).
    var endedStreams: Int { ended.withLock { $0 } }

    func say(start: Int, length: Int) {
        sink.withLock {
            $0.continuation?.yield(SynthesisChunk(
                samples: [Int16](repeating: 1000, count: 100), words: [WordMark(frame: $0.frame, start: start, length: length)]))
            $0.frame += 100
        }
    }

    func finish() { sink.withLock { $0.continuation?.finish() } }

    func voices() async -> [VoiceInfo] { [VoiceInfo(identifier: "fr", name: "French", languages: ["fr"])] }
    func resolveVoice(language: String) async throws -> String { "fr" }
}
