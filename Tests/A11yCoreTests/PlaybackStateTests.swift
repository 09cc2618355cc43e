// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yTestSupport
import Testing

/// The item player's rules (`PlaybackState`), one test per rule, then a randomized run of long
/// input sequences against a model output that checks the invariant after every step.
@Suite struct PlaybackStateTests {
    typealias Instant = ImmediateClock.Instant
    typealias State = PlaybackState<Instant>

    static let limits = State.Limits(serverBufferFrames: 100, stallLimit: .seconds(3), reconnectGrace: .seconds(2))
    static let t0 = Instant(offset: .zero)

    func at(_ seconds: Double) -> Instant { Instant(offset: .milliseconds(Int(seconds * 1000))) }

    func progress(played: Int, appended: Int, finished: Bool = false, connected: Bool = true) -> State.Input {
        progress(played: played, appended: appended, finished: finished, connection: connected ? .connected : .reconnecting)
    }

    func progress(played: Int, appended: Int, finished: Bool = false, connection: PlaybackProgress.Connection) -> State.Input {
        .progress(PlaybackProgress(playedFrames: played, appendedFrames: appended, isFinished: finished, connection: connection))
    }

    func word(_ frame: Int, _ start: Int) -> WordMark { WordMark(frame: frame, start: start, length: 1) }

    /// Every report in `commands`, in order.
    func reports(_ commands: [State.Command]) -> [PlayerReport] {
        commands.compactMap { if case .report(let r) = $0 { r } else { nil } }
    }

    @Test func aWordIsToldOnceItsFirstFrameIsPlayedNotBefore() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [word(0, 0), word(400, 5)], marks: []), now: Self.t0)
        #expect(same(reports(state.handle(progress(played: 0, appended: 1000), now: Self.t0)), []))
        // Its first frame heard: the item is audible (`started`), then its first word, once each.
        #expect(same(reports(state.handle(progress(played: 1, appended: 1000), now: Self.t0)), [.audible, .word(start: 0, length: 1)]))
        #expect(same(reports(state.handle(progress(played: 400, appended: 1000), now: Self.t0)), []))
        #expect(same(reports(state.handle(progress(played: 401, appended: 1000), now: Self.t0)), [.word(start: 5, length: 1)]))
        #expect(same(reports(state.handle(progress(played: 900, appended: 1000), now: Self.t0)), []), "each word once")
    }

    /// An immediate pause ramps down what the server has not read yet: the frames of the ramp are
    /// played, and the report that says so can come after `paused`. A word starting in them is told
    /// at the resume, not while paused (HeardWhole heard "1 word(s) told while paused" in the natural
    /// voice paused right after a post).
    @Test func aWordPlayedInThePauseRampIsToldAtTheResume() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [word(20, 0), word(400, 5)], marks: [NamedMark(frame: 10, name: "m")]), now: Self.t0)
        #expect(state.handle(.pause(.immediate), now: Self.t0).contains(.setPaused(true)))
        #expect(reports(state.handle(progress(played: 240, appended: 1000), now: Self.t0)).isEmpty, "nothing told while paused")
        #expect(same(reports(state.handle(.resume, now: Self.t0)), [.audible, .mark(name: "m"), .word(start: 0, length: 1)]))
        #expect(same(reports(state.handle(progress(played: 401, appended: 1000), now: Self.t0)), [.word(start: 5, length: 1)]))
    }

    @Test func aMarkIsToldBeforeTheWordAtTheSameFrame() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [word(200, 3)], marks: [NamedMark(frame: 200, name: "m")]), now: Self.t0)
        let told = reports(state.handle(progress(played: 500, appended: 1000), now: Self.t0))
        #expect(same(told, [.audible, .mark(name: "m"), .word(start: 3, length: 1)]))
    }

    @Test func completeOnlyOnceTheEndIsPlayedAndSynthesisEnded() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [word(0, 0), word(999, 9)], marks: []), now: Self.t0)
        // Every frame played, but synthesis may still add some: not complete.
        #expect(!state.handle(progress(played: 990, appended: 1000), now: Self.t0).contains(.finish(.completed)))
        let commands = state.handle(.synthesisEnded, now: Self.t0)
        #expect(!commands.contains(.finish(.completed)), "the output has not said the track's end was played")
        let end = state.handle(progress(played: 1000, appended: 1000, finished: true), now: Self.t0)
        #expect(same(end.last, .finish(.completed)))
        #expect(same(reports(end), [.word(start: 9, length: 1)]))
        #expect(same(state.handle(.resume, now: Self.t0), []), "nothing after the outcome")
    }

    /// A report made while the track stood at a word's hold (played up to the
    /// hold; an output may call that finished) arrived before anything newer after the resume,
    /// and the item was ended as spoken with the rest of the sentence never played.
    @Test func aReportMadeAtTheHoldNeverCompletesTheItemAfterTheResume() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 5000, words: [word(0, 0), word(1000, 4), word(3000, 8)], marks: []), now: Self.t0)
        _ = state.handle(.synthesisEnded, now: Self.t0)
        _ = state.handle(progress(played: 500, appended: 5000), now: Self.t0)
        #expect(same(state.handle(.pause(.word), now: Self.t0), [.hold(at: 1000)]))
        let reached = state.handle(progress(played: 1000, appended: 5000, finished: true), now: Self.t0)
        #expect(reached.contains(.setPaused(true)) && reports(reached).last == .pausedAtWord)
        let resumed = state.handle(.resume, now: Self.t0)
        #expect(same(resumed.prefix(2), [.hold(at: nil), .setPaused(false)]))
        #expect(!resumed.contains(.finish(.completed)))
        #expect(reports(resumed).isEmpty, "the words after the hold are not heard yet")
        #expect(!state.handle(progress(played: 1000, appended: 5000, finished: true), now: Self.t0).contains(.finish(.completed)))
        let end = state.handle(progress(played: 5000, appended: 5000, finished: true), now: Self.t0)
        #expect(same(reports(end), [.word(start: 4, length: 1), .word(start: 8, length: 1)]))
        #expect(same(end.last, .finish(.completed)))
    }

    @Test func aWordPauseHoldsAtTheFirstWordTheServerHasNotBeenGiven() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 5000, words: [word(0, 0), word(250, 2), word(320, 4), word(900, 6)], marks: []), now: Self.t0)
        _ = state.handle(progress(played: 200, appended: 5000), now: Self.t0)
        // 250 lies within the server's buffer (200 + 100): the pause falls after it, at 320.
        #expect(same(state.handle(.pause(.word), now: Self.t0), [.hold(at: 320)]))
        #expect(same(state.pause, .holding(frame: 320, reached: false)))
        let moving = state.handle(progress(played: 319, appended: 5000), now: Self.t0)
        #expect(same(reports(moving), [.word(start: 2, length: 1)]), "the word before the hold is heard and told")
        let reached = state.handle(progress(played: 320, appended: 5000), now: Self.t0)
        #expect(reached.contains(.setPaused(true)) && reports(reached) == [.pausedAtWord])
        #expect(reports(state.handle(progress(played: 320, appended: 5000), now: Self.t0)).isEmpty, "nothing told while paused")
        #expect(state.handle(.pause(.word), now: Self.t0).filter { if case .hold = $0 { true } else { false } }.isEmpty,
                "a second pause changes nothing")
    }

    @Test func aWordPauseWithNoWordAheadWaitsForTheNextChunk() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [word(0, 0)], marks: []), now: Self.t0)
        _ = state.handle(progress(played: 100, appended: 1000), now: Self.t0)
        #expect(state.handle(.pause(.word), now: Self.t0).isEmpty)
        #expect(same(state.pause, .wantedAtWord))
        let next = state.handle(.appended(frames: 1000, words: [word(1500, 7)], marks: []), now: Self.t0)
        #expect(same(next.first, .hold(at: 1500)))
    }

    @Test func anImmediatePauseReleasesAWordHoldAndCorks() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 5000, words: [word(0, 0), word(2000, 3)], marks: []), now: Self.t0)
        _ = state.handle(.pause(.word), now: Self.t0)
        #expect(same(state.handle(.pause(.immediate), now: Self.t0).prefix(2), [.hold(at: nil), .setPaused(true)]))
        #expect(same(state.pause, .immediate))
        #expect(same(state.handle(.resume, now: Self.t0).first, .setPaused(false)))
        #expect(same(state.pause, .none))
    }

    @Test func audioThatStandsStillFailsTheItemAfterTheStallLimit() {
        var state = State(limits: Self.limits)
        #expect(state.handle(.appended(frames: 1000, words: [], marks: []), now: Self.t0).contains(.wake(at: at(3))))
        #expect(state.handle(progress(played: 0, appended: 1000), now: at(1)).isEmpty, "the deadline stands")
        // It moved: the deadline moves with it.
        #expect(same(state.handle(progress(played: 10, appended: 1000), now: at(2)), [.report(.audible), .wake(at: at(5))]))
        let failed = state.handle(.deadline, now: at(5))
        guard case .finish(.failed(let error)) = failed.last else { Issue.record("\(failed)"); return }
        #expect(error.code == .audioUnavailable && error.message.contains("progress"))
    }

    /// Waiting for its next audio (a natural voice slow to start after a screenChanged earcon), an
    /// item stands where the last report left it, short of what was appended by what the server may
    /// hold: no report tells more while nothing plays, and it is not stuck for that.
    @Test func anItemWaitingForAudioWithinWhatTheServerHoldsIsNotStalled() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [], marks: []), now: Self.t0)
        #expect(same(state.handle(progress(played: 900, appended: 1000), now: at(1)).last, .wake(at: nil)))
        #expect(state.handle(.deadline, now: at(10)).isEmpty, "no deadline: it waits for audio")
        // More audio, and the output stands still: that is a stall.
        #expect(same(state.handle(.appended(frames: 500, words: [], marks: []), now: at(10)), [.wake(at: at(13))]))
        guard case .finish(.failed) = state.handle(.deadline, now: at(13)).last else {
            Issue.record("a stall with audio to play is not failed")
            return
        }
    }

    @Test func aPausedItemHasNoDeadline() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [], marks: []), now: Self.t0)
        #expect(same(state.handle(.pause(.immediate), now: Self.t0).last, .wake(at: nil)))
        #expect(state.handle(.deadline, now: at(100)).isEmpty, "paused for ever is not a stall")
    }

    @Test func aLostServerFailsTheItemAfterTheGrace() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [], marks: []), now: Self.t0)
        #expect(same(state.handle(progress(played: 0, appended: 1000, connected: false), now: at(1)), [.wake(at: at(3))]))
        let failed = state.handle(.deadline, now: at(3))
        guard case .finish(.failed(let error)) = failed.last else { Issue.record("\(failed)"); return }
        #expect(error.message.contains("sound server"))
    }

    /// No server was ever reached and the last attempt said why: the item ends at once with that
    /// reason, not after the grace meant for a server that went away.
    @Test func anUnreachableServerFailsTheItemAtOnceWithItsReason() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [], marks: []), now: Self.t0)
        let why = SpeechError(.audioUnavailable, "no sound server reachable at unix:/run/user/1000/pulse/native (no such socket)")
        let failed = state.handle(progress(played: 0, appended: 1000, connection: .unreachable(why)), now: at(1))
        #expect(same(failed, [.wake(at: nil), .finish(.failed(why))]), "the stall deadline given up, the item failed")
        #expect(same(state.outcome, .failed(why)))
    }

    /// While the first attempt is under way nothing is known yet: the item waits as for a server
    /// that went away, and fails at once when the attempt fails.
    @Test func anItemWaitsForTheFirstAttemptThenFailsWhenItFails() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [], marks: []), now: Self.t0)
        #expect(same(state.handle(progress(played: 0, appended: 1000, connection: .reconnecting), now: Self.t0), [.wake(at: at(2))]))
        let why = SpeechError(.audioUnavailable, "no sound server reachable at unix:/x (refused)")
        #expect(same(state.handle(progress(played: 0, appended: 1000, connection: .unreachable(why)), now: at(0.5)), [.wake(at: nil), .finish(.failed(why))]))
    }

    /// Paused, an item still cannot be played anywhere: it ends too, rather than wait for a resume.
    @Test func aPausedItemFailsWhenNoServerIsReachable() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [], marks: []), now: Self.t0)
        _ = state.handle(.pause(.immediate), now: Self.t0)
        let why = SpeechError(.audioUnavailable, "no sound server reachable at unix:/x (no such socket)")
        #expect(same(state.handle(progress(played: 0, appended: 1000, connection: .unreachable(why)), now: at(1)).last, .finish(.failed(why))))
    }

    @Test func aServerBackWithinTheGraceGoesOn() {
        var state = State(limits: Self.limits)
        _ = state.handle(.appended(frames: 1000, words: [], marks: []), now: Self.t0)
        _ = state.handle(progress(played: 0, appended: 1000, connected: false), now: at(1))
        #expect(same(state.handle(progress(played: 0, appended: 1000), now: at(2)), [.wake(at: at(5))]))
        #expect(state.outcome == nil)
    }

    @Test func aSynthesisFailureEndsTheItem() {
        var state = State(limits: Self.limits)
        let error = SpeechError(.engineFailed, "boom")
        #expect(same(state.handle(.synthesisFailed(error), now: Self.t0), [.finish(.failed(error))]))
        #expect(state.handle(.appended(frames: 10, words: [], marks: []), now: Self.t0).isEmpty)
    }

    // MARK: - Randomized

    /// Long random sequences of synthesis, pauses, resumes, playback and late reports, against a
    /// model output; the invariant is checked after every step, and every run must complete once
    /// it is resumed and played out. Half the runs use an output that says `isFinished` at a hold
    /// (as a11yd's did), which must not fool the rules.
    @Test(arguments: 0..<200)
    func theInvariantHoldsOverRandomRuns(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var model = ModelOutput(finishedAtHold: seed % 2 == 1)
        var state = State(limits: Self.limits)
        var told: [PlayerReport] = []
        var tellable: [WordMark] = []  // every word appended, in order
        var pausedAtWord = false
        var pausedAtOnce = false
        var now = Self.t0
        var ended = false
        var outcome: SpeechQueue.PlaybackOutcome?

        func apply(_ commands: [State.Command]) {
            // At completion every word still untold is told, paused or not.
            let finishing = commands.contains { if case .finish = $0 { true } else { false } }
            for command in commands {
                if case .report(let report) = command, report != .pausedAtWord {
                    #expect(!pausedAtOnce || finishing, "nothing told while paused at once: \(report) (seed \(seed))")
                }
                switch command {
                case .hold(let frame): model.hold(at: frame)
                case .setPaused(let paused): model.corked = paused
                case .report(.word(let start, _)):
                    let heard = tellable.first { $0.start == start }
                    #expect(same(pausedAtWord, false), "no word told while paused at a word (seed \(seed))")
                    #expect(heard.map { $0.frame < model.played } ?? false, "a word is told once its first frame is played (seed \(seed))")
                    told.append(.word(start: start, length: 1))
                case .report(.pausedAtWord):
                    #expect(model.hold.map { model.played >= $0 } ?? false, "paused at a word once the hold is reached (seed \(seed))")
                    pausedAtWord = true
                    told.append(.pausedAtWord)
                case .report(let other): told.append(other)
                case .wake: break
                case .finish(let result):
                    outcome = result
                    if result == .completed {
                        #expect(ended && model.played == model.appended, "complete only once every frame appended was played (seed \(seed))")
                    }
                }
            }
        }

        func step(_ input: State.Input) { apply(state.handle(input, now: now)) }

        var nextStart = 0
        for _ in 0..<random.next(below: 60) + 20 where outcome == nil {
            switch random.next(below: 10) {
            case 0...1 where !ended:
                let frames = Int(random.next(below: 2000)) + 50
                var words: [WordMark] = []
                var frame = model.appended + Int(random.next(below: 40))
                while frame < model.appended + frames {
                    words.append(WordMark(frame: frame, start: nextStart, length: 1))
                    nextStart += 1
                    frame += Int(random.next(below: 600)) + 1
                }
                model.appended += frames
                tellable += words
                step(.appended(frames: frames, words: words, marks: []))
            case 2 where !ended:
                model.ended = true
                ended = true
                step(.synthesisEnded)
            case 3:
                let boundary: PauseBoundary = random.next(below: 2) == 0 ? .word : .immediate
                if boundary == .immediate { pausedAtOnce = true }
                step(.pause(boundary))
            case 4:
                pausedAtWord = false
                pausedAtOnce = false
                step(.resume)
            case 5, 6, 7:
                model.play(Int(random.next(below: 800)))
                now = now.advanced(by: .milliseconds(20))
                model.snapshot()
            default:
                // Reports arrive late, a few dropped: the oldest outstanding, or the newest.
                if let report = model.nextReport(newest: random.next(below: 2) == 0) { step(.progress(report)) }
            }
            // Told words are in order, each once.
            let starts = told.compactMap { if case .word(let s, _) = $0 { s } else { nil } }
            #expect(same(starts, Array(starts.indices)), "words told once each, in order: \(starts) (seed \(seed))")
        }
        // However it stands, a resume, the end of synthesis and playing out complete it.
        if outcome == nil {
            pausedAtWord = false
            pausedAtOnce = false
            step(.resume)
            if !ended { model.ended = true; ended = true; step(.synthesisEnded) }
            model.play(.max / 2)
            model.snapshot()
            while outcome == nil, let report = model.nextReport(newest: false) { step(.progress(report)) }
        }
        #expect(same(outcome, .completed), "completes once played out (seed \(seed))")
        let starts = told.compactMap { if case .word(let s, _) = $0 { s } else { nil } }
        #expect(same(starts, tellable.map(\.start)), "every word told exactly once (seed \(seed))")
    }
}

/// What an output does with a track, reduced to frames: appended, played (never past a hold or
/// the end, nothing while corked), and the reports it made, which reach the player late.
struct ModelOutput {
    /// Says `isFinished` while standing at a hold, as a11yd's output once did.
    let finishedAtHold: Bool
    var appended = 0
    var played = 0
    var ended = false
    var corked = false
    private(set) var hold: Int?
    private var reports: [PlaybackProgress] = []

    init(finishedAtHold: Bool) { self.finishedAtHold = finishedAtHold }

    /// A hold behind what was played stops where playback stands (the server already had it).
    mutating func hold(at frame: Int?) { hold = frame.map { max($0, played) } }

    mutating func play(_ frames: Int) {
        guard !corked else { return }
        played = min(played + frames, min(hold ?? .max, appended))
    }

    mutating func snapshot() {
        let atHold = hold.map { played >= $0 } ?? false
        reports.append(PlaybackProgress(
            playedFrames: played, appendedFrames: appended,
            isFinished: ended && played >= appended || finishedAtHold && atHold, connection: .connected))
    }

    mutating func nextReport(newest: Bool) -> PlaybackProgress? {
        guard !reports.isEmpty else { return nil }
        if newest {
            defer { reports.removeAll() }
            return reports.last
        }
        return reports.removeFirst()
    }
}
