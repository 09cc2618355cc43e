// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// The rules `PulseOutput` follows to feed the current track to its playback stream, as a pure
/// state machine: what to write where, when to ramp a cut down and what follows it, when to cork,
/// flush, drain or ask the server where it reads.
///
/// It takes one input at a time (a call of the output: begin, append, end, hold, pause or resume,
/// cancel; or what the server said: the stream ready or failed, a request for data, a timing or
/// read-index answer, a drain done, the connection up or lost) with what the stream knows at that
/// moment (`Stream`, plain values), and returns the effects to carry out, in order. It never
/// touches libpulse, so every rule is tested row by row (StreamFeedTests) and by random runs
/// against a model stream.
///
/// The invariant, checked by the random runs:
/// - every write to a known stream frame lands at or after the first frame the server has not read
///   (or may take back), and none is made while the server's read index is awaited;
/// - a track that was cancelled, or replaced by the next, is never written again;
/// - a track cut by a ramp is written again only once resumed, from the frame it was cut at.
///
/// Which track lies where is `Track`'s bookkeeping (its segment on the stream, whether it is cut);
/// what lies on the stream beside it, or what writing waits for, is the one `Stage`.
struct StreamFeed {
    /// What the stream knows when an input comes, as plain values (nil for no stream).
    struct Stream: Equatable {
        var format: AudioFormat
        var isReady: Bool
        /// The cork state last requested of the server.
        var isCorked: Bool
        /// Something was written since the stream was created (its indices are not at zero).
        var hasBeenWritten: Bool
        /// The server's write index, when known (unknown after a flush until the read index is).
        var writeFrame: Int64?
        /// Whole frames the server asks for now.
        var writableFrames: Int
        /// A drain is outstanding.
        var isDraining: Bool
        /// A drain was asked since the last flush (`PlaybackStream.mayBeDraining`).
        var mayBeDraining: Bool
        /// A read-index question is outstanding: nothing is written until it is answered.
        var awaitsReadIndex: Bool
        /// Where the server reads, from its last timing answer carried forward to now.
        var reading: StreamReading?
        /// What the server reads at a time (its minimum request), in frames.
        var blockFrames: Int64
        /// The server takes back what its sink mixed ahead when a stream rewrites it (PulseAudio).
        var serverRewinds: Bool
    }

    enum Input: Equatable {
        case begin(AudioFormat)
        /// Keep a stream of this format open, corked, while no track plays here: the next track
        /// begun here starts without waiting for one.
        case prepare(AudioFormat)
        case append([Int16], TrackID)
        case end(TrackID)
        case hold(at: Int?, TrackID)
        case setPaused(Bool, TrackID)
        case cancel(TrackID)
        /// Nothing plays any more: the output is closing.
        case close
        case streamReady
        /// The stream failed or the server ended it (the connection still up).
        case streamFailed
        /// The server asks for data.
        case writable
        /// A timing answer came back.
        case timing
        /// The drain asked through track frame `through` completed, or failed.
        case drained(through: Int, success: Bool)
        /// The read index asked for (nil: the server gave none); the stream's write index comes
        /// with the stream's values, as the answer set it.
        case readIndex(Int64?)
        case connected
        case connectionLost
        /// An attempt to reach the server failed (what an item is told of the connection changed).
        case connectionAttemptFailed
    }

    enum Effect: Equatable {
        /// `pa_stream_write` of frames `frames` of `samples` (interleaved) at stream frame `at` (nil:
        /// after what was written last).
        case write(samples: [Int16], frames: Range<Int>, at: Int64?)
        case cork
        case uncork
        case flush
        /// Drain; its answer comes back as `.drained(through: trackFrame, …)`.
        case drain(through: Int)
        case cancelDrain
        /// Ask the read index; its answer comes back as `.readIndex`.
        case askReadIndex
        /// Ask fresh timing; `.timing` comes back.
        case refreshTiming
        /// Close the stream, if any, and connect a new one, corked, in this format.
        case openStream(AudioFormat)
        case dropStream
        /// Try to reach the server now, without waiting for the next attempt.
        case attemptConnection
        /// Speech is audible (a ready stream, uncorked), or not: for the ducker.
        case audible(Bool)
        /// Tell the track's progress, if it changed (`progress(playingAt:connection:)`).
        case publish
        /// The track's progress ends: it is told nothing more.
        case endProgress
        /// An input that changes nothing, and why (for the log).
        case ignored(String, track: TrackID)
        case warning(String)
    }

    /// What a read-index question is for.
    enum Question: Equatable {
        /// Where track frame `trackFrame`, written first on a flushed stream, landed: the write
        /// index the answer gives, less `writtenSince` frames written after it.
        case landing(trackFrame: Int, writtenSince: Int64)
        /// Where the reader stands after a flush for a hold moved behind what the server had.
        case rewind
    }

    /// What lies on the stream beside the track, or what writing waits for. One at a time.
    enum Stage: Equatable {
        /// Nothing: the track is written where its segment says.
        case clear
        /// A cut's ramp, then silence, not yet heard: what follows goes after the ramp (or inside
        /// it, mixed), else once it is heard, after a flush.
        case tail(StreamTail)
        /// The stream was flushed for the track, written at once from `trackFrame`; where that
        /// landed is asked once it is written.
        case landing(trackFrame: Int)
        /// A read-index question is out; an answer to any other is stale.
        case asking(Question)
    }

    /// Silence written after a ramp, at least: longer than PipeWire's processing block, so that
    /// the ramp's end is played without a drain, and than a sink's latency, so that the ramp is
    /// known heard before the silence runs out.
    static let silenceAfterRampMilliseconds = 30
    /// How far past the ramp's end the server must have read, on top of its sink's latency, for
    /// the ramp to count as heard (then the silence left is dropped).
    static let heardMarginMilliseconds = 2

    private(set) var track: Track?
    /// The current track's id; inputs naming another one are ignored.
    private(set) var trackID = TrackID(rawValue: 0)
    private(set) var paused = false
    private(set) var stage = Stage.clear
    /// The format of the stream kept open without a track (`prepare`), or of the last track.
    private(set) var streamFormat: AudioFormat?

    /// Nothing plays or waits to play here: no track but one played to its end, no cut's ramp.
    var isQuiet: Bool {
        !hasTail && (track.map { $0.isPlayedToTheEnd } ?? true)
    }

    /// Handles `input`, the stream being as `stream` says; returns what to do, in order.
    mutating func handle(_ input: Input, stream: Stream?) -> [Effect] {
        var step = Step(stream: stream)
        switch input {
        case .begin(let format):
            begin(format, &step)
        case .prepare(let format):
            streamFormat = format
            guard isQuiet else { break }
            if let stream = step.stream, stream.format != format { dropStream(&step) }
            if step.stream == nil { openStream(format, &step) }
        case .append(let samples, let id):
            guard isCurrent(id, "append", &step) else { break }
            guard track?.ended == false else {
                step.effects.append(.ignored("append after end", track: id))
                break
            }
            track?.append(samples)
            pump(&step)
        case .end(let id):
            guard isCurrent(id, "end", &step) else { break }
            track?.ended = true
            pump(&step)
        case .hold(let frame, let id):
            guard isCurrent(id, "hold", &step) else { break }
            hold(at: frame, &step)
        case .setPaused(let paused, let id):
            guard isCurrent(id, paused ? "pause" : "resume", &step) else { break }
            setPaused(paused, &step)
        case .cancel(let id):
            guard isCurrent(id, "cancel", &step) else { break }
            cancel(&step)
        case .close:
            dropStream(&step)
            track = nil
            streamFormat = nil
            step.effects.append(.endProgress)
        case .streamReady:
            pump(&step)
        case .streamFailed:
            dropStream(&step)
            if let format = track?.format ?? streamFormat { openStream(format, &step) }
            publish(&step)
        case .writable:
            step.refreshTiming()
            pump(&step)
        case .timing:
            endTailIfHeard(&step)
            publish(&step)
        case .drained(let target, let success):
            if success { track?.drained(through: target) }
            pump(&step)
        case .readIndex(let readFrame):
            answered(readFrame, &step)
        case .connected:
            if let format = track?.format ?? streamFormat { openStream(format, &step) }
            publish(&step)
        case .connectionLost:
            dropStream(&step)
            publish(&step)
        case .connectionAttemptFailed:
            publish(&step)
        }
        return step.effects
    }

    /// The current track's progress (nil without one), the stream playing at `position` (nil: no
    /// reading, or none that applies while a read index is awaited).
    mutating func progress(playingAt position: Int64?, connection: PlaybackProgress.Connection) -> PlaybackProgress? {
        guard var t = track else { return nil }
        let played = t.played(atStreamFrame: position)
        track = t
        return PlaybackProgress(
            playedFrames: played, appendedFrames: t.appendedFrames, isFinished: t.isPlayedToTheEnd, connection: connection)
    }

    // MARK: Calls

    private func isCurrent(_ id: TrackID, _ call: String, _ step: inout Step) -> Bool {
        guard id == trackID, track != nil else {
            step.effects.append(.ignored("\(call) for a track that is not current", track: id))
            return false
        }
        return true
    }

    private mutating func begin(_ format: AudioFormat, _ step: inout Step) {
        // A track still playing is ramped down as `cancel` would: the new one follows the ramp.
        if track != nil, step.stream?.format == format { _ = rampDown(&step) }
        step.cancelDrain()
        trackID = TrackID(rawValue: trackID.rawValue &+ 1)
        track = Track(format: format)
        streamFormat = format
        paused = false
        // What the last track waited for is no longer this one's; a cut's ramp still plays.
        if case .tail = stage {} else { stage = .clear }
        if let stream = step.stream, stream.format != format { dropStream(&step) }
        if let stream = step.stream {
            if case .tail = stage {
                // Placed when its first audio is written: right after the last cut's ramp.
            } else if stream.hasBeenWritten {
                startAfresh(&step)
            } else {
                track?.starts(atStreamFrame: 0)
            }
        } else {
            openStream(format, &step)
        }
        // Told at once, so that a track begun with no server knows it (and its follower waits
        // out the reconnect grace, not the stall watchdog, or fails where none was ever
        // reached, once an attempt made now has found nobody).
        step.effects.append(.attemptConnection)
        publish(&step)
    }

    private mutating func hold(at frame: Int?, _ step: inout Step) {
        guard var t = track else { return }
        let rewind = t.setHold(frame)
        track = t
        if rewind {
            if let stream = step.stream, stream.isReady, t.knowsPosition {
                return rewindToHold(&step)
            } else if step.stream == nil {
                track?.rewindWithoutStream()
            }
        }
        step.cancelDrain()  // the stop point moved; a new drain is issued for the new one
        pump(&step)
    }

    private mutating func setPaused(_ paused: Bool, _ step: inout Step) {
        let wasPaused = self.paused
        self.paused = paused
        if paused {
            // Ramped down if it is playing; left to end if a ramp already plays; else corked.
            if wasPaused || !rampDown(&step), !hasTail { step.cork() }
            noteAudibility(&step)
        } else {
            resumeAfterCut(&step)
            pump(&step)
        }
    }

    private mutating func cancel(_ step: inout Step) {
        // Ramped down if it is playing; left to end if a ramp already plays; else corked at once.
        if step.stream != nil, !rampDown(&step), !hasTail {
            step.cancelDrain()
            step.cork(force: true)
            if step.stream?.hasBeenWritten == true { step.flush() }
        }
        track = nil
        paused = false
        if case .landing = stage { stage = .clear }
        step.effects.append(.endProgress)
        noteAudibility(&step)
    }

    // MARK: The stream

    private var hasTail: Bool {
        if case .tail = stage { true } else { false }
    }

    /// Forgets the stream. Frames already given to it count as played (the server has them or is gone).
    private mutating func dropStream(_ step: inout Step) {
        step.dropStream()
        stage = .clear
        track?.streamLost()
        noteAudibility(&step)
    }

    /// A new stream, whose indices start at zero: the track continues there from what was written.
    private mutating func openStream(_ format: AudioFormat, _ step: inout Step) {
        dropStream(&step)
        step.effects.append(.openStream(format))
        track?.continuesOnNewStream()
    }

    /// Tells the ducker whether speech is audible now: a ready stream, uncorked.
    private func noteAudibility(_ step: inout Step) {
        step.effects.append(.audible(step.stream.map { $0.isReady && !$0.isCorked } ?? false))
    }

    /// Tells the track's follower where it stands. Given for what the server reports (its requests
    /// for data, timing and drain answers, the connection), so it is told as often as the server
    /// plays, and never while nothing plays.
    private func publish(_ step: inout Step) {
        noteAudibility(&step)
        step.effects.append(.publish)
    }

    /// Drops what the stream was given and holds its reader where it is (the write index moves
    /// there): what the last cut left is forgotten, and nothing is heard until it is uncorked.
    private mutating func corkAndFlush(_ step: inout Step) {
        stage = .clear
        step.cancelDrain()
        step.cork(force: true)
        noteAudibility(&step)
        step.flush()
    }

    /// Corks and flushes the stream for the current track, which is then written at once where the
    /// flush left the write index (the read index, held there by the cork); where that is is asked
    /// after the first write (`Stage.landing`), not before it: the first sound is not a round trip
    /// to the server later.
    private mutating func startAfresh(_ step: inout Step) {
        guard step.stream?.isReady == true, track != nil else { return }
        corkAndFlush(&step)
        track?.forgetPosition()
        stage = .landing(trackFrame: track?.writtenFrames ?? 0)
    }

    /// Corks, flushes and asks where the read index now is, for a hold moved behind what the server
    /// has; writing waits for the answer, which says from where the track is written again.
    private mutating func rewindToHold(_ step: inout Step) {
        corkAndFlush(&step)
        stage = .asking(.rewind)
        step.askReadIndex()
    }

    /// The server answered a read-index question: the track is placed where the answer says and
    /// writing goes on. An answer to a question no longer out (the track that asked was replaced,
    /// or asked again) places nothing.
    private mutating func answered(_ readFrame: Int64?, _ step: inout Step) {
        guard case .asking(let question) = stage else { return pump(&step) }
        stage = .clear
        guard var t = track else { return }
        switch question {
        case .rewind:
            if readFrame == nil { step.effects.append(.warning("timing update failed after flush")) }
            // What is written next goes to the write index, which the flush put at the read index.
            t.rewound(toStreamFrame: readFrame, writingAt: readFrame == nil ? nil : step.stream?.writeFrame ?? readFrame)
        case .landing(let frame, let writtenSince):
            let written = step.stream?.writeFrame.map { $0.subtractingReportingOverflow(writtenSince) }
            if let written, !written.overflow {
                t.place(trackFrame: frame, atStreamFrame: written.partialValue)
            } else if let readFrame {
                t.place(trackFrame: frame, atStreamFrame: readFrame)
            } else {
                step.effects.append(.warning("timing update failed after a flush"))
            }
        }
        track = t
        pump(&step)
    }

    /// Writes what the server asks for (up to the hold), keeps the cork state right, drains at a stop.
    private mutating func pump(_ step: inout Step) {
        endTailIfHeard(&step)
        guard var t = track, let stream = step.stream, stream.isReady, !stream.awaitsReadIndex else { return }
        // Cut (paused after a ramp down): nothing more until it resumes.
        guard t.cutAt == nil else { return publish(&step) }
        let limit = t.writeLimit
        if !t.knowsPosition, case .tail(let tail) = stage {
            // Begun or resumed while a cut's ramp plays: it goes right after the ramp, once there is
            // audio to write and it may play; else it waits for the ramp to be heard (then a flush).
            // A new track with audio enough to cover the rest of the ramp may start inside it, mixed
            // with it: the next key's echo does not wait for the last one's ramp to end. It starts
            // with a new track's lead, not a ramp's: should the server have read past its first
            // frames meanwhile, what plays there is the ramp alone, and what is lost is the track's
            // own start (the lead-in before its first sound), not a step in the ramp.
            guard !paused, t.writtenFrames < limit, mayFollowTail(stream), let reading = stream.reading,
                let at = tail.placement(
                    unread: unread(reading, t, stream, startingTrack: t.startsAfresh), room: room(t),
                    mixing: t.startsAfresh ? (unread(reading, t, stream, startingTrack: true), Int64(limit)) : nil)
            else { return publish(&step) }
            t.continues(atStreamFrame: at)
            t.mixes(tail.rampLeft(from: at))
            stage = .clear
        }
        if t.writtenFrames < limit {
            // Where these frames go on the stream (nil: after what was written, position unknown).
            // Frames that replace what the server was given but has not read (after a cut) do not
            // add to what it holds, so they are not bounded by what it asks for.
            let target = t.streamFrame(ofTrackFrame: t.writtenFrames)
            let replacing = target.flatMap { target in
                step.stream?.writeFrame.map { end -> Int in
                    let (ahead, overflow) = end.subtractingReportingOverflow(target)
                    return overflow ? 0 : Int(clamping: max(0, ahead))
                }
            } ?? 0
            let frames = min(limit - t.writtenFrames, stream.writableFrames.addingReportingOverflow(replacing).partialValue)
            if frames > 0 {
                let range = t.writtenFrames..<t.writtenFrames + frames
                if let ramped = t.samplesForWriting(range) {
                    step.write(ramped, frames: 0..<frames, at: target)
                } else {
                    step.write(t.samples, frames: range, at: target)
                }
                t.writtenFrames += frames
            }
        }
        track = t
        askWhereItLanded(t, &step)
        if t.isFinished {
            step.cork()
        } else if !paused, t.hasUnplayedAudio {
            if step.stream?.isCorked == true { step.refreshTiming() }
            step.uncork()
        }
        if step.stream?.isDraining == false, let stop = t.stopPoint, t.writtenFrames >= stop, t.drainedThrough < stop {
            step.drain(through: t.writtenFrames)
        }
        publish(&step)
    }

    /// After the first write of a track started afresh or resumed on a flushed, corked stream, asks
    /// where it landed: where the flush left the write index, which the server's write index, past
    /// what was written since, says (PipeWire's pulse server can count in its read index a block it
    /// was reading during the flush); else the read index, where the cork holds the reader.
    private mutating func askWhereItLanded(_ t: Track, _ step: inout Step) {
        guard case .landing(let frame) = stage, !t.knowsPosition, t.writtenFrames > frame else { return }
        // Nothing is written while the answer is awaited (`pump` waits for it).
        stage = .asking(.landing(trackFrame: frame, writtenSince: Int64(t.writtenFrames - frame)))
        step.askReadIndex()
    }

    // MARK: Cuts: ramp down, then silence

    /// `milliseconds` in frames of the track's format, as an `Int64` (stream frames).
    private func frames(_ milliseconds: Int, _ t: Track) -> Int64 {
        Int64(clamping: t.format.frames(milliseconds: milliseconds))
    }

    /// The first stream frame a rewrite may start at now (`CutPoint.unread`), from a reading.
    private func unread(_ reading: StreamReading, _ t: Track, _ stream: Stream, startingTrack: Bool = false) -> Int64 {
        CutPoint.unread(
            readingNow: reading.readingNow, furthestRead: reading.furthestRead, rewinds: stream.serverRewinds,
            sampleRate: t.format.sampleRate, startingTrack: startingTrack)
    }

    /// Whether audio may be written behind the last cut's tail now. Not while PipeWire's pulse server
    /// may still be draining (`PlaybackStream.mayBeDraining`: it would read past what is written
    /// next): then it waits for the ramp to be heard, and a flush. PulseAudio only plays later what
    /// is written during a drain: a track that had been written to its end when the next key cut it
    /// (a short echo while typing) does not make the next wait.
    private func mayFollowTail(_ stream: Stream) -> Bool {
        !stream.mayBeDraining || stream.serverRewinds
    }

    /// Silence left after audio placed behind a cut's ramp, at least: what the server reads before
    /// that audio arrives.
    private func room(_ t: Track) -> Int64 { frames(1, t) }

    /// Takes the current track down over a ramp from where the server is about to read, rewriting
    /// what it was given after that as the ramp then silence; the track is then cut there (given
    /// nothing more until it resumes). False, changing nothing, when nothing plays that could be
    /// ramped: the stream corked or not ready, the track's place on it unknown, or nothing left
    /// that the server has not read.
    private mutating func rampDown(_ step: inout Step) -> Bool {
        guard var t = track, t.cutAt == nil, let stream = step.stream, stream.isReady, !stream.isCorked,
            !stream.awaitsReadIndex, let segment = t.segment, let written = t.streamFrame(ofTrackFrame: t.writtenFrames),
            let reading = stream.reading
        else { return false }
        let at = CutPoint.frame(
            unread: unread(reading, t, stream), lastRead: reading.readFrame, earliest: segment.streamFrame, latest: written)
        guard let frame = segment.trackFrame(atStreamFrame: at), frame < t.writeLimit else { return false }
        // Silence over the rest the server was given (PulseAudio would play it otherwise; PipeWire's
        // pulse server drops what follows a write), at least `silenceAfterRamp`, at most a second.
        let rampLength = t.rampFrames
        let (ahead, overflow) = written.subtractingReportingOverflow(at)
        let rest = (overflow ? 0 : Int(clamping: ahead)) - rampLength
        let silence = min(
            max(rest, t.format.frames(milliseconds: Self.silenceAfterRampMilliseconds)), t.format.frames(milliseconds: 1_000))
        let rampEnd = at.addingReportingOverflow(Int64(rampLength))
        let end = rampEnd.partialValue.addingReportingOverflow(Int64(silence))
        guard !rampEnd.overflow, !end.overflow else { return false }
        step.cancelDrain()
        let ramp = t.cut(at: frame)
        step.write(ramp + [Int16](repeating: 0, count: silence * t.channels), frames: 0..<rampLength + silence, at: at)
        track = t
        stage = .tail(StreamTail(rampEnd: rampEnd.partialValue, end: end.partialValue, ramp: ramp, channels: t.channels))
        // A fresh reading soon: where the server reads decides when the ramp was heard.
        step.refreshTiming()
        return true
    }

    /// Resumes a track that a cut ramped down: right after the ramp if the server has not read that
    /// far (the ramp then the track ramping up again, without a gap); else once the ramp is heard;
    /// on a stream flushed since (the ramp was heard), at once where the server reads, and where
    /// that is is asked after the first write (`Stage.landing`), not before it: a round trip less.
    private mutating func resumeAfterCut(_ step: inout Step) {
        guard var t = track, t.cutAt != nil else { return }
        var at: Int64?
        if let stream = step.stream, case .tail(let tail) = stage, mayFollowTail(stream), let reading = stream.reading {
            at = tail.placement(unread: unread(reading, t, stream), room: room(t))
        }
        t.resume(atStreamFrame: at)
        track = t
        if at != nil {
            stage = .clear
        } else if !hasTail {
            stage = .landing(trackFrame: t.writtenFrames)
        }
    }

    /// Ends the last cut's tail once its ramp has been heard: the silence left is dropped and the
    /// stream corked (as at the end of a track), and a track waiting to follow starts afresh.
    private mutating func endTailIfHeard(_ step: inout Step) {
        guard case .tail(let tail) = stage, let stream = step.stream, stream.isReady, let reading = stream.reading
        else { return }
        // PipeWire's pulse server passes what it read on to the graph a block at a time, which
        // plays it after the delay it reports: a whole block more than that, then the margin.
        let margin = stream.blockFrames + Int64(clamping: stream.format.frames(milliseconds: Self.heardMarginMilliseconds))
        // What was surely read (no carrying forward): a ramp corked before it is heard would click.
        guard tail.isHeard(surelyRead: reading.readFrame, sinkLatency: reading.sinkLatency, margin: margin) else { return }
        if let t = track, !t.knowsPosition, t.cutAt == nil {
            startAfresh(&step)
        } else {
            corkAndFlush(&step)
        }
    }
}

extension StreamFeed {
    /// One input's work: the effects given so far, and the stream as they leave it (each effect
    /// changes what the stream knows as `PlaybackStream` does when it is carried out).
    fileprivate struct Step {
        var stream: Stream?
        var effects: [Effect] = []

        /// Corks (`force`: even if corked already, as after a cut, to be sure nothing more is read).
        mutating func cork(force: Bool = false) {
            guard let s = stream, s.isReady, force || !s.isCorked else { return }
            stream?.isCorked = true
            effects.append(.cork)
        }

        mutating func uncork() {
            guard let s = stream, s.isReady, s.isCorked else { return }
            stream?.isCorked = false
            effects.append(.uncork)
        }

        /// The write index moves to the read index, unknown until asked; no drain can be running.
        mutating func flush() {
            guard stream?.isReady == true else { return }
            stream?.writeFrame = nil
            stream?.mayBeDraining = false
            effects.append(.flush)
        }

        mutating func write(_ samples: [Int16], frames: Range<Int>, at streamFrame: Int64?) {
            guard let s = stream, s.isReady, !frames.isEmpty else { return }
            stream?.hasBeenWritten = true
            let start = streamFrame ?? s.writeFrame
            stream?.writeFrame = start.flatMap { start in
                let (end, overflow) = start.addingReportingOverflow(Int64(frames.count))
                return overflow ? nil : end
            }
            effects.append(.write(samples: samples, frames: frames, at: streamFrame))
        }

        mutating func drain(through trackFrame: Int) {
            guard let s = stream, s.isReady, !s.isDraining else { return }
            stream?.isDraining = true
            stream?.mayBeDraining = true
            effects.append(.drain(through: trackFrame))
        }

        mutating func cancelDrain() {
            guard stream?.isDraining == true else { return }
            stream?.isDraining = false
            effects.append(.cancelDrain)
        }

        mutating func askReadIndex() {
            guard stream?.isReady == true else { return }
            stream?.awaitsReadIndex = true
            effects.append(.askReadIndex)
        }

        mutating func refreshTiming() {
            guard stream?.isReady == true else { return }
            effects.append(.refreshTiming)
        }

        mutating func dropStream() {
            guard stream != nil else { return }
            stream = nil
            effects.append(.dropStream)
        }
    }
}
