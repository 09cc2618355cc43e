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

    /// The pause is then the queue's state, told after the item's `finished` (always an
    /// utterance's last event), to the client whose item it was asked for.
    @Test func wordPauseWithNoWordLeftHoldsBeforeTheNextItem() {
        var queue = SpeechQueue()
        var first = item(1)
        first.owner = ClientID(rawValue: 5)
        _ = queue.post(first)
        _ = queue.post(item(2, queued: true))
        _ = queue.pause(at: .word)
        let ended = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(ended == [
            .emit(.finished(UtteranceID(rawValue: 1), text: "item 1", reason: .spoken, message: nil)),
            .emit(.queuePaused(owner: ClientID(rawValue: 5))),
        ])
        #expect(queue.state == .paused)
        #expect(played(queue.resume().effects) == [2])
    }

    @Test func clientWordPauseWithNoWordLeftHoldsThatClientsItemsOnly() {
        var queue = SpeechQueue()
        let me = ClientID(rawValue: 5)
        var mine = item(1)
        mine.owner = me
        var theirs = item(2, queued: true)
        theirs.owner = ClientID(rawValue: 6)
        _ = queue.post(mine)
        _ = queue.post(theirs)
        _ = queue.pause(.client(me), at: .word)
        let ended = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(finishes(ended).map(\.1) == [.spoken])
        #expect(ended.contains(.emit(.queuePaused(owner: me))))
        #expect(played(ended) == [2], "another client's item goes on")
        #expect(!ended.contains { if case .emit(.paused) = $0 { true } else { false } }, "no event of a finished utterance")
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

    // MARK: - SSIP priorities (docs/semantics.md, "SSIP priorities")

    func ssip(_ id: UInt64, _ priority: MessagePriority, owner: UInt64 = 1) -> SpeechItem {
        SpeechItem(
            id: UtteranceID(rawValue: id), kind: .announcement, utterance: request("item \(id)"),
            owner: ClientID(rawValue: owner), messagePriority: priority)
    }
    func id(_ n: UInt64) -> UtteranceID { UtteranceID(rawValue: n) }

    @Test func p1ImportantCutsOthersButNeverAnotherImportant() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message))
        #expect(cancelled(queue.post(ssip(2, .important))) == [1])
        _ = queue.playbackEnded(id(1), .cancelled)
        #expect(queue.current?.item.id == id(2))
        #expect(queue.post(ssip(3, .important)).isEmpty, "important waits behind important")
        #expect(queue.post(item(4, .screenChanged)).allSatisfy { if case .cancelPlayback = $0 { false } else { true } },
                "not even a JSON high item cuts it")
        #expect(queue.pending.map(\.id.rawValue) == [4, 3] || queue.pending.map(\.id.rawValue) == [3, 4])
    }

    @Test func p2MessageNeverCutsImportantOrMessageAndWaitsInOrder() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .important))
        #expect(queue.post(ssip(2, .message)).isEmpty)
        _ = queue.playbackEnded(id(1), .completed)
        #expect(queue.current?.item.id == id(2))
        #expect(queue.post(ssip(3, .message)).isEmpty, "message does not interrupt itself")
        #expect(queue.post(ssip(4, .message)).isEmpty)
        #expect(queue.pending.map(\.id.rawValue) == [3, 4], "in arrival order")
        #expect(cancelled(queue.post(ssip(5, .important))) == [2], "but important cuts a message")
    }

    @Test func p3MessageCancelsTextNotificationAndProgressBelowIt() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .text))
        _ = queue.post(ssip(2, .important))  // cuts 1; 1 is still being cut
        _ = queue.playbackEnded(id(1), .cancelled)
        _ = queue.post(ssip(3, .text))
        let effects = queue.post(ssip(4, .message))
        #expect(finishes(effects).map(\.0) == [3])
        #expect(finishes(effects).map(\.1) == [.flushed])
    }

    @Test func p4TextKeepsOnlyTheNewest() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .text))
        let second = queue.post(ssip(2, .text))
        #expect(cancelled(second) == [1], "a newer text cuts the speaking one")
        let third = queue.post(ssip(3, .text))
        #expect(finishes(third).map(\.0) == [2], "and replaces the waiting one")
        let ended = queue.playbackEnded(id(1), .cancelled)
        #expect(finishes(ended).map(\.1) == [.interrupted])
        #expect(played(ended) == [3])
    }

    @Test func p5TextNeverCutsMessageAndWaitsBehindIt() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message))
        _ = queue.post(ssip(2, .message))
        #expect(queue.post(ssip(3, .text)).isEmpty)
        #expect(queue.pending.map(\.id.rawValue) == [2, 3])
    }

    @Test func p6NotificationIsDroppedWhenAnythingElseSpeaksOrWaits() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .text))
        let effects = queue.post(ssip(2, .notification))
        #expect(finishes(effects).map(\.0) == [2])
        #expect(finishes(effects).map(\.1) == [.dropped])
        #expect(queue.pending.isEmpty)
        _ = queue.post(item(3))  // a JSON item cuts 1 and waits
        #expect(finishes(queue.post(ssip(4, .notification))).map(\.1) == [.dropped])
    }

    @Test func p7NotificationIsCutByAnythingAndReplacesItself() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .notification))
        #expect(cancelled(queue.post(ssip(2, .notification))) == [1], "replaces itself")
        #expect(finishes(queue.post(ssip(3, .notification))).map { $0.0 } == [2])
        _ = queue.playbackEnded(id(1), .cancelled)
        #expect(queue.current?.item.id == id(3))
        #expect(cancelled(queue.post(ssip(4, .progress))) == [3], "even progress cuts it")
    }

    @Test func p8ProgressDropsNewItemsWhileOneSpeaksButTheLastIsSpoken() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .progress))
        var dropped: [UInt64] = []
        for n in 2...10 {
            let effects = queue.post(ssip(UInt64(n), .progress))
            #expect(cancelled(effects).isEmpty, "progress never cuts progress")
            dropped += finishes(effects).map(\.0)
        }
        #expect(dropped == Array(2...9))
        #expect(queue.pending.map(\.id.rawValue) == [10])
        // A message meanwhile cuts the speaking step but does not make the last one moot.
        #expect(cancelled(queue.post(ssip(11, .message))) == [1])
        #expect(queue.pending.map(\.id.rawValue) == [11, 10])
        #expect(played(queue.playbackEnded(id(1), .cancelled)) == [11])
        #expect(played(queue.playbackEnded(id(11), .completed)) == [10])
    }

    @Test func p9NotificationAndProgressPostedDuringAPauseAreDropped() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message))
        _ = queue.pause(at: .immediate)
        #expect(finishes(queue.post(ssip(2, .progress))).map(\.1) == [.dropped])
        _ = queue.resume()
        _ = queue.playbackEnded(id(1), .completed)
        // A client's own pause drops its own, too.
        _ = queue.pause(.client(ClientID(rawValue: 1)), at: .immediate)
        #expect(finishes(queue.post(ssip(3, .notification))).map(\.1) == [.dropped])
        #expect(finishes(queue.post(ssip(4, .progress))).map(\.1) == [.dropped])
        #expect(played(queue.post(ssip(5, .notification, owner: 2))) == [5], "another client's is spoken")
    }

    @Test func clientCancelCutsOnlyThatClientsItems() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.post(ssip(2, .message, owner: 2))
        _ = queue.post(ssip(3, .message, owner: 1))
        let (effective, effects) = queue.stop(.client(ClientID(rawValue: 1)))
        #expect(effective)
        #expect(cancelled(effects) == [1])
        #expect(finishes(effects).map(\.0) == [3])
        #expect(queue.pending.map(\.id.rawValue) == [2])
        #expect(played(queue.playbackEnded(id(1), .cancelled)) == [2])
        #expect(queue.stop(.client(ClientID(rawValue: 1))).effective == false)
    }

    @Test func clientCancelLeavesAnotherClientsSpeakingItem() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 2))
        _ = queue.post(ssip(2, .message, owner: 1))
        let effects = queue.stop(.client(ClientID(rawValue: 1))).effects
        #expect(cancelled(effects).isEmpty)
        #expect(finishes(effects).map(\.0) == [2])
    }

    @Test func clientPauseHoldsOnlyThatClientAndResumeGoesOn() {
        var queue = SpeechQueue()
        let one = ClientID(rawValue: 1)
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.post(ssip(2, .message, owner: 1))
        _ = queue.post(ssip(3, .message, owner: 2))
        let (paused, effects) = queue.pause(.client(one), at: .immediate)
        #expect(paused)
        #expect(effects == [.pausePlayback(id(1), .immediate), .emit(.paused(id(1)))])
        #expect(queue.resume(.client(ClientID(rawValue: 2))).effective == false, "client 2 was not paused")
        let resumed = queue.resume(.client(one))
        #expect(resumed.effects == [.resumePlayback(id(1)), .emit(.resumed(id(1)))])
        // Paused again, then cancelled: its waiting item waits no more, the other client's plays.
        _ = queue.pause(.client(one), at: .immediate)
        _ = queue.stop(.client(one))
        #expect(played(queue.playbackEnded(id(1), .cancelled)) == [3])
        #expect(queue.heldClients == [one], "a cancel does not end the client's pause")
        #expect(queue.post(ssip(4, .message, owner: 1)).isEmpty)
        _ = queue.playbackEnded(id(3), .completed)
        #expect(queue.current == nil && queue.pending.map(\.id.rawValue) == [4], "held while its client is paused")
        #expect(played(queue.resume(.client(one)).effects) == [4])
    }

    @Test func pauseAllOverAClientPauseHoldsEverythingUntilResumeAll() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.post(ssip(2, .message, owner: 2))
        _ = queue.pause(.client(ClientID(rawValue: 1)), at: .immediate)
        #expect(queue.pause(at: .immediate).effective)
        #expect(queue.resume(.client(ClientID(rawValue: 1))).effects.isEmpty, "the pause of all still holds")
        #expect(queue.resume().effects == [.resumePlayback(id(1)), .emit(.resumed(id(1)))])
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
        func scope() -> ControlScope { next(3) == 0 ? .all : .client(ClientID(rawValue: UInt64(next(3)))) }
        for _ in 0..<5000 {
            switch next(8) {
            case 0, 1, 2:
                posted += 1
                if next(2) == 0 {
                    // An SSIP item of any priority, from one of three clients.
                    record(queue.post(SpeechItem(
                        id: UtteranceID(rawValue: UInt64(posted)), kind: .announcement,
                        utterance: request("ssip"), owner: ClientID(rawValue: UInt64(next(3))),
                        messagePriority: MessagePriority.allCases[next(5)])))
                } else {
                    let kind = NotificationKind.allCases[next(4)]
                    let priority: Priority? = next(3) == 0 ? Priority.allCases[next(3)] : nil
                    record(queue.post(item(UInt64(posted), kind, priority: priority, queued: next(2) == 0)))
                }
            case 3: record(queue.pause(scope(), at: next(2) == 0 ? .immediate : .word).effects)
            case 4: record(queue.resume(scope()).effects)
            case 5: if next(4) == 0 { record(queue.stop(scope()).effects) }
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
