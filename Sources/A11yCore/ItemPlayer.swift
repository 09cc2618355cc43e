/// What a player tells the coordinator about its item.
enum PlayerReport: Sendable {
    case word(start: Int, length: Int)
    case mark(name: String)
    case pausedAtWord
}

/// Pause and resume requests for a player, applied strictly in the order they were made.
enum PlayerControl: Sendable {
    case pause(PauseBoundary)
    case resume
}

/// Plays one item: synthesises it, feeds the output, and reports each word when it is heard.
///
/// It lives for one item and owns one output track. It is one loop, `follow`, that takes what
/// happens one thing at a time (audio synthesised, a control, the output's progress, a deadline)
/// and alone decides what the output is told (hold, cork, uncork); small children of one task
/// group feed it: the feeder (engine → output, then the words it appended), the output's progress
/// and a timer for the one deadline in force; controls (`control(_:)`) go straight in. `run` returns only once every
/// child has returned, and every output call names the player's track: nothing this player does
/// can reach the next item's audio.
///
/// Nothing here polls: while audio plays, the output's own progress drives words, the pause at a
/// word and the end; a deadline (the watchdog, or the grace for a lost sound server) is armed only
/// while audio should be moving or the server is gone. A paused item makes no wake-ups at all.
struct ItemPlayer<C: Clock<Duration>>: Sendable {
    private let item: SpeechItem
    private let engine: any SpeechEngine
    private let output: any AudioOutput
    private let clock: C
    private let settings: SpeechCoordinator.Configuration
    private let report: @Sendable (PlayerReport) async -> Void
    private let inputs: AsyncStream<Input>
    private let input: AsyncStream<Input>.Continuation

    init(
        item: SpeechItem, engine: any SpeechEngine, output: any AudioOutput, clock: C,
        settings: SpeechCoordinator.Configuration, report: @escaping @Sendable (PlayerReport) async -> Void
    ) {
        self.item = item
        self.engine = engine
        self.output = output
        self.clock = clock
        self.settings = settings
        self.report = report
        (inputs, input) = AsyncStream.makeStream(of: Input.self)
    }

    /// Pauses or resumes, after whatever happened before (run once; ignored once it has returned).
    func control(_ control: PlayerControl) {
        input.yield(.control(control))
    }

    /// What `follow` reacts to, one at a time, in the order it happened.
    private enum Input: Sendable {
        /// Audio was appended to the track, with the words and marks that start in it.
        case synthesized(words: [WordMark], marks: [NamedMark])
        case synthesisEnded
        case synthesisFailed(SpeechError)
        case control(PlayerControl)
        case progress(PlaybackProgress)
        /// The deadline last handed to the timer may have passed.
        case deadline
    }

    /// Plays the item to its end, or until its task is cancelled (`.cancelled`), and leaves the
    /// output silent unless the item completed.
    func run() async -> SpeechQueue.PlaybackOutcome {
        let format = engine.format
        let track = await output.begin(format: format)
        var earcon: [Int16] = []
        if item.playsEarcon && settings.earcon {
            earcon = Earcon.screenChanged(format: format) + [Int16](repeating: 0, count: format.frames(milliseconds: 60))
            await output.append(earcon, to: track.id)
        }
        let offset = earcon.count
        let (deadlines, deadline) = AsyncStream.makeStream(of: C.Instant?.self, bufferingPolicy: .bufferingNewest(1))
        let outcome = await withDiscardingTaskGroup(returning: SpeechQueue.PlaybackOutcome.self) { group in
            group.addTask { await feed(track.id, offset: offset, into: input) }
            group.addTask { for await progress in track.progress { input.yield(.progress(progress)) } }
            group.addTask { await wake(at: deadlines, into: input) }
            let outcome = await follow(track.id, inputs, deadlines: deadline)
            group.cancelAll()
            return outcome
        }
        input.finish()
        // Every child has returned: no call of this item's is still on its way to the output.
        if outcome != .completed { await output.cancel(track.id) }
        return outcome
    }

    // MARK: - The loop

    /// Where a pause of this item stands.
    private enum Pause: Equatable {
        case none
        /// A word pause was asked and no word boundary the server has not been given is known yet.
        case wantedAtWord
        /// The output holds at `frame`; `reached` once it has played up to it (then corked).
        case holding(frame: Int, reached: Bool)
        case immediate

        /// The output holds back audio for it (until resumed).
        var holds: Bool {
            if case .holding = self { true } else { false }
        }

        /// Corked for it: nothing should be moving.
        var isInForce: Bool {
            switch self {
            case .immediate, .holding(_, reached: true): true
            case .none, .wantedAtWord, .holding(_, reached: false): false
            }
        }
    }

    /// The one deadline in force, if any.
    private enum Watch: Equatable {
        /// Audio should be moving and stood at `played`: past `until`, the item is failed.
        case stall(played: Int, until: C.Instant)
        /// The sound server is gone: past `until`, the item is failed.
        case outage(until: C.Instant)

        var until: C.Instant {
            switch self {
            case .stall(_, let until), .outage(let until): until
            }
        }
    }

    private func follow(
        _ track: TrackID, _ inputs: AsyncStream<Input>, deadlines: AsyncStream<C.Instant?>.Continuation
    ) async -> SpeechQueue.PlaybackOutcome {
        var unheardWords: [WordMark] = []
        var unheardMarks: [NamedMark] = []
        var synthesisEnded = false
        var progress = PlaybackProgress(playedFrames: 0, appendedFrames: 0, isFinished: false, isConnected: true)
        var pause = Pause.none
        var watch: Watch?

        /// Holds at the start of the first word that the server has not been given yet. Audio
        /// already written to the server (up to `serverBuffer` ahead of what is heard) cannot be
        /// taken back, so a word starting inside that window is let through and the pause falls
        /// after it. With no such word (yet), the pause stays wanted: the next words may have one,
        /// else the item plays out and the pause holds before the next item.
        func chooseHold() async {
            let played = await output.progress(of: track)?.playedFrames ?? progress.playedFrames
            let earliest = played + engine.format.frames(milliseconds: settings.serverBufferMilliseconds)
            guard let word = unheardWords.first(where: { $0.frame >= earliest }) else { return }
            pause = .holding(frame: word.frame, reached: false)
            await output.hold(track, at: word.frame)
        }

        /// Reports words and marks whose audio has begun to be heard (the server played their first
        /// frame) once `played` frames were, in the order of their frames (a mark before the word
        /// at the same frame: it stands before it in the text).
        func announce(heardUpTo played: Int) async {
            while true {
                let word = unheardWords.first.flatMap { $0.frame < played ? $0 : nil }
                let mark = unheardMarks.first.flatMap { $0.frame < played ? $0 : nil }
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

        for await input in inputs {
            switch input {
            case .synthesized(let words, let marks):
                unheardWords += words
                unheardMarks += marks
                if pause == .wantedAtWord { await chooseHold() }
            case .synthesisEnded:
                synthesisEnded = true
            case .synthesisFailed(let error):
                return .failed(error)
            case .control(.pause(.immediate)):
                if pause.holds { await output.hold(track, at: nil) }
                pause = .immediate
                await output.setPaused(true, track)
            case .control(.pause(.word)):
                guard pause == .none else { break }
                pause = .wantedAtWord
                await chooseHold()
            case .control(.resume):
                if pause.holds { await output.hold(track, at: nil) }
                pause = .none
                await output.setPaused(false, track)
            case .progress(let latest):
                progress = latest
            case .deadline:
                break
            }

            await announce(heardUpTo: progress.playedFrames)
            if case .holding(let frame, reached: false) = pause, progress.playedFrames >= frame {
                pause = .holding(frame: frame, reached: true)
                await output.setPaused(true, track)
                await report(.pausedAtWord)
            }
            if synthesisEnded, !pause.holds, progress.isFinished {
                await announce(heardUpTo: .max)
                return .completed
            }

            // The watchdog: audio that should be playing and is not moving means something below
            // us is stuck; fail this item rather than leave the whole queue silent behind it. And
            // a sound server gone for longer than the grace fails it too.
            let shouldMove = !pause.isInForce && (progress.appendedFrames > progress.playedFrames || synthesisEnded)
            let now = clock.now
            let wanted: Watch?
            if !progress.isConnected {
                if case .outage = watch { wanted = watch } else { wanted = .outage(until: now.advanced(by: settings.audioReconnectGrace)) }
            } else if shouldMove {
                if case .stall(progress.playedFrames, _) = watch { wanted = watch } else {
                    wanted = .stall(played: progress.playedFrames, until: now.advanced(by: settings.playbackStallLimit))
                }
            } else {
                wanted = nil
            }
            if let wanted, wanted.until <= now {
                if case .outage = wanted {
                    return .failed(SpeechError(.audioUnavailable, "the sound server went away and did not come back"))
                }
                return .failed(SpeechError(.audioUnavailable, "playback stopped making progress; the item was abandoned so that speech can go on"))
            }
            if wanted != watch {
                watch = wanted
                deadlines.yield(wanted?.until)
            }
        }
        return .cancelled  // the inputs end only when this task is cancelled
    }

    // MARK: - The children

    private func feed(_ track: TrackID, offset: Int, into input: AsyncStream<Input>.Continuation) async {
        do {
            for try await chunk in engine.synthesize(item.utterance) {
                if Task.isCancelled { return }
                await output.append(chunk.samples, to: track)
                input.yield(.synthesized(
                    words: chunk.words.map { WordMark(frame: $0.frame + offset, start: $0.start, length: $0.length) },
                    marks: chunk.marks.map { NamedMark(frame: $0.frame + offset, name: $0.name) }))
            }
            if Task.isCancelled { return }
            await output.end(track)
            input.yield(.synthesisEnded)
        } catch let error as SpeechError {
            input.yield(.synthesisFailed(error))
        } catch is CancellationError {
            return
        } catch {
            input.yield(.synthesisFailed(SpeechError(.engineFailed, "\(error)")))
        }
    }

    /// Sleeps until the newest deadline, then says so; a deadline that moved while it slept is
    /// taken next (at most one wake-up per deadline, none without one).
    private func wake(at deadlines: AsyncStream<C.Instant?>, into input: AsyncStream<Input>.Continuation) async {
        for await deadline in deadlines {
            guard let deadline else { continue }
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return
            }
            input.yield(.deadline)
        }
    }
}
