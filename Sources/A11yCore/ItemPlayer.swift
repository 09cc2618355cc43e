/// Plays one item: synthesises it, feeds the output, and reports each word when it is heard.
///
/// It lives for one item and owns one output track. Its work is three children of one task group:
/// the feeder (engine → output), the control loop (pause and resume, in the order they were made)
/// and the follower (what the output reports → words, pause at word, end, watchdog). `run` returns
/// only when all three have returned, and every output call names the player's track: nothing this
/// player does can reach the next item's audio.
actor ItemPlayer {
    enum Report: Sendable {
        case word(start: Int, length: Int)
        case mark(name: String)
        case pausedAtWord
    }

    /// Pause and resume requests, applied strictly in the order they were made.
    enum Control: Sendable {
        case pause(PauseBoundary)
        case resume
    }

    private let item: SpeechItem
    private let engine: any SpeechEngine
    private let output: any AudioOutput
    private let clock: any Clock<Duration>
    private let settings: SpeechCoordinator.Configuration
    private let report: @Sendable (Report) async -> Void
    private let controls: AsyncStream<Control>

    /// Words synthesised but not yet heard, in order.
    private var unheardWords: [WordMark] = []
    /// SSML marks synthesised but not yet heard, in order.
    private var unheardMarks: [NamedMark] = []
    private var synthesisEnded = false
    private var synthesisError: SpeechError?
    /// The frame a word pause holds at, once chosen.
    private var holdFrame: Int?
    private var wantsWordPause = false
    /// An immediate pause is in force (the watchdog must not mistake it for a stall).
    private var isPausedByClient = false
    private var pausedAtWordReported = false

    init(
        item: SpeechItem, engine: any SpeechEngine, output: any AudioOutput, clock: any Clock<Duration>,
        settings: SpeechCoordinator.Configuration, controls: AsyncStream<Control>,
        report: @escaping @Sendable (Report) async -> Void
    ) {
        self.controls = controls
        self.item = item
        self.engine = engine
        self.output = output
        self.clock = clock
        self.settings = settings
        self.report = report
    }

    /// Plays the item to its end, or until its task is cancelled (`.cancelled`), and leaves the
    /// output silent unless the item completed.
    func run() async -> SpeechQueue.PlaybackOutcome {
        let format = engine.format
        let track = await output.begin(format: format)
        var earcon: [Int16] = []
        if item.playsEarcon && settings.earcon {
            earcon = Earcon.screenChanged(format: format) + [Int16](repeating: 0, count: format.frames(milliseconds: 60))
            await output.append(earcon, to: track)
        }
        let offset = earcon.count
        let outcome = await withDiscardingTaskGroup(returning: SpeechQueue.PlaybackOutcome.self) { group in
            group.addTask { await self.feed(track, offset: offset) }
            group.addTask { await self.obey(track) }
            let outcome = await follow(track)
            group.cancelAll()
            return outcome
        }
        // Every child has returned: no call of this item's is still on its way to the output.
        if outcome != .completed { await output.cancel(track) }
        return outcome
    }

    // MARK: - Following playback

    /// Reads the output's progress until the item ends, fails or is cancelled.
    private func follow(_ track: TrackID) async -> SpeechQueue.PlaybackOutcome {
        // Time is counted in polls of the injected clock, so tests drive it without sleeping.
        var disconnectedPolls = 0
        var stalledPolls = 0
        var lastPlayed = -1
        while true {
            if Task.isCancelled { return .cancelled }
            guard let progress = await output.progress(of: track) else { return .failed(Self.trackTaken) }
            await announceWords(heardUpTo: progress.playedFrames)

            if let error = synthesisError { return .failed(error) }
            if let hold = holdFrame, progress.playedFrames >= hold, !pausedAtWordReported {
                pausedAtWordReported = true
                await output.setPaused(true, track)
                await report(.pausedAtWord)
            }
            if synthesisEnded, holdFrame == nil, progress.isFinished {
                await announceWords(heardUpTo: .max)
                return .completed
            }
            if progress.isConnected {
                disconnectedPolls = 0
            } else {
                disconnectedPolls += 1
                if settings.pollInterval * disconnectedPolls > settings.audioReconnectGrace {
                    return .failed(SpeechError(.audioUnavailable, "the sound server went away and did not come back"))
                }
            }
            // The watchdog: audio that should be playing and is not moving means something below us
            // is stuck. Fail this item rather than leave the whole queue silent behind it.
            let shouldMove = progress.isConnected && !isPausedByClient && !pausedAtWordReported
                && (progress.appendedFrames > progress.playedFrames || synthesisEnded)
            if shouldMove && progress.playedFrames == lastPlayed {
                stalledPolls += 1
                if settings.pollInterval * stalledPolls > settings.playbackStallLimit {
                    return .failed(SpeechError(.audioUnavailable, "playback stopped making progress; the item was abandoned so that speech can go on"))
                }
            } else {
                stalledPolls = 0
            }
            lastPlayed = progress.playedFrames
            do {
                try await clock.sleep(for: settings.pollInterval)
            } catch {
                return .cancelled
            }
        }
    }

    private static let trackTaken = SpeechError(.audioUnavailable, "the output started another track while this one played")

    /// Reports words and marks whose audio has been heard, in the order of their frames
    /// (a mark before the word at the same frame: it stands before it in the text).
    private func announceWords(heardUpTo played: Int) async {
        while true {
            let word = unheardWords.first.flatMap { $0.frame <= played ? $0 : nil }
            let mark = unheardMarks.first.flatMap { $0.frame <= played ? $0 : nil }
            if let mark, word.map({ mark.frame <= $0.frame }) ?? true {
                unheardMarks.removeFirst()
                await report(.mark(name: mark.name))
            } else if let word {
                unheardWords.removeFirst()
                await report(.word(start: word.start, length: word.length))
            } else {
                return
            }
        }
    }

    // MARK: - Feeding

    private func feed(_ track: TrackID, offset: Int) async {
        do {
            for try await chunk in engine.synthesize(item.utterance) {
                if Task.isCancelled { return }
                unheardWords += chunk.words.map { WordMark(frame: $0.frame + offset, start: $0.start, length: $0.length) }
                unheardMarks += chunk.marks.map { NamedMark(frame: $0.frame + offset, name: $0.name) }
                await output.append(chunk.samples, to: track)
                if wantsWordPause && holdFrame == nil { await chooseHold(track) }
            }
            if Task.isCancelled { return }
            await output.end(track)
            synthesisEnded = true
        } catch let error as SpeechError {
            synthesisError = error
        } catch is CancellationError {
            return
        } catch {
            synthesisError = SpeechError(.engineFailed, "\(error)")
        }
    }

    // MARK: - Controls

    private func obey(_ track: TrackID) async {
        for await control in controls {
            switch control {
            case .pause(let boundary): await pause(track, at: boundary)
            case .resume: await resume(track)
            }
        }
    }

    private func pause(_ track: TrackID, at boundary: PauseBoundary) async {
        switch boundary {
        case .immediate:
            if holdFrame != nil { await output.hold(track, at: nil) }
            holdFrame = nil
            wantsWordPause = false
            isPausedByClient = true
            await output.setPaused(true, track)
        case .word:
            wantsWordPause = true
            await chooseHold(track)
        }
    }

    private func resume(_ track: TrackID) async {
        wantsWordPause = false
        isPausedByClient = false
        pausedAtWordReported = false
        if holdFrame != nil {
            holdFrame = nil
            await output.hold(track, at: nil)
        }
        await output.setPaused(false, track)
    }

    /// Holds at the start of the first word that the server has not been given yet. Audio already
    /// written to the server (up to `serverBuffer` ahead of what is heard) cannot be taken back,
    /// so a word starting inside that window is let through and the pause falls after it.
    private func chooseHold(_ track: TrackID) async {
        guard let progress = await output.progress(of: track) else { return }
        let earliest = progress.playedFrames + engine.format.frames(milliseconds: settings.serverBufferMilliseconds)
        if let word = unheardWords.first(where: { $0.frame >= earliest }) {
            holdFrame = word.frame
            await output.hold(track, at: word.frame)
        }
        // No word boundary ahead (yet): the item plays out and the pause holds before the next item.
    }
}
