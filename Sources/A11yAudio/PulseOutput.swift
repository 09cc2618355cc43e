// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `AudioOutput` on PulseAudio's asynchronous API: a `ServerConnection`, a `PlaybackStream` on it
/// and the current `Track`; this type feeds the track to the stream.
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
    /// What the last cut left on the stream (its ramp, then silence) while the ramp may still be
    /// playing; the next audio follows the ramp, or the stream is corked once it was heard.
    private var tail: StreamTail?
    /// The track frame written first on a flushed stream (a track started afresh, or resumed),
    /// whose place is asked once written.
    private var landing: Int?

    /// Silence written after a ramp, at least: longer than PipeWire's processing block, so that
    /// the ramp's end is played without a drain, and than a sink's latency, so that the ramp is
    /// known heard before the silence runs out.
    static let silenceAfterRampMilliseconds = 30
    /// How far past the ramp's end the server must have read, on top of its sink's latency, for
    /// the ramp to count as heard (then the silence left is dropped).
    static let heardMarginMilliseconds = 2

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
        let rest = ClosingRest(mainloop: mainloop, ducker: ducker, connection: connection)
        if DetachedThread.start(name: "a11y-pulse-end", { rest.awaitRestores(); rest.leave() }) != 0 {
            // No thread: the loop and what its callbacks reach are kept (a leak, logged) rather than
            // the loop freed on itself (an abort) or the connection's callbacks left pointing at freed objects.
            logger.error("cannot start a thread to close the sound server connection; it stays open")
            _ = Unmanaged.passRetained(rest.mainloop)
            _ = Unmanaged.passRetained(rest.ducker)
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
        let rest = ClosingRest(mainloop: mainloop, ducker: ducker, connection: connection)
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
        ducker.restoreAll()
        return true
    }

    /// With the lock held: nothing more plays and the track's progress ends.
    private func endSpeech() {
        dropStream()
        track = nil
        updates?.finish()
    }

    /// The rest of closing, never on the event thread.
    ///
    /// `@unchecked Sendable`: it crosses to the thread that finishes closing, and touches what it
    /// holds only with the mainloop's lock held, as `PulseOutput` does.
    private struct ClosingRest: @unchecked Sendable {
        let mainloop: ThreadedMainloop
        let ducker: Ducker
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
            // A track still playing is ramped down as `cancel` would: the new one follows the ramp.
            if track != nil, stream?.format == format { _ = rampDown() }
            stream?.cancelDrain()
            trackID = TrackID(rawValue: trackID.rawValue &+ 1)
            track = Track(format: format)
            updates?.finish()
            let (progress, updates) = AsyncStream.makeStream(of: PlaybackProgress.self, bufferingPolicy: .bufferingNewest(1))
            self.updates = updates
            lastUpdate = nil
            paused = false
            landing = nil
            if let stream, stream.format != format { dropStream() }
            if let stream {
                if tail != nil {
                    // Placed when its first audio is written: right after the last cut's ramp.
                } else if stream.hasBeenWritten {
                    startAfresh(on: stream)
                } else {
                    track?.starts(atStreamFrame: 0)
                }
            } else {
                openStream(format: format)
            }
            // Told at once, so that a track begun with no server knows it (and its follower waits
            // out the reconnect grace, not the stall watchdog, or fails where none was ever
            // reached, once an attempt made now has found nobody).
            connection.attemptNow()
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
                    rewindToHold(on: stream)
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
            let wasPaused = self.paused
            self.paused = paused
            if paused {
                // Ramped down if it is playing; left to end if a ramp already plays; else corked.
                if wasPaused || !rampDown(), tail == nil { stream?.setCorked(true) }
                noteAudibility()
            } else {
                resumeAfterCut()
                pump()
            }
        }
    }

    public func cancel(_ id: TrackID) {
        mainloop.withLock {
            guard isCurrent(id, "cancel") else { return }
            // Ramped down if it is playing; left to end if a ramp already plays; else corked at once.
            if let stream, !rampDown(), tail == nil {
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

    public func serverStatus() -> SoundServerStatus { mainloop.withLock { connection.status } }

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
            connection: connection.playbackConnection)
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
        case .attemptFailed:
            break
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
            endTailIfHeard()
            publish()
        }
    }

    /// Forgets the stream. Frames already given to it count as played (the server has them or is gone).
    private func dropStream() {
        stream?.close()
        stream = nil
        tail = nil
        landing = nil
        track?.streamLost()
        noteAudibility()
    }

    /// Tells the ducker whether speech is audible now: a ready stream, uncorked.
    private func noteAudibility() {
        ducker.setSpeaking(stream.flatMap { $0.isCorked ? nil : $0.serverIndices })
    }

    /// Drops what the stream was given and holds its reader where it is (the write index moves
    /// there): what the last cut left is forgotten, and nothing is heard until it is uncorked.
    private func corkAndFlush(_ stream: PlaybackStream) {
        tail = nil
        stream.cancelDrain()
        stream.setCorked(true, force: true)
        noteAudibility()
        stream.flush()
    }

    /// Corks and flushes the stream for the current track, which is then written at once where the
    /// flush left the write index (the read index, held there by the cork); where that is is asked
    /// after the first write (`landing`), not before it: the first sound is not a round trip to the
    /// server later.
    private func startAfresh(on stream: PlaybackStream) {
        guard stream.isReady else { return }
        corkAndFlush(stream)
        track?.forgetPosition()
        landing = track?.writtenFrames
    }

    /// Corks, flushes and asks where the read index now is, for a hold moved behind what the server
    /// has; writing waits for the answer, which says from where the track is written again.
    private func rewindToHold(on stream: PlaybackStream) {
        corkAndFlush(stream)
        stream.requestReadIndex { [unowned(unsafe) self] readFrame in
            guard var t = track else { return }
            if readFrame == nil { logger.warning("timing update failed after flush") }
            // What is written next goes to the write index, which the flush put at the read index.
            t.rewound(toStreamFrame: readFrame, writingAt: readFrame == nil ? nil : self.stream?.writeFrame ?? readFrame)
            track = t
            pump()
        }
    }

    /// Writes what the server asks for (up to the hold), keeps the cork state right, drains at a stop.
    private func pump() {
        endTailIfHeard()
        guard var t = track, let stream, stream.isReady, !stream.isUpdatingTiming else { return }
        // Cut (paused after a ramp down): nothing more until it resumes.
        guard t.cutAt == nil else { return publish() }
        let limit = t.writeLimit
        if !t.knowsPosition, let tail {
            // Begun or resumed while a cut's ramp plays: it goes right after the ramp, once there is
            // audio to write and it may play; else it waits for the ramp to be heard (then a flush).
            // A new track with audio enough to cover the rest of the ramp may start inside it, mixed
            // with it: the next key's echo does not wait for the last one's ramp to end. It starts
            // with a new track's lead, not a ramp's: should the server have read past its first
            // frames meanwhile, what plays there is the ramp alone, and what is lost is the track's
            // own start (the lead-in before its first sound), not a step in the ramp.
            guard !paused, t.writtenFrames < limit, mayFollowTail(on: stream), let reading = stream.reading(),
                let at = tail.placement(
                    unread: unread(reading, t, startingTrack: t.startsAfresh), room: room(t),
                    mixing: t.startsAfresh ? (unread(reading, t, startingTrack: true), Int64(limit)) : nil)
            else { return publish() }
            t.continues(atStreamFrame: at)
            t.mixes(tail.rampLeft(from: at))
            self.tail = nil
        }
        if t.writtenFrames < limit {
            // Where these frames go on the stream (nil: after what was written, position unknown).
            // Frames that replace what the server was given but has not read (after a cut) do not
            // add to what it holds, so they are not bounded by what it asks for.
            let target = t.streamFrame(ofTrackFrame: t.writtenFrames)
            let replacing = target.flatMap { target in
                stream.writeFrame.map { end -> Int in
                    let (ahead, overflow) = end.subtractingReportingOverflow(target)
                    return overflow ? 0 : Int(clamping: max(0, ahead))
                }
            } ?? 0
            let frames = min(limit - t.writtenFrames, stream.writableFrames.addingReportingOverflow(replacing).partialValue)
            if frames > 0 {
                let range = t.writtenFrames..<t.writtenFrames + frames
                do {
                    if let ramped = t.samplesForWriting(range) {
                        try stream.write(ramped, frames: 0..<frames, at: target)
                    } else {
                        try stream.write(t.samples, frames: range, at: target)
                    }
                    t.writtenFrames += frames
                } catch {
                    logger.warning("writing to the playback stream failed: \(error)")
                }
            }
        }
        track = t
        askWhereItLanded(t, on: stream)
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

    // MARK: Cuts: ramp down, then silence (lock held)

    /// `milliseconds` in frames of the track's format, as an `Int64` (stream frames).
    private func frames(_ milliseconds: Int, _ t: Track) -> Int64 {
        Int64(clamping: t.format.frames(milliseconds: milliseconds))
    }

    /// The first stream frame a rewrite may start at now (`CutPoint.unread`), from a reading.
    private func unread(_ reading: StreamReading, _ t: Track, startingTrack: Bool = false) -> Int64 {
        CutPoint.unread(
            readingNow: reading.readingNow, furthestRead: reading.furthestRead, rewinds: connection.rewinds,
            sampleRate: t.format.sampleRate, startingTrack: startingTrack)
    }

    /// Whether audio may be written behind the last cut's tail now. Not while PipeWire's pulse server
    /// may still be draining (`PlaybackStream.mayBeDraining`: it would read past what is written
    /// next): then it waits for the ramp to be heard, and a flush. PulseAudio only plays later what
    /// is written during a drain: a track that had been written to its end when the next key cut it
    /// (a short echo while typing) does not make the next wait.
    private func mayFollowTail(on stream: PlaybackStream) -> Bool {
        !stream.mayBeDraining || connection.rewinds
    }

    /// Silence left after audio placed behind a cut's ramp, at least: what the server reads before
    /// that audio arrives.
    private func room(_ t: Track) -> Int64 { frames(1, t) }

    /// Takes the current track down over a ramp from where the server is about to read, rewriting
    /// what it was given after that as the ramp then silence; the track is then cut there (given
    /// nothing more until it resumes). False, changing nothing, when nothing plays that could be
    /// ramped: the stream corked or not ready, the track's place on it unknown, or nothing left
    /// that the server has not read.
    private func rampDown() -> Bool {
        guard var t = track, t.cutAt == nil, let stream, stream.isReady, !stream.isCorked, !stream.isUpdatingTiming,
            let segment = t.segment, let written = t.streamFrame(ofTrackFrame: t.writtenFrames),
            let reading = stream.reading()
        else { return false }
        let at = CutPoint.frame(unread: unread(reading, t), lastRead: reading.readFrame, earliest: segment.streamFrame, latest: written)
        guard let frame = segment.trackFrame(atStreamFrame: at), frame < t.writeLimit else { return false }
        stream.cancelDrain()
        let ramp = t.cut(at: frame)
        // Silence over the rest the server was given (PulseAudio would play it otherwise; PipeWire's
        // pulse server drops what follows a write), at least `silenceAfterRamp`, at most a second.
        let rampLength = t.rampFrames
        let (ahead, overflow) = written.subtractingReportingOverflow(at)
        let rest = (overflow ? 0 : Int(clamping: ahead)) - rampLength
        let silence = min(max(rest, t.format.frames(milliseconds: Self.silenceAfterRampMilliseconds)), t.format.frames(milliseconds: 1_000))
        let rampEnd = at.addingReportingOverflow(Int64(rampLength))
        let end = rampEnd.partialValue.addingReportingOverflow(Int64(silence))
        guard !rampEnd.overflow, !end.overflow else { return false }
        let tail = StreamTail(rampEnd: rampEnd.partialValue, end: end.partialValue, ramp: ramp, channels: t.channels)
        do {
            try stream.write(ramp + [Int16](repeating: 0, count: silence * t.channels), frames: 0..<rampLength + silence, at: at)
        } catch {
            logger.warning("writing a ramp to the playback stream failed: \(error)")
            return false
        }
        track = t
        self.tail = tail
        // A fresh reading soon: where the server reads decides when the ramp was heard.
        stream.refreshTiming()
        return true
    }

    /// Resumes a track that a cut ramped down: right after the ramp if the server has not read that
    /// far (the ramp then the track ramping up again, without a gap); else once the ramp is heard;
    /// on a stream flushed since (the ramp was heard), at once where the server reads, and where
    /// that is is asked after the first write (`landing`), not before it: a round trip less.
    private func resumeAfterCut() {
        guard var t = track, t.cutAt != nil else { return }
        var at: Int64?
        if let stream, let tail, mayFollowTail(on: stream), let reading = stream.reading() {
            at = tail.placement(unread: unread(reading, t), room: room(t))
        }
        t.resume(atStreamFrame: at)
        track = t
        if at != nil {
            tail = nil
        } else if tail == nil {
            landing = t.writtenFrames
        }
    }

    /// After the first write of a track started afresh or resumed on a flushed, corked stream, asks
    /// where it landed: where the flush left the write index, which the server's write index, past
    /// what was written since, says (PipeWire's pulse server can count in its read index a block it
    /// was reading during the flush); else the read index, where the cork holds the reader.
    private func askWhereItLanded(_ t: Track, on stream: PlaybackStream) {
        guard let frame = landing, !t.knowsPosition, t.writtenFrames > frame else { return }
        landing = nil
        // Nothing is written while the answer is awaited (`pump` waits for it).
        let writtenSince = Int64(t.writtenFrames - frame)
        stream.requestReadIndex { [unowned(unsafe) self] readFrame in
            guard var t = track else { return }
            let written = self.stream?.writeFrame.map { $0.subtractingReportingOverflow(writtenSince) }
            if let written, !written.overflow {
                t.place(trackFrame: frame, atStreamFrame: written.partialValue)
            } else if let readFrame {
                t.place(trackFrame: frame, atStreamFrame: readFrame)
            } else {
                logger.warning("timing update failed after a flush")
            }
            track = t
            pump()
        }
    }

    /// Ends the last cut's tail once its ramp has been heard: the silence left is dropped and the
    /// stream corked (as at the end of a track), and a track waiting to follow starts afresh.
    private func endTailIfHeard() {
        guard let tail, let stream else { return }
        guard stream.isReady, let reading = stream.reading() else { return }
        // PipeWire's pulse server passes what it read on to the graph a block at a time, which
        // plays it after the delay it reports: a whole block more than that, then the margin.
        let margin = stream.blockFrames + Int64(clamping: stream.format.frames(milliseconds: Self.heardMarginMilliseconds))
        // What was surely read (no carrying forward): a ramp corked before it is heard would click.
        guard tail.isHeard(surelyRead: reading.readFrame, sinkLatency: reading.sinkLatency, margin: margin) else { return }
        if let t = track, !t.knowsPosition, t.cutAt == nil {
            startAfresh(on: stream)
        } else {
            corkAndFlush(stream)
        }
    }

    private func drained(through target: Int, success: Bool) {
        if success { track?.drained(through: target) }
        pump()
    }
}
