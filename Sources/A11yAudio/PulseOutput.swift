import A11yCore
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `AudioOutput` on PulseAudio's asynchronous API: a `ServerConnection`, a `PlaybackStream` on it
/// and the current `Track`; this type feeds the track to the stream.
///
/// Appended PCM is kept in-process and written only as the server asks for it (tlength about 30 ms,
/// minreq 5 ms, prebuf one frame so that short tracks start and the end of a track plays out).
/// While idle the stream is corked. If the server goes away, the output reports
/// `isConnected == false`, reconnects with a fresh context every 150 ms and then carries on with the
/// current track from the first frame not yet given to the server.
///
/// Every method returns promptly: none waits for the server.
///
/// `@unchecked Sendable`: all mutable state (and every libpulse object) is touched only with the
/// threaded mainloop's lock held, either by the public methods (through `mainloop.withLock`) or by
/// libpulse callbacks (which run on the mainloop thread with that lock held). `deinit` removes
/// every callback under the same lock before anything is freed.
public final class PulseOutput: AudioOutput, @unchecked Sendable {
    private let mainloop: ThreadedMainloop
    private let logger: Logger
    private let connection: ServerConnection
    /// Lowers other streams while speech is audible (when configured), restores them after.
    private let ducker: Ducker
    private var stream: PlaybackStream?
    private var track: Track?
    /// The current track's id; calls naming another one are ignored.
    private var trackID = TrackID(rawValue: 0)
    /// Where the current track's progress is told, and what was told last.
    private var updates: AsyncStream<PlaybackProgress>.Continuation?
    private var lastUpdate: PlaybackProgress?
    private var paused = false
    /// Why the current timing update was asked for (writing waits for it).
    private enum Resync { case newTrack, rewind }

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
        connection = ServerConnection(mainloop: mainloop, identity: identity, server: server, logger: logger)
        // Callbacks reach `self` unowned: see the type's comment for why it cannot be gone.
        connection.onEvent = { [unowned(unsafe) self] event in self.connectionChanged(event) }
        if !mainloop.start() {
            logger.error("cannot start the libpulse event thread; audio output disabled")
        }
        mainloop.withLock { connection.connect() }
    }

    deinit {
        // Other streams get their volume back before the connection goes: the requests are sent
        // (waited for, briefly, with the lock released so that the event thread can send them).
        mainloop.withLock { ducker.restoreAll() }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(500))
        while mainloop.withLock({ ducker.hasPendingOperations() }), clock.now < deadline {
            usleep(2_000)
        }
        mainloop.withLock {
            ducker.disconnect()
            dropStream()
            connection.close()
            track = nil
            updates?.finish()
        }
        mainloop.stop()
    }

    // MARK: AudioOutput

    public func begin(format: AudioFormat) -> PlaybackTrack {
        mainloop.withLock {
            stream?.cancelDrain()
            trackID = TrackID(rawValue: trackID.rawValue &+ 1)
            track = Track(format: format)
            updates?.finish()
            let (progress, updates) = AsyncStream.makeStream(of: PlaybackProgress.self, bufferingPolicy: .bufferingNewest(1))
            self.updates = updates
            lastUpdate = nil
            paused = false
            if let stream, stream.format != format { dropStream() }
            if let stream {
                if stream.hasBeenWritten {
                    resync(.newTrack)
                } else {
                    track?.starts(atStreamFrame: 0)
                }
            } else {
                openStream(format: format)
            }
            // Told at once, so that a track begun with no server knows it (and its follower waits
            // out the reconnect grace, not the stall watchdog).
            publish()
            return PlaybackTrack(id: trackID, progress: progress)
        }
    }

    public func append(_ samples: [Int16], to id: TrackID) {
        mainloop.withLock {
            guard isCurrent(id, "append") else { return }
            guard track?.ended == false else { return logger.debug("append after end ignored") }
            track?.append(samples)
            pump()
        }
    }

    public func end(_ id: TrackID) {
        mainloop.withLock {
            guard isCurrent(id, "end"), track != nil else { return }
            track?.ended = true
            pump()
        }
    }

    public func hold(_ id: TrackID, at frame: Int?) {
        mainloop.withLock {
            guard isCurrent(id, "hold"), var t = track else { return }
            let rewind = t.setHold(frame)
            track = t
            if rewind {
                if let stream, stream.isReady, t.knowsPosition {
                    resync(.rewind)
                    return
                } else if stream == nil {
                    track?.rewindWithoutStream()
                }
            }
            stream?.cancelDrain()  // the stop point moved; a new drain is issued for the new one
            pump()
        }
    }

    public func setPaused(_ paused: Bool, _ id: TrackID) {
        mainloop.withLock {
            guard isCurrent(id, paused ? "pause" : "resume") else { return }
            self.paused = paused
            if paused {
                stream?.setCorked(true)
                noteAudibility()
            } else {
                pump()
            }
        }
    }

    public func cancel(_ id: TrackID) {
        mainloop.withLock {
            guard isCurrent(id, "cancel") else { return }
            if let stream {
                stream.cancelDrain()
                stream.setCorked(true, force: true)
                if stream.hasBeenWritten { stream.flush() }
            }
            track = nil
            paused = false
            updates?.finish()
            updates = nil
            noteAudibility()
        }
    }

    public func progress(of id: TrackID) -> PlaybackProgress? {
        mainloop.withLock {
            guard id == trackID else { return nil }
            return currentProgress()
        }
    }

    /// True while the output has a working connection to the sound server.
    public var isConnected: Bool { mainloop.withLock { connection.isConnected } }

    /// Reads the current stream (nil without one) under the mainloop lock; for the tests, which
    /// look at what the output asks of the server.
    func withStream<R>(_ body: (PlaybackStream?) -> R) -> R {
        mainloop.withLock { body(stream) }
    }

    // MARK: Feeding the track to the stream (lock held)

    /// The current track's progress (nil without one).
    private func currentProgress() -> PlaybackProgress? {
        guard var t = track else { return nil }
        // No reading while a flush's read index is awaited: the old segment no longer applies.
        let position = stream?.isUpdatingTiming == false ? stream?.playbackFrame() : nil
        let played = t.played(atStreamFrame: position)
        track = t
        return PlaybackProgress(
            playedFrames: played, appendedFrames: t.appendedFrames, isFinished: t.isPlayedToTheEnd,
            isConnected: connection.isConnected)
    }

    /// Tells the track's follower where it stands, if that changed. Called from what the server
    /// reports (its requests for data, timing and drain answers, the connection), so it is told
    /// as often as the server plays, and never while nothing plays.
    private func publish() {
        noteAudibility()
        guard let updates, let progress = currentProgress(), progress != lastUpdate else { return }
        lastUpdate = progress
        updates.yield(progress)
    }

    /// Whether `id` names the current track; a call for any other is logged and ignored.
    private func isCurrent(_ id: TrackID, _ call: String) -> Bool {
        guard id == trackID, track != nil else {
            logger.debug("\(call) for a track that is not current ignored", metadata: ["track": "\(id)"])
            return false
        }
        return true
    }

    private func connectionChanged(_ event: ServerConnection.Event) {
        switch event {
        case .connected:
            if let context = connection.context { ducker.connected(context) }
            if let t = track { openStream(format: t.format) }
        case .lost:
            ducker.disconnect()
            dropStream()
        }
        publish()
    }

    private func openStream(format: AudioFormat) {
        dropStream()
        stream = PlaybackStream(on: connection, format: format, logger: logger) { [unowned(unsafe) self] event in
            self.streamChanged(event)
        }
        // A new stream's indices start at zero: the track continues there from what was written.
        if stream != nil { track?.continuesOnNewStream() }
    }

    private func streamChanged(_ event: PlaybackStream.Event) {
        switch event {
        case .ready:
            if let granted = stream?.granted {
                logger.debug("playback stream ready", metadata: [
                    "tlength": "\(granted.targetLength)", "minreq": "\(granted.minimumRequest)",
                    "prebuf": "\(granted.prebuffer)", "format": "\(stream.map { "\($0.format)" } ?? "?")",
                ])
            }
            pump()
        case .failed:
            // When the whole context failed, its own event handles it.
            guard connection.isReady else { return }
            logger.warning("playback stream lost: \(stream?.lastError.description ?? "?")")
            dropStream()
            if let t = track { openStream(format: t.format) }
            publish()
        case .writable:
            stream?.refreshTiming()
            pump()
        case .timing:
            publish()
        }
    }

    /// Forgets the stream. Frames already given to it count as played (the server has them or is gone).
    private func dropStream() {
        stream?.close()
        stream = nil
        track?.streamLost()
        noteAudibility()
    }

    /// Tells the ducker whether speech is audible now: a ready stream, uncorked.
    private func noteAudibility() {
        ducker.setSpeaking(stream.flatMap { $0.isCorked ? nil : $0.serverIndices })
    }

    /// Corks, flushes and asks where the read index now is; writes wait for the answer.
    private func resync(_ kind: Resync) {
        guard let stream, stream.isReady else { return }
        stream.cancelDrain()
        stream.setCorked(true, force: true)
        noteAudibility()
        stream.flush()
        stream.requestReadIndex { [unowned(unsafe) self] readFrame in
            self.resynced(kind, readFrame: readFrame)
        }
    }

    private func resynced(_ kind: Resync, readFrame: Int64?) {
        guard var t = track else { return }
        if readFrame == nil { logger.warning("timing update failed after flush") }
        switch (kind, readFrame) {
        case (.newTrack, let frame?): t.starts(atStreamFrame: frame)
        case (.newTrack, nil): t.forgetPosition()
        case (.rewind, _): t.rewound(toStreamFrame: readFrame)
        }
        track = t
        pump()
    }

    /// Writes what the server asks for (up to the hold), keeps the cork state right, drains at a stop.
    private func pump() {
        guard var t = track, let stream, stream.isReady, !stream.isUpdatingTiming else { return }
        let limit = t.writeLimit
        if t.writtenFrames < limit {
            let frames = min(limit - t.writtenFrames, stream.writableFrames)
            if frames > 0 {
                do {
                    try stream.write(t.samples, frames: t.writtenFrames..<t.writtenFrames + frames)
                    t.writtenFrames += frames
                } catch {
                    logger.warning("writing to the playback stream failed: \(error)")
                }
            }
        }
        track = t
        if t.isFinished {
            stream.setCorked(true)
        } else if !paused, t.hasUnplayedAudio {
            if stream.isCorked { stream.refreshTiming() }
            stream.setCorked(false)
        }
        if !stream.isDraining, let stop = t.stopPoint, t.writtenFrames >= stop, t.drainedThrough < stop {
            let target = t.writtenFrames
            stream.drain { [unowned(unsafe) self] success in
                self.drained(through: target, success: success)
            }
        }
        publish()
    }

    private func drained(through target: Int, success: Bool) {
        if success { track?.drained(through: target) }
        pump()
    }
}
