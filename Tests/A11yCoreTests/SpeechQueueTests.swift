import A11yCore
import Testing

/// The rules of docs/semantics.md, one test per row, on the pure queue (no audio, no time).
@Suite struct SpeechQueueTests {
    /// Emitted finishes as (id, reason).
    func finishes(_ effects: [SpeechQueue.Effect]) -> [(UInt64, FinishReason)] {
        effects.compactMap {
            if case .emit(.finished(let id, _, let reason, _)) = $0 { (id.rawValue, reason) } else { nil }
        }
    }
    func played(_ effects: [SpeechQueue.Effect]) -> [UInt64] {
        effects.compactMap { if case .play(let item) = $0 { item.id.rawValue } else { nil } }
    }
    func cancelled(_ effects: [SpeechQueue.Effect]) -> [UInt64] {
        effects.compactMap { if case .cancelPlayback(let id) = $0 { id.rawValue } else { nil } }
    }

    @Test func firstPostPlaysAtOnceAndAnnouncesStart() {
        var queue = SpeechQueue()
        let effects = queue.post(item(1))
        #expect(effects == [.play(item(1)), .emit(.started(UtteranceID(rawValue: 1)))])
        #expect(queue.state == .speaking)
    }

    @Test func s1QueuedItemsPlayInOrderAndEachFinishesSpoken() {
        var queue = SpeechQueue()
        var order: [UInt64] = []
        var ended: [(UInt64, FinishReason)] = []
        for n in 1...10 { order += played(queue.post(item(UInt64(n), queued: true))) }
        while let current = queue.current {
            let effects = queue.playbackEnded(current.item.id, .completed)
            ended += finishes(effects)
            order += played(effects)
        }
        #expect(order == Array(1...10))
        #expect(ended.map(\.0) == Array(1...10))
        #expect(ended.allSatisfy { $0.1 == .spoken })
    }

    @Test func s2NewAnnouncementInterruptsTheSpeakingOne() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        let effects = queue.post(item(2))
        #expect(cancelled(effects) == [1])
        #expect(played(effects).isEmpty, "B waits until A's audio is cut")
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(finishes(after).map(\.1) == [.interrupted])
        #expect(played(after) == [2])
    }

    @Test func s2InterruptedItemThatReachedItsEndAnywayIsSpoken() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2))
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(finishes(after).map(\.1) == [.spoken])
    }

    @Test func s3QueuedAnnouncementWaitsForTheSpeakingOne() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        let effects = queue.post(item(2, queued: true))
        #expect(effects.isEmpty)
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(finishes(after).map(\.1) == [.spoken])
        #expect(played(after) == [2])
    }

    @Test func s4ScreenChangeInterruptsFlushesLowerPendingAndPlaysNext() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3, queued: true))
        let effects = queue.post(item(4, .screenChanged))
        #expect(finishes(effects).map(\.0) == [2, 3])
        #expect(finishes(effects).allSatisfy { $0.1 == .flushed })
        #expect(cancelled(effects) == [1])
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(finishes(after).map(\.1) == [.interrupted])
        #expect(played(after) == [4])
        #expect(queue.current?.item.playsEarcon == true)
    }

    @Test func s4ScreenChangeKeepsPendingItemsOfItsOwnPriority() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, priority: .high))
        _ = queue.post(item(2, priority: .high, queued: true))
        let effects = queue.post(item(3, .screenChanged))
        #expect(finishes(effects).isEmpty)
        #expect(queue.pending.map(\.id.rawValue) == [3, 2], "the interrupting item goes first in its class")
    }

    @Test func s5PageScrolledCoalesces() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, .pageScrolled))
        let second = queue.post(item(2, .pageScrolled))
        #expect(cancelled(second) == [1])
        let third = queue.post(item(3, .pageScrolled))
        #expect(finishes(third).map { $0.0 } == [2])
        #expect(finishes(third).map { $0.1 } == [.flushed])
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(finishes(after).map(\.1) == [.interrupted])
        #expect(played(after) == [3])
    }

    @Test func s5QueuedPageScrolledStillReplacesASpeakingOne() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, .pageScrolled))
        #expect(cancelled(queue.post(item(2, .pageScrolled, queued: true))) == [1])
    }

    @Test func s6HighIsNeverInterruptedByDefaultOrLow() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, priority: .high))
        #expect(queue.post(item(2)).isEmpty)
        #expect(queue.post(item(3, priority: .low)).isEmpty)
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(finishes(after).map(\.1) == [.spoken])
        #expect(played(after) == [2])
    }

    @Test func pendingItemsAreOrderedByPriorityThenArrival() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, priority: .high))
        _ = queue.post(item(2, priority: .low, queued: true))
        _ = queue.post(item(3, queued: true))
        _ = queue.post(item(4, priority: .high, queued: true))
        _ = queue.post(item(5, queued: true))
        #expect(queue.pending.map(\.id.rawValue) == [4, 3, 5, 2])
    }

    @Test func nonQueuedItemGoesAheadOfQueuedItemsOfItsPriority() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, priority: .high))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3))
        #expect(queue.pending.map(\.id.rawValue) == [3, 2])
    }

    @Test func s7ImmediatePauseAndResume() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        let (paused, pauseEffects) = queue.pause(at: .immediate)
        #expect(paused)
        #expect(pauseEffects == [.pausePlayback(UtteranceID(rawValue: 1), .immediate), .emit(.paused(UtteranceID(rawValue: 1)))])
        #expect(queue.state == .paused)
        let (resumed, resumeEffects) = queue.resume()
        #expect(resumed)
        #expect(resumeEffects == [.resumePlayback(UtteranceID(rawValue: 1)), .emit(.resumed(UtteranceID(rawValue: 1)))])
        #expect(finishes(queue.playbackEnded(UtteranceID(rawValue: 1), .completed)).map(\.1) == [.spoken])
    }

    @Test func s8WordPauseIsAnnouncedWhenThePlayerReachesTheWord() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        let (effective, effects) = queue.pause(at: .word)
        #expect(effective)
        #expect(effects == [.pausePlayback(UtteranceID(rawValue: 1), .word)])
        #expect(queue.playbackPaused(UtteranceID(rawValue: 1)) == [.emit(.paused(UtteranceID(rawValue: 1)))])
        #expect(queue.resume().effects == [.resumePlayback(UtteranceID(rawValue: 1)), .emit(.resumed(UtteranceID(rawValue: 1)))])
    }

    @Test func wordPauseWithNoWordLeftHoldsBeforeTheNextItem() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        _ = queue.pause(at: .word)
        let ended = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(finishes(ended).map(\.1) == [.spoken])
        #expect(played(ended).isEmpty)
        #expect(queue.state == .paused)
        #expect(played(queue.resume().effects) == [2])
    }

    @Test func pauseWhenNothingSpeaksTakesNoEffect() {
        var queue = SpeechQueue()
        #expect(queue.pause(at: .immediate) == (false, []))
        #expect(queue.resume().effective == false)
    }

    @Test func postsWhilePausedWaitAndNeverInterrupt() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.pause(at: .immediate)
        #expect(queue.post(item(2)).isEmpty)
        #expect(queue.post(item(3, priority: .high)).isEmpty)
        #expect(queue.pending.map(\.id.rawValue) == [3, 2])
        // A new screen still makes lower pending items moot.
        let screen = queue.post(item(4, .screenChanged))
        #expect(finishes(screen).map(\.0) == [2])
        _ = queue.resume()
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(played(after) == [4])
    }

    @Test func s9StopEndsCurrentAndPendingAsStopped() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3, queued: true))
        let (effective, effects) = queue.stop()
        #expect(effective)
        #expect(finishes(effects).map(\.0) == [2, 3])
        #expect(cancelled(effects) == [1])
        #expect(finishes(queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)).map(\.1) == [.stopped])
        #expect(queue.state == .idle)
    }

    @Test func stopWhilePausedClearsThePause() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.pause(at: .immediate)
        _ = queue.stop()
        _ = queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(played(queue.post(item(2))) == [2])
    }

    @Test func stopWithNothingTakesNoEffect() {
        var queue = SpeechQueue()
        #expect(queue.stop().effective == false)
    }

    @Test func fullQueueDropsTheLowestPriorityOldest() {
        var queue = SpeechQueue(pendingLimit: 3)
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3, priority: .low, queued: true))
        _ = queue.post(item(4, priority: .low, queued: true))
        let effects = queue.post(item(5, queued: true))
        #expect(finishes(effects).map { $0.0 } == [3])
        #expect(finishes(effects).map { $0.1 } == [.dropped])
        #expect(queue.pending.map(\.id.rawValue) == [2, 5, 4])
    }

    @Test func fullQueueDropsTheNewcomerWhenItIsTheLowest() {
        var queue = SpeechQueue(pendingLimit: 1)
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        let effects = queue.post(item(3, priority: .low, queued: true))
        #expect(finishes(effects).map { $0.0 } == [3])
        #expect(queue.pending.map(\.id.rawValue) == [2])
    }

    @Test func failedPlaybackFinishesWithErrorAndItsMessageThenGoesOn() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        let effects = queue.playbackEnded(UtteranceID(rawValue: 1), .failed(SpeechError(.audioUnavailable, "gone")))
        #expect(effects.first == .emit(.finished(UtteranceID(rawValue: 1), text: "item 1", reason: .error, message: "gone")))
        #expect(played(effects) == [2])
    }

    @Test func everyAcceptedItemFinishesExactlyOnceUnderAnyMix() {
        // A deterministic pseudo-random walk through every operation.
        var queue = SpeechQueue(pendingLimit: 4)
        var seed: UInt64 = 0x9E3779B97F4A7C15
        func next(_ bound: Int) -> Int {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
            return Int(seed % UInt64(bound))
        }
        var posted = 0
        var finishedCounts: [UInt64: Int] = [:]
        func record(_ effects: [SpeechQueue.Effect]) {
            for (id, _) in finishes(effects) { finishedCounts[id, default: 0] += 1 }
        }
        for _ in 0..<5000 {
            switch next(8) {
            case 0, 1, 2:
                posted += 1
                let kind = NotificationKind.allCases[next(4)]
                let priority: Priority? = next(3) == 0 ? Priority.allCases[next(3)] : nil
                record(queue.post(item(UInt64(posted), kind, priority: priority, queued: next(2) == 0)))
            case 3: record(queue.pause(at: next(2) == 0 ? .immediate : .word).effects)
            case 4: record(queue.resume().effects)
            case 5: if next(4) == 0 { record(queue.stop().effects) }
            case 6:
                if let current = queue.current {
                    if current.phase == .pausingAtWord { record(queue.playbackPaused(current.item.id)) }
                }
            default:
                if let current = queue.current {
                    let outcome: SpeechQueue.PlaybackOutcome
                    if case .stopping = current.phase { outcome = .cancelled } else { outcome = .completed }
                    record(queue.playbackEnded(current.item.id, outcome))
                }
            }
        }
        // Drain: resume, end everything.
        record(queue.resume().effects)
        record(queue.stop().effects)
        if let current = queue.current { record(queue.playbackEnded(current.item.id, .cancelled)) }
        #expect(queue.current == nil && queue.pending.isEmpty)
        #expect(finishedCounts.count == posted)
        #expect(finishedCounts.values.allSatisfy { $0 == 1 })
    }
}
