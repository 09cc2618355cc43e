// SPDX-License-Identifier: GPL-3.0-or-later
/// What a player tells the coordinator about its item.
public enum PlayerReport: Sendable, Equatable {
    /// The item's first frame was heard: it has begun to sound (told once, before its first word).
    case audible
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
/// It lives for one item and owns one output track. Its rules are `PlaybackState`'s: one loop,
/// `follow`, hands it what happens one thing at a time (audio appended, a control, the output's
/// progress, a deadline) and carries out what it returns (hold, cork, uncork, reports, the next
/// deadline, the outcome). Small children of one task group feed the loop: the feeder (engine →
/// output, then the frames, words and marks it appended), the output's progress and a timer for
/// the one deadline in force; controls (`control(_:)`) go straight in. `run` returns only once
/// every child has returned, and every output call names the player's track: nothing this player
/// does can reach the next item's audio.
///
/// Nothing here polls: while audio plays, the output's own progress drives words, the pause at a
/// word and the end; a deadline (the watchdog, or the grace for a lost sound server) is armed only
/// while audio should be moving or the server is gone. A paused item makes no wake-ups at all.
struct ItemPlayer<C: Clock<Duration>>: Sendable {
    private let item: SpeechItem
    private let engine: any SpeechEngine
    /// The item's audio, asked of the engine when the player is made: the engine can work while the
    /// player's task waits for a thread and its track begins. Iterated by the feeder, which every
    /// run starts, so a run cancelled at once still ends it (the stream's termination cancels the
    /// synthesis).
    private let audio: AsyncThrowingStream<SynthesisChunk, any Error>
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
        audio = engine.synthesize(item.utterance)
        self.output = output
        self.clock = clock
        self.settings = settings
        self.report = report
        (inputs, input) = AsyncStream.makeStream(of: Input.self)
    }

    /// Pauses or resumes, after whatever happened before (run once; ignored once it has returned).
    func control(_ control: PlayerControl) {
        switch control {
        case .pause(let boundary): input.yield(.pause(boundary))
        case .resume: input.yield(.resume)
        }
    }

    /// What `follow` reacts to, one at a time, in the order it happened.
    private typealias Input = PlaybackState<C.Instant>.Input

    /// Plays the item to its end, or until its task is cancelled (`.cancelled`), and leaves the
    /// output silent unless the item completed.
    func run() async -> SpeechQueue.PlaybackOutcome {
        let format = engine.format
        let track = await output.begin(format: format)
        var earcon: [Int16] = []
        if item.playsEarcon {
            earcon = Earcon.screenChanged(format: format) + [Int16](repeating: 0, count: format.frames(milliseconds: 60))
            await output.append(earcon, to: track.id)
            input.yield(.appended(frames: earcon.count / max(format.channels, 1), words: [], marks: []))
        }
        let offset = earcon.count / max(format.channels, 1)
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

    /// Hands each input to the rules and carries out what they return, until they give the outcome.
    private func follow(
        _ track: TrackID, _ inputs: AsyncStream<Input>, deadlines: AsyncStream<C.Instant?>.Continuation
    ) async -> SpeechQueue.PlaybackOutcome {
        var state = PlaybackState<C.Instant>(limits: .init(
            serverBufferFrames: engine.format.frames(milliseconds: settings.serverBufferMilliseconds),
            stallLimit: settings.playbackStallLimit, reconnectGrace: settings.audioReconnectGrace))
        for await input in inputs {
            var commands: [PlaybackState<C.Instant>.Command] = []
            // A word pause chooses its word from what is heard now: the last report may be a few
            // milliseconds old, and a word let through by mistake would be cut.
            if input == .pause(.word), state.pause == .none, let fresh = await output.progress(of: track) {
                commands += state.handle(.progress(fresh), now: clock.now)
            }
            commands += state.handle(input, now: clock.now)
            for command in commands {
                switch command {
                case .hold(let frame): await output.hold(track, at: frame)
                case .setPaused(let paused): await output.setPaused(paused, track)
                case .report(let report): await self.report(report)
                case .wake(let instant): deadlines.yield(instant)
                case .finish(let outcome): return outcome
                }
            }
        }
        return .cancelled  // the inputs end only when this task is cancelled
    }

    // MARK: - The children

    private func feed(_ track: TrackID, offset: Int, into input: AsyncStream<Input>.Continuation) async {
        do {
            for try await chunk in audio {
                if Task.isCancelled { return }
                await output.append(chunk.samples, to: track)
                input.yield(.appended(
                    frames: chunk.samples.count / max(engine.format.channels, 1),
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
