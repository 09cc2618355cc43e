// SPDX-License-Identifier: GPL-3.0-or-later
/// The rules an `ItemPlayer` follows for one item, as a pure state machine.
///
/// It takes what happens to the item one thing at a time (audio appended to the output with the
/// words and marks that start in it, synthesis ended or failed, a pause or a resume, the output's
/// progress, the clock) and returns what the player must do: commands to the output, reports to
/// the coordinator, the one deadline to wake up at, and at last the outcome. It never awaits and
/// never touches audio, so every rule is tested row by row in milliseconds (PlaybackStateTests).
///
/// The invariant, checked in every row and by a randomized test over long input sequences:
/// - an item is complete only once synthesis has ended and the output has played every frame
///   appended, to the end of its track;
/// - the item is told audible once, when its first frame has been played (at completion if no
///   report said so before), before any of its words and marks;
/// - every word and mark is told exactly once, in the order of its frame, and only once its first
///   frame has been played and the item is not paused (at completion, any still untold are told);
/// - a word pause is told (`pausedAtWord`) only once the output has played up to the word where
///   it holds, and nothing is told while paused.
///
/// Progress reports may be stale (they describe the output as it was when it last spoke), so no
/// rule trusts one beyond what it says: a report made while the track was held says nothing about
/// the frames behind the hold.
public struct PlaybackState<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    public struct Limits: Sendable, Equatable {
        /// How far ahead of what is heard the output may already have given audio to the server:
        /// a word starting inside that window cannot be held before any more.
        public var serverBufferFrames: Int
        /// How long audio that should be moving may stand still before the item is failed.
        public var stallLimit: Duration
        /// How long the sound server may be gone before the item is failed.
        public var reconnectGrace: Duration

        public init(serverBufferFrames: Int, stallLimit: Duration, reconnectGrace: Duration) {
            self.serverBufferFrames = serverBufferFrames
            self.stallLimit = stallLimit
            self.reconnectGrace = reconnectGrace
        }
    }

    public enum Input: Sendable, Equatable {
        /// `frames` frames were appended to the track (the output has them), with the words and
        /// marks that start in them (frames from the track's start).
        case appended(frames: Int, words: [WordMark], marks: [NamedMark])
        /// Synthesis ended and the output was told the track gets no more frames.
        case synthesisEnded
        case synthesisFailed(SpeechError)
        case pause(PauseBoundary)
        case resume
        /// What the output last said about the track.
        case progress(PlaybackProgress)
        /// The deadline last asked for may have passed.
        case deadline
    }

    public enum Command: Sendable, Equatable {
        /// Tell the output to hold at this frame (`nil`: release the hold).
        case hold(at: Int?)
        /// Cork (`true`) or uncork the output.
        case setPaused(Bool)
        /// Tell the coordinator.
        case report(PlayerReport)
        /// Wake up with `.deadline` at this instant (`nil`: no deadline in force). Replaces the last.
        case wake(at: Instant?)
        /// The item is over: nothing more is to be done for it.
        case finish(SpeechQueue.PlaybackOutcome)
    }

    /// Where a pause of this item stands.
    public enum Pause: Sendable, Equatable {
        case none
        /// A word pause was asked and no word the server has not been given is known yet.
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
    enum Watch: Equatable {
        /// Audio should be moving and stood at `played`: past `until`, the item is failed.
        case stall(played: Int, until: Instant)
        /// The sound server is gone: past `until`, the item is failed.
        case outage(until: Instant)

        var until: Instant {
            switch self {
            case .stall(_, let until), .outage(let until): until
            }
        }
    }

    public let limits: Limits
    /// Frames appended to the track so far, as the feeder told.
    public private(set) var appendedFrames = 0
    public private(set) var synthesisEnded = false
    public private(set) var pause = Pause.none
    /// What the output last said.
    public private(set) var progress = PlaybackProgress(playedFrames: 0, appendedFrames: 0, isFinished: false, connection: .connected)
    /// Set once the item is over; every later input is ignored.
    public private(set) var outcome: SpeechQueue.PlaybackOutcome?
    /// Whether `.audible` was reported.
    private var toldAudible = false
    private var untoldWords: [WordMark] = []
    private var untoldMarks: [NamedMark] = []
    private var watch: Watch?

    public init(limits: Limits) {
        self.limits = limits
    }

    /// The item is complete: synthesis ended, nothing is held back, and the output played every
    /// frame appended to the end of the track, as it says in a report that knows of all of them.
    private var isComplete: Bool {
        synthesisEnded && !pause.holds && progress.isFinished
            && progress.appendedFrames >= appendedFrames && progress.playedFrames >= appendedFrames
    }

    public mutating func handle(_ input: Input, now: Instant) -> [Command] {
        guard outcome == nil else { return [] }
        var commands: [Command] = []
        switch input {
        case .appended(let frames, let words, let marks):
            appendedFrames += frames
            untoldWords += words
            untoldMarks += marks
            if pause == .wantedAtWord { commands += chooseHold() }
        case .synthesisEnded:
            synthesisEnded = true
        case .synthesisFailed(let error):
            return finish(.failed(error))
        case .pause(.immediate):
            if pause.holds { commands.append(.hold(at: nil)) }
            pause = .immediate
            commands.append(.setPaused(true))
        case .pause(.word):
            guard pause == .none else { break }
            pause = .wantedAtWord
            commands += chooseHold()
        case .resume:
            if pause.holds { commands.append(.hold(at: nil)) }
            pause = .none
            commands.append(.setPaused(false))
        case .progress(let latest):
            progress = latest
        case .deadline:
            break
        }

        // Nothing is told while paused, not even what a late report says was played before the cork
        // (an immediate pause ramps down what the server has not read: a word can start in the ramp,
        // and the report of it came 0.1 s after `paused` at times): it is told at the resume.
        if !pause.isInForce { commands += tell(heardUpTo: progress.playedFrames) }
        if case .holding(let frame, reached: false) = pause, progress.playedFrames >= frame {
            pause = .holding(frame: frame, reached: true)
            commands += [.setPaused(true), .report(.pausedAtWord)]
        }
        if isComplete {
            return commands + tell(heardUpTo: .max) + finish(.completed)
        }
        if let failure = watchdog(now: now, commands: &commands) {
            return commands + finish(.failed(failure))
        }
        return commands
    }

    private mutating func finish(_ outcome: SpeechQueue.PlaybackOutcome) -> [Command] {
        self.outcome = outcome
        return (watch == nil ? [] : [.wake(at: nil)]) + [.finish(outcome)]
    }

    /// Holds at the start of the first word the server has not been given yet. Audio already
    /// written to the server (up to `serverBufferFrames` ahead of what is heard) cannot be taken
    /// back, so a word starting inside that window is let through and the pause falls after it.
    /// With no such word (yet), the pause stays wanted: the next words may have one, else the item
    /// plays out and the pause holds before the next item.
    private mutating func chooseHold() -> [Command] {
        let earliest = progress.playedFrames + limits.serverBufferFrames
        guard let word = untoldWords.first(where: { $0.frame >= earliest }) else { return [] }
        pause = .holding(frame: word.frame, reached: false)
        return [.hold(at: word.frame)]
    }

    /// Tells that the item is audible once anything of it was played, then the words and marks
    /// whose first frame is below `played`, in the order of their frames (a mark before the word at
    /// the same frame: it stands before it in the text).
    private mutating func tell(heardUpTo played: Int) -> [Command] {
        var commands: [Command] = []
        if !toldAudible, played > 0 {
            toldAudible = true
            commands.append(.report(.audible))
        }
        while true {
            let word = untoldWords.first.flatMap { $0.frame < played ? $0 : nil }
            let mark = untoldMarks.first.flatMap { $0.frame < played ? $0 : nil }
            if let mark, word.map({ mark.frame <= $0.frame }) ?? true {
                untoldMarks.removeFirst()
                commands.append(.report(.mark(name: mark.name)))
            } else if let word {
                untoldWords.removeFirst()
                commands.append(.report(.word(start: word.start, length: word.length)))
            } else {
                return commands
            }
        }
    }

    /// Audio that should be playing and is not moving means something below us is stuck: the item
    /// fails rather than leave the whole queue silent behind it. A sound server gone for longer
    /// than the grace fails it too, and one that was never reached fails it at once: nothing is
    /// coming to wait for. Returns the failure, or arms the one deadline in force.
    private mutating func watchdog(now: Instant, commands: inout [Command]) -> SpeechError? {
        // What the server may hold is not known played until a report says so, and none comes while
        // nothing plays: an item waiting for its next audio stands a few milliseconds short of what
        // was appended (the sink's latency), and is not stuck for that.
        let waiting = appendedFrames - progress.playedFrames
        let shouldMove = !pause.isInForce && (waiting > limits.serverBufferFrames || synthesisEnded)
        let wanted: Watch?
        if case .unreachable(let error) = progress.connection {
            return error
        } else if !progress.isConnected {
            if case .outage = watch { wanted = watch } else { wanted = .outage(until: now.advanced(by: limits.reconnectGrace)) }
        } else if shouldMove {
            if case .stall(progress.playedFrames, _) = watch { wanted = watch } else {
                wanted = .stall(played: progress.playedFrames, until: now.advanced(by: limits.stallLimit))
            }
        } else {
            wanted = nil
        }
        if let wanted, wanted.until <= now {
            if case .outage = wanted {
                return SpeechError(.audioUnavailable, "the sound server went away and did not come back")
            }
            return SpeechError(.audioUnavailable, "playback stopped making progress; the item was abandoned so that speech can go on")
        }
        if wanted != watch {
            watch = wanted
            commands.append(.wake(at: wanted?.until))
        }
        return nil
    }
}
