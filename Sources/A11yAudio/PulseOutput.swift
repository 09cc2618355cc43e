// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `AudioOutput` on PulseAudio's asynchronous API: a `ServerConnection`, two `PlaybackStream`s on it
/// and the current `Track`; this type feeds the track to its stream. A track that interrupts another
/// plays on the other stream while the one it cuts ramps down (`StreamPair`).
///
/// Appended PCM is kept in-process and written only as the server asks for it (tlength about 30 ms,
/// minreq 5 ms, prebuf one frame so that short tracks start and the end of a track plays out).
/// While idle the stream is corked. Sound that is cut (`cancel`, an immediate pause) is ramped
/// down over `Ramp.milliseconds` by rewriting what the server has not read yet, and a resume ramps
/// up again (docs/architecture.md, "Cuts are ramped"). If the server goes away, the
/// output reports `isConnected == false`, reconnects with a fresh context every 150 ms and then
/// carries on with the current track from the first frame not yet given to the server; while no
/// server was ever reached, a track is told at once that none is reachable, and why.
///
/// Which stream a track plays on, and what to write where, when to ramp, cork, flush, drain or ask
/// the server is decided by the pure rules of `StreamPair` and `StreamFeed`; this type only reads
/// what the streams know, hands each call and each answer of the server to the rules, and carries
/// out what they return.
///
/// Every method returns promptly: none waits for the server.
///
/// `@unchecked Sendable`: all mutable state (the rules, the stream and every libpulse object) is
/// touched only with the threaded mainloop's lock held, either by the public methods (through
/// `mainloop.withLock`) or by libpulse callbacks (which run on the mainloop thread with that lock
/// held), so one input is handled and carried out at a time. `deinit` removes every callback under
/// the same lock before anything is freed.
public final class PulseOutput: AudioOutput, @unchecked Sendable {
    private let mainloop: ThreadedMainloop
    private let logger: Logger
    private let connection: ServerConnection
    /// Lowers other streams while speech is audible (when configured), restores them after.
    private let ducker: Ducker
    /// Keeps the two streams at the volume the user sets on either.
    private let volumes = StreamVolumes()
    /// The two playback streams, by `StreamPair.Lane` (nil: none open).
    private var streams: [PlaybackStream?] = [nil, nil]
    /// The current track, its stream, and what the rules decided about each stream.
    private var pair = StreamPair()
    /// Where the current track's progress is told, and what was told last.
    private var updates: AsyncStream<PlaybackProgress>.Continuation?
    private var lastUpdate: PlaybackProgress?

    /// - Parameters:
    ///   - server: a libpulse server string (`unix:/path/native`, …); `nil` uses libpulse's default,
    ///     which honours `PULSE_SERVER`.
    ///   - identity: the name, icon and role the sound server shows for the connection and stream.
    ///   - ducking: whether other streams are lowered while speech is audible, and where the streams
    ///     lowered are remembered (read at each connection, to restore what a crash left lowered).
    /// Connects in the background: never blocks on, and never fails because of, the server.
    public init(
        identity: PlaybackIdentity = PlaybackIdentity(), server: String? = nil, ducking: Ducking = .off, logger: Logger
    ) {
        self.logger = logger
        mainloop = ThreadedMainloop(name: "a11y-pulse")
        ducker = Ducker(settings: ducking, mainloop: mainloop, logger: logger)
        connection = ServerConnection(
            mainloop: mainloop, identity: identity, server: server, environment: Environment.variable, logger: logger)
        // Callbacks reach `self` unowned: see the type's comment for why it cannot be gone.
        connection.onEvent = { [unowned(unsafe) self] event in self.connectionChanged(event) }
        if !mainloop.start() {
            logger.error("cannot start the libpulse event thread; audio output disabled")
        }
        mainloop.withLock { connection.connect() }
    }

    deinit {
        guard mainloop.isEventThread else { return close() }
        // The owner let go while a callback held `self` (a callback holds what it calls for as long as
        // it runs), so the last reference went here, on the event thread, whose lock is held already
        // and which can neither stop nor free itself (libpulse aborts). Speech stops and the restores
        // are sent now; the rest of closing runs on a thread of its own, which holds the loop until then.
        guard beginClosing() else { return }
        endSpeech()
        let rest = ClosingRest(mainloop: mainloop, ducker: ducker, volumes: volumes, connection: connection)
        if DetachedThread.start(name: "a11y-pulse-end", { rest.awaitRestores(); rest.leave() }) != 0 {
            // No thread: the loop and what its callbacks reach are kept (a leak, logged) rather than
            // the loop freed on itself (an abort) or the connection's callbacks left pointing at freed objects.
            logger.error("cannot start a thread to close the sound server connection; it stays open")
            _ = Unmanaged.passRetained(rest.mainloop)
            _ = Unmanaged.passRetained(rest.ducker)
            _ = Unmanaged.passRetained(rest.volumes)
            _ = Unmanaged.passRetained(rest.connection)
        }
    }

    private var closed = false

    /// Gives the other streams their volume back, then leaves the server; nothing plays afterwards.
    /// The daemon calls it once speech has shut down, so that a SIGTERM mid-speech restores the
    /// streams it lowered whatever still holds the output when the process ends (a deinit alone
    /// may never run before exit); later calls, and the deinit, do nothing more.
    public func close() {
        guard mainloop.withLock({ beginClosing() }) else { return }
        let rest = ClosingRest(mainloop: mainloop, ducker: ducker, volumes: volumes, connection: connection)
        // Speech goes on, lowered music and all, until the restores are acknowledged.
        rest.awaitRestores()
        mainloop.withLock { endSpeech() }
        rest.leave()
    }

    /// With the lock held: other streams' restores are sent before the connection goes. False if
    /// closing began already.
    private func beginClosing() -> Bool {
        guard !closed else { return false }
        closed = true
        // From now on the connection's events reach the ducker alone: `self` may be gone before
        // the connection closes (the last reference let go on the event thread), and the streams
        // closing now are told as events.
        connection.onEvent = { [ducker] event in
            if case .sinkInput(let index, let change) = event { ducker.sinkInput(index, change) }
        }
        ducker.restoreAll()
        return true
    }

    /// With the lock held: nothing more plays and the track's progress ends.
    private func endSpeech() {
        apply(.close)
    }

    /// The rest of closing, never on the event thread.
    ///
    /// `@unchecked Sendable`: it crosses to the thread that finishes closing, and touches what it
    /// holds only with the mainloop's lock held, as `PulseOutput` does.
    private struct ClosingRest: @unchecked Sendable {
        let mainloop: ThreadedMainloop
        let ducker: Ducker
        let volumes: StreamVolumes
        let connection: ServerConnection

        /// Waits (briefly) until the restores are acknowledged, with the lock released so that the
        /// event thread can send them.
        func awaitRestores() {
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .milliseconds(500))
            while mainloop.withLock({ ducker.hasPendingOperations() }), clock.now < deadline {
                usleep(2_000)
            }
        }

        /// Leaves the server and ends the event thread.
        func leave() {
            mainloop.withLock {
                ducker.disconnect()
                volumes.disconnect()
                connection.close()
            }
            mainloop.stop()
        }
    }

    /// Runs `body` on the event thread, with its lock held; what it holds last is released there.
    func onEventThread(_ body: @escaping () -> Void) { mainloop.once(body) }

    // MARK: AudioOutput

    public func begin(format: AudioFormat) -> PlaybackTrack {
        mainloop.withLock {
            updates?.finish()
            let (progress, updates) = AsyncStream.makeStream(of: PlaybackProgress.self, bufferingPolicy: .bufferingNewest(1))
            self.updates = updates
            lastUpdate = nil
            apply(.begin(format))
            return PlaybackTrack(id: pair.trackID, progress: progress)
        }
    }

    public func append(_ samples: [Int16], to id: TrackID) {
        mainloop.withLock { apply(.append(samples, id)) }
    }

    public func end(_ id: TrackID) {
        mainloop.withLock { apply(.end(id)) }
    }

    public func hold(_ id: TrackID, at frame: Int?) {
        mainloop.withLock { apply(.hold(at: frame, id)) }
    }

    public func setPaused(_ paused: Bool, _ id: TrackID) {
        mainloop.withLock { apply(.setPaused(paused, id)) }
    }

    public func cancel(_ id: TrackID) {
        mainloop.withLock { apply(.cancel(id)) }
    }

    public func progress(of id: TrackID) -> PlaybackProgress? {
        mainloop.withLock {
            guard id == pair.trackID else { return nil }
            return currentProgress()
        }
    }

    /// True while the output has a working connection to the sound server.
    public var isConnected: Bool { mainloop.withLock { connection.isConnected } }

    public func serverStatus() -> SoundServerStatus { mainloop.withLock { connection.status } }

    /// Reads the current track's stream (nil without one) under the mainloop lock; for the tests,
    /// which look at what the output asks of the server.
    func withStream<R>(_ body: (PlaybackStream?) -> R) -> R {
        mainloop.withLock { body(streams[pair.current.rawValue]) }
    }

    // MARK: Carrying out the rules (lock held)

    /// What `lane`'s stream knows now, for the rules.
    private func streamNow(_ lane: StreamPair.Lane) -> StreamFeed.Stream? {
        streams[lane.rawValue].map { stream in
            StreamFeed.Stream(
                format: stream.format, isReady: stream.isReady, isCorked: stream.isCorked,
                hasBeenWritten: stream.hasBeenWritten, writeFrame: stream.writeFrame,
                writableFrames: stream.writableFrames, isDraining: stream.isDraining,
                mayBeDraining: stream.mayBeDraining, awaitsReadIndex: stream.isUpdatingTiming,
                reading: stream.reading(), blockFrames: stream.blockFrames, serverRewinds: connection.rewinds)
        }
    }

    /// Hands `input` (a call, or what the server said of `lane`'s stream) to the rules with what the
    /// streams know now, and carries out what they say.
    private func apply(_ input: StreamFeed.Input, from lane: StreamPair.Lane? = nil) {
        for (lane, effect) in pair.handle(input, from: lane, streams: streamNow) {
            carryOut(effect, on: lane)
        }
    }

    private func carryOut(_ effect: StreamFeed.Effect, on lane: StreamPair.Lane) {
        let stream = streams[lane.rawValue]
        switch effect {
        case .write(let samples, let frames, let at):
            do {
                try stream?.write(samples, frames: frames, at: at)
            } catch {
                logger.warning("writing to the playback stream failed: \(error)")
            }
        case .cork:
            stream?.setCorked(true, force: true)
        case .uncork:
            stream?.setCorked(false)
        case .flush:
            stream?.flush()
        case .drain(let target):
            stream?.drain { [unowned(unsafe) self] success in
                self.apply(.drained(through: target, success: success), from: lane)
            }
        case .cancelDrain:
            stream?.cancelDrain()
        case .askReadIndex:
            stream?.requestReadIndex { [unowned(unsafe) self] readFrame in self.apply(.readIndex(readFrame), from: lane) }
        case .refreshTiming:
            stream?.refreshTiming()
        case .openStream(let format):
            stream?.close()
            streams[lane.rawValue] = PlaybackStream(on: connection, format: format, logger: logger) {
                [unowned(unsafe) self] event in self.streamChanged(event, lane)
            }
        case .dropStream:
            stream?.close()
            streams[lane.rawValue] = nil
        case .attemptConnection:
            connection.attemptNow()
        case .audible(let audible):
            ducker.setSpeaking(audible ? stream?.serverIndices : nil)
        case .publish:
            publish()
        case .endProgress:
            updates?.finish()
            updates = nil
        case .ignored(let why, let id):
            logger.debug("\(why) ignored", metadata: ["track": "\(id)"])
        case .warning(let message):
            logger.warning("\(message)")
        }
    }

    /// The current track's progress (nil without one).
    private func currentProgress() -> PlaybackProgress? {
        let stream = streams[pair.current.rawValue]
        // No reading while a flush's read index is awaited: the old segment no longer applies.
        let position = stream?.isUpdatingTiming == false ? stream?.playbackFrame() : nil
        return pair.progress(playingAt: position, connection: connection.playbackConnection)
    }

    /// Tells the track's follower where it stands, if that changed.
    private func publish() {
        guard let updates, let progress = currentProgress(), progress != lastUpdate else { return }
        lastUpdate = progress
        updates.yield(progress)
    }

    private func connectionChanged(_ event: ServerConnection.Event) {
        switch event {
        case .connected:
            if let context = connection.context {
                ducker.connected(context)
                volumes.connected(context)
            }
            apply(.connected)
        case .lost:
            ducker.disconnect()
            volumes.disconnect()
            apply(.connectionLost)
        case .sinkInput(let index, let change):
            ducker.sinkInput(index, change)
            if change == .changed { volumes.changed(index, own: streams.compactMap { $0?.serverIndices?.stream }) }
        case .attemptFailed:
            apply(.connectionAttemptFailed)
        }
    }

    private func streamChanged(_ event: PlaybackStream.Event, _ lane: StreamPair.Lane) {
        let stream = streams[lane.rawValue]
        switch event {
        case .ready:
            if let granted = stream?.granted {
                logger.debug("playback stream ready", metadata: [
                    "tlength": "\(granted.targetLength)", "minreq": "\(granted.minimumRequest)",
                    "prebuf": "\(granted.prebuffer)", "format": "\(stream.map { "\($0.format)" } ?? "?")",
                    "stream": "\(lane)",
                ])
            }
            apply(.streamReady, from: lane)
        case .failed:
            // When the whole context failed, its own event handles it.
            guard connection.isReady else { return }
            logger.warning("playback stream lost: \(stream?.lastError.description ?? "?")")
            apply(.streamFailed, from: lane)
        case .writable:
            apply(.writable, from: lane)
        case .timing:
            apply(.timing, from: lane)
        }
    }
}
