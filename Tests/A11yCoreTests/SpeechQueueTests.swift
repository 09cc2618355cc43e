// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yCore
import A11yTestSupport
import Testing

/// The rules of docs/semantics.md, one test per row, on the pure queue (no audio, no time).
@Suite struct SpeechQueueTests {
    /// Emitted finishes as (id, reason).
    func finishes(_ effects: [SpeechQueue.Effect]) -> [(UInt64, FinishReason)] {
        effects.compactMap {
            guard case .emit(let emitted) = $0, case .finished(let id, _, let reason, _) = emitted.event else { return nil }
            return (id.rawValue, reason)
        }
    }
    func played(_ effects: [SpeechQueue.Effect]) -> [UInt64] {
        effects.compactMap { if case .play(let item) = $0 { item.id.rawValue } else { nil } }
    }
    func cancelled(_ effects: [SpeechQueue.Effect]) -> [UInt64] {
        effects.compactMap { if case .cancelPlayback(let id) = $0 { id.rawValue } else { nil } }
    }

    /// It plays at once, and is told `started` when its sound begins, not before (a natural voice
    /// may take a second to load), once.
    @Test func firstPostPlaysAtOnceAndAnnouncesStartWhenHeard() {
        var queue = SpeechQueue()
        let effects = queue.post(item(1))
        #expect(same(effects, [.play(item(1))]))
        #expect(same(queue.state, .speaking))
        #expect(same(queue.playbackAudible(UtteranceID(rawValue: 1)), [.emit(ClientEvent(.started(UtteranceID(rawValue: 1)), owner: nil))]))
        #expect(queue.playbackAudible(UtteranceID(rawValue: 1)).isEmpty, "once")
    }

    /// An item stopped before any of it was heard is told `finished` alone; one that played to its
    /// end although no report said it was heard is told `started` first.
    @Test func startedIsToldOnlyOfSoundHeard() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        let stopped = queue.stop().effects + queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(!stopped.contains(.emit(ClientEvent(.started(UtteranceID(rawValue: 1)), owner: nil))))
        #expect(finishes(stopped).map(\.0) == [1, 2] || finishes(stopped).map(\.0) == [2, 1])
        _ = queue.post(item(3))
        let ended = queue.playbackEnded(UtteranceID(rawValue: 3), .completed)
        #expect(same(ended.first, .emit(ClientEvent(.started(UtteranceID(rawValue: 3)), owner: nil))))
        #expect(same(finishes(ended).map(\.1), [.spoken]))
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
        #expect(same(order, Array(1...10)))
        #expect(same(ended.map(\.0), Array(1...10)))
        #expect(ended.allSatisfy { $0.1 == .spoken })
    }

    @Test func s2NewAnnouncementInterruptsTheSpeakingOne() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        let effects = queue.post(item(2))
        #expect(same(cancelled(effects), [1]))
        #expect(played(effects).isEmpty, "B waits until A's audio is cut")
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(same(finishes(after).map(\.1), [.interrupted]))
        #expect(same(played(after), [2]))
    }

    @Test func s2InterruptedItemThatReachedItsEndAnywayIsSpoken() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2))
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(same(finishes(after).map(\.1), [.spoken]))
    }

    @Test func s3QueuedAnnouncementWaitsForTheSpeakingOne() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        let effects = queue.post(item(2, queued: true))
        #expect(effects.isEmpty)
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(same(finishes(after).map(\.1), [.spoken]))
        #expect(same(played(after), [2]))
    }

    @Test func s4ScreenChangeInterruptsFlushesLowerPendingAndPlaysNext() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3, queued: true))
        let effects = queue.post(item(4, .screenChanged))
        #expect(same(finishes(effects).map(\.0), [2, 3]))
        #expect(finishes(effects).allSatisfy { $0.1 == .flushed })
        #expect(same(cancelled(effects), [1]))
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(same(finishes(after).map(\.1), [.interrupted]))
        #expect(same(played(after), [4]))
        #expect(same(queue.current?.item.playsEarcon, true))
    }

    @Test func s4ScreenChangeKeepsPendingItemsOfItsOwnPriority() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, priority: .high))
        _ = queue.post(item(2, priority: .high, queued: true))
        let effects = queue.post(item(3, .screenChanged))
        #expect(finishes(effects).isEmpty)
        #expect(same(queue.pending.map(\.id.rawValue), [3, 2]), "the interrupting item goes first in its class")
    }

    @Test func s5PageScrolledCoalesces() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, .pageScrolled))
        let second = queue.post(item(2, .pageScrolled))
        #expect(same(cancelled(second), [1]))
        let third = queue.post(item(3, .pageScrolled))
        #expect(same(finishes(third).map { $0.0 }, [2]))
        #expect(same(finishes(third).map { $0.1 }, [.flushed]))
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(same(finishes(after).map(\.1), [.interrupted]))
        #expect(same(played(after), [3]))
    }

    @Test func s5QueuedPageScrolledStillReplacesASpeakingOne() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, .pageScrolled))
        #expect(same(cancelled(queue.post(item(2, .pageScrolled, queued: true))), [1]))
    }

    @Test func s6HighIsNeverInterruptedByDefaultOrLow() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, priority: .high))
        #expect(queue.post(item(2)).isEmpty)
        #expect(queue.post(item(3, priority: .low)).isEmpty)
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(same(finishes(after).map(\.1), [.spoken]))
        #expect(same(played(after), [2]))
    }

    @Test func pendingItemsAreOrderedByPriorityThenArrival() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, priority: .high))
        _ = queue.post(item(2, priority: .low, queued: true))
        _ = queue.post(item(3, queued: true))
        _ = queue.post(item(4, priority: .high, queued: true))
        _ = queue.post(item(5, queued: true))
        #expect(same(queue.pending.map(\.id.rawValue), [4, 3, 5, 2]))
    }

    @Test func nonQueuedItemGoesAheadOfQueuedItemsOfItsPriority() {
        var queue = SpeechQueue()
        _ = queue.post(item(1, priority: .high))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3))
        #expect(same(queue.pending.map(\.id.rawValue), [3, 2]))
    }

    @Test func s7ImmediatePauseAndResume() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        let (paused, pauseEffects) = queue.pause(at: .immediate)
        #expect(paused)
        #expect(same(pauseEffects, [.pausePlayback(UtteranceID(rawValue: 1), .immediate), .emit(ClientEvent(.paused(UtteranceID(rawValue: 1)), owner: nil))]))
        #expect(same(queue.state, .paused))
        let (resumed, resumeEffects) = queue.resume()
        #expect(resumed)
        #expect(same(resumeEffects, [.resumePlayback(UtteranceID(rawValue: 1)), .emit(ClientEvent(.resumed(UtteranceID(rawValue: 1)), owner: nil))]))
        #expect(same(finishes(queue.playbackEnded(UtteranceID(rawValue: 1), .completed)).map(\.1), [.spoken]))
    }

    @Test func s8WordPauseIsAnnouncedWhenThePlayerReachesTheWord() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        let (effective, effects) = queue.pause(at: .word)
        #expect(effective)
        #expect(same(effects, [.pausePlayback(UtteranceID(rawValue: 1), .word)]))
        #expect(same(queue.playbackPaused(UtteranceID(rawValue: 1)), [.emit(ClientEvent(.paused(UtteranceID(rawValue: 1)), owner: nil))]))
        #expect(same(queue.resume().effects, [.resumePlayback(UtteranceID(rawValue: 1)), .emit(ClientEvent(.resumed(UtteranceID(rawValue: 1)), owner: nil))]))
    }

    /// The pause is then the queue's state, told after the item's `finished` (always an
    /// utterance's last event), to the client whose item it was asked for.
    @Test func wordPauseWithNoWordLeftHoldsBeforeTheNextItem() {
        var queue = SpeechQueue()
        var first = item(1)
        first.owner = ClientID(rawValue: 5)
        _ = queue.post(first)
        _ = queue.playbackAudible(UtteranceID(rawValue: 1))
        _ = queue.post(item(2, queued: true))
        _ = queue.pause(at: .word)
        let ended = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(same(ended, [
            .emit(ClientEvent(.finished(UtteranceID(rawValue: 1), text: "item 1", reason: .spoken, message: nil), owner: ClientID(rawValue: 5))),
            .emit(ClientEvent(.queuePaused, owner: ClientID(rawValue: 5))),
        ]))
        #expect(same(queue.state, .paused))
        #expect(same(played(queue.resume().effects), [2]))
    }

    @Test func clientPauseWhoseItemReachesItsEndBeforeTheCutHoldsThatClientsItemsOnly() {
        var queue = SpeechQueue()
        let me = ClientID(rawValue: 5)
        var mine = item(1)
        mine.owner = me
        var theirs = item(2, queued: true)
        theirs.owner = ClientID(rawValue: 6)
        var later = item(3, queued: true)
        later.owner = me
        _ = queue.post(mine)
        _ = queue.post(theirs)
        // A client's own pause cuts at once, whatever the boundary.
        #expect(same(queue.pause(.client(me), at: .word).effects, [.cancelPlayback(id(1)), .emit(ClientEvent(.paused(id(1)), owner: me))]))
        _ = queue.post(later)
        let ended = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(same(finishes(ended).map(\.1), [.spoken]), "it got to its end first")
        #expect(same(played(ended), [2]), "another client's item goes on")
        #expect(same(queue.pending.map(\.id.rawValue), [3]), "the client's next one is held")
    }

    @Test func pauseWhenNothingSpeaksTakesNoEffect() {
        var queue = SpeechQueue()
        #expect(queue.pause(at: .immediate) == (false, []))
        #expect(same(queue.resume().effective, false))
    }

    @Test func postsWhilePausedWaitAndNeverInterrupt() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.pause(at: .immediate)
        #expect(queue.post(item(2)).isEmpty)
        #expect(queue.post(item(3, priority: .high)).isEmpty)
        #expect(same(queue.pending.map(\.id.rawValue), [3, 2]))
        // A new screen still makes lower pending items moot.
        let screen = queue.post(item(4, .screenChanged))
        #expect(same(finishes(screen).map(\.0), [2]))
        _ = queue.resume()
        let after = queue.playbackEnded(UtteranceID(rawValue: 1), .completed)
        #expect(same(played(after), [4]))
    }

    @Test func s9StopEndsCurrentAndPendingAsStopped() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3, queued: true))
        let (effective, effects) = queue.stop()
        #expect(effective)
        #expect(same(finishes(effects).map(\.0), [2, 3]))
        #expect(same(cancelled(effects), [1]))
        #expect(same(finishes(queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)).map(\.1), [.stopped]))
        #expect(same(queue.state, .idle))
    }

    @Test func stopWhilePausedClearsThePause() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.pause(at: .immediate)
        _ = queue.stop()
        _ = queue.playbackEnded(UtteranceID(rawValue: 1), .cancelled)
        #expect(same(played(queue.post(item(2))), [2]))
    }

    @Test func stopWithNothingTakesNoEffect() {
        var queue = SpeechQueue()
        #expect(same(queue.stop().effective, false))
    }

    @Test func fullQueueDropsTheLowestPriorityOldest() {
        // Room for three such items: the bound is in bytes, each "item N" costs the same.
        var queue = SpeechQueue(pendingByteLimit: 3 * item(2).queueCost)
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3, priority: .low, queued: true))
        _ = queue.post(item(4, priority: .low, queued: true))
        let effects = queue.post(item(5, queued: true))
        #expect(same(finishes(effects).map { $0.0 }, [3]))
        #expect(same(finishes(effects).map { $0.1 }, [.dropped]))
        #expect(effects.contains(.emit(ClientEvent(.finished(id(3), text: "item 3", reason: .dropped, message: SpeechQueue.droppedForBound), owner: nil))))
        #expect(same(queue.pending.map(\.id.rawValue), [2, 5, 4]))
        #expect(same(queue.pendingBytes, 3 * item(2).queueCost))
    }

    @Test func fullQueueDropsTheNewcomerWhenItIsTheLowest() {
        var queue = SpeechQueue(pendingByteLimit: item(2).queueCost)
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        let effects = queue.post(item(3, priority: .low, queued: true))
        #expect(same(finishes(effects).map { $0.0 }, [3]))
        #expect(same(queue.pending.map(\.id.rawValue), [2]))
    }

    @Test func theBoundDropsTheOldestOfTheLowestWhereverItWaitsInItsRun() {
        // Low items: 3 and 5 queued (at the run's end, in order), 4 and 6 not (at the run's front,
        // newest first): the run reads 6, 4, 3, 5, and its oldest, 3, is inside it.
        var queue = SpeechQueue(pendingByteLimit: 5 * item(10).queueCost)
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        _ = queue.post(item(3, priority: .low, queued: true))
        _ = queue.post(item(4, priority: .low))
        _ = queue.post(item(5, priority: .low, queued: true))
        _ = queue.post(item(6, priority: .low))
        #expect(same(queue.pending.map(\.id.rawValue), [2, 6, 4, 3, 5]))
        #expect(same(finishes(queue.post(item(7, queued: true))).map(\.0), [3]))
        #expect(same(finishes(queue.post(item(8, queued: true))).map(\.0), [4]))
        #expect(same(queue.pending.map(\.id.rawValue), [2, 7, 8, 6, 5]))
    }

    @Test func theBoundCountsBytesSoOneBigItemGivesWayNotABurstOfSmallOnes() {
        var queue = SpeechQueue(pendingByteLimit: 64 * 1024)
        _ = queue.post(item(1))
        let big = item(2, priority: .low, queued: true, text: String(repeating: "long text ", count: 10_000))
        #expect(same(finishes(queue.post(big)).map(\.1), [.dropped]), "100 kB cannot wait under a 64 kB bound")
        var dropped: [(UInt64, FinishReason)] = []
        for n in 3...102 { dropped += finishes(queue.post(item(UInt64(n), queued: true))) }
        #expect(dropped.isEmpty, "a hundred short items fit")
        #expect(same(queue.pending.count, 100))
    }

    @Test func aBurstOf339KeysIsQueuedWholeUnderTheDefaultBound() {
        // keys.test: 339 quick KEY messages of one client, priority message.
        var queue = SpeechQueue()
        var ended: [(UInt64, FinishReason)] = []
        for n in 1...339 { ended += finishes(queue.post(ssip(UInt64(n), .message))) }
        #expect(ended.isEmpty)
        #expect(queue.pending.count == 338 && queue.current?.item.id == id(1))
        #expect(queue.pendingBytes < SpeechQueue.defaultPendingByteLimit / 100)
    }

    @Test func failedPlaybackFinishesWithErrorAndItsMessageThenGoesOn() {
        var queue = SpeechQueue()
        _ = queue.post(item(1))
        _ = queue.post(item(2, queued: true))
        let effects = queue.playbackEnded(UtteranceID(rawValue: 1), .failed(SpeechError(.audioUnavailable, "gone")))
        #expect(same(effects.first, .emit(ClientEvent(.finished(UtteranceID(rawValue: 1), text: "item 1", reason: .error, message: "gone"), owner: nil))))
        #expect(same(played(effects), [2]))
    }

    // MARK: - SSIP priorities (docs/semantics.md, "SSIP priorities")

    func ssip(_ id: UInt64, _ priority: MessagePriority, owner: UInt64 = 1) -> SpeechItem {
        SpeechItem(
            id: UtteranceID(rawValue: id), kind: .announcement, urgency: .speechDispatcher(priority),
            utterance: request("item \(id)"), owner: ClientID(rawValue: owner))
    }
    func id(_ n: UInt64) -> UtteranceID { UtteranceID(rawValue: n) }

    /// An SSIP item waits its turn in arrival order where its priority places it; its priority's
    /// rules, not its place, decide what it cuts.
    @Test(arguments: MessagePriority.allCases)
    func anSSIPItemsUrgencyIsQueuedWhereItsPriorityPlacesIt(priority: MessagePriority) {
        let urgency = Urgency.speechDispatcher(priority)
        #expect(urgency.isQueued && urgency.queuePriority == priority.queuePriority && urgency.messagePriority == priority)
    }

    @Test func aVoiceOverUrgencyIsItsPriorityAndQueueFlag() {
        let urgency = Urgency.voiceOver(.low, queued: true)
        #expect(urgency.isQueued && urgency.queuePriority == .low && urgency.messagePriority == nil)
        #expect(same(Urgency.default(for: .screenChanged), .voiceOver(.high, queued: false)))
        #expect(same(Urgency.default(for: .announcement), .voiceOver(.default, queued: false)))
    }

    @Test func p1ImportantCutsOthersButNeverAnotherImportant() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message))
        #expect(same(cancelled(queue.post(ssip(2, .important))), [1]))
        _ = queue.playbackEnded(id(1), .cancelled)
        #expect(same(queue.current?.item.id, id(2)))
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
        #expect(same(queue.current?.item.id, id(2)))
        #expect(queue.post(ssip(3, .message)).isEmpty, "message does not interrupt itself")
        #expect(queue.post(ssip(4, .message)).isEmpty)
        #expect(same(queue.pending.map(\.id.rawValue), [3, 4]), "in arrival order")
        #expect(same(cancelled(queue.post(ssip(5, .important))), [2]), "but important cuts a message")
    }

    @Test func p3MessageCancelsTextNotificationAndProgressBelowIt() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .text))
        _ = queue.post(ssip(2, .important))  // cuts 1; 1 is still being cut
        _ = queue.playbackEnded(id(1), .cancelled)
        _ = queue.post(ssip(3, .text))
        let effects = queue.post(ssip(4, .message))
        #expect(same(finishes(effects).map(\.0), [3]))
        #expect(same(finishes(effects).map(\.1), [.flushed]))
    }

    @Test func p4TextKeepsOnlyTheNewest() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .text))
        let second = queue.post(ssip(2, .text))
        #expect(same(cancelled(second), [1]), "a newer text cuts the speaking one")
        let third = queue.post(ssip(3, .text))
        #expect(same(finishes(third).map(\.0), [2]), "and replaces the waiting one")
        let ended = queue.playbackEnded(id(1), .cancelled)
        #expect(same(finishes(ended).map(\.1), [.interrupted]))
        #expect(same(played(ended), [3]))
    }

    @Test func p5TextNeverCutsMessageAndWaitsBehindIt() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message))
        _ = queue.post(ssip(2, .message))
        #expect(queue.post(ssip(3, .text)).isEmpty)
        #expect(same(queue.pending.map(\.id.rawValue), [2, 3]))
    }

    @Test func p6NotificationIsDroppedWhenAnythingElseSpeaksOrWaits() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .text))
        let effects = queue.post(ssip(2, .notification))
        #expect(same(finishes(effects).map(\.0), [2]))
        #expect(same(finishes(effects).map(\.1), [.dropped]))
        #expect(queue.pending.isEmpty)
        _ = queue.post(item(3))  // a JSON item cuts 1 and waits
        #expect(same(finishes(queue.post(ssip(4, .notification))).map(\.1), [.dropped]))
    }

    @Test func p7NotificationIsCutByAnythingAndReplacesItself() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .notification))
        #expect(same(cancelled(queue.post(ssip(2, .notification))), [1]), "replaces itself")
        #expect(same(finishes(queue.post(ssip(3, .notification))).map { $0.0 }, [2]))
        _ = queue.playbackEnded(id(1), .cancelled)
        #expect(same(queue.current?.item.id, id(3)))
        #expect(same(cancelled(queue.post(ssip(4, .progress))), [3]), "even progress cuts it")
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
        #expect(same(dropped, Array(2...9)))
        #expect(same(queue.pending.map(\.id.rawValue), [10]))
        // A message meanwhile cuts the speaking step but does not make the last one moot.
        #expect(same(cancelled(queue.post(ssip(11, .message))), [1]))
        #expect(same(queue.pending.map(\.id.rawValue), [11, 10]))
        #expect(same(played(queue.playbackEnded(id(1), .cancelled)), [11]))
        #expect(same(played(queue.playbackEnded(id(11), .completed)), [10]))
    }

    @Test func p9NotificationAndProgressPostedDuringAPauseAreDropped() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message))
        _ = queue.pause(at: .immediate)
        #expect(same(finishes(queue.post(ssip(2, .progress))).map(\.1), [.dropped]))
        _ = queue.resume()
        _ = queue.playbackEnded(id(1), .completed)
        // A client's own pause drops its own, too.
        _ = queue.pause(.client(ClientID(rawValue: 1)), at: .immediate)
        #expect(same(finishes(queue.post(ssip(3, .notification))).map(\.1), [.dropped]))
        #expect(same(finishes(queue.post(ssip(4, .progress))).map(\.1), [.dropped]))
        #expect(same(played(queue.post(ssip(5, .notification, owner: 2))), [5]), "another client's is spoken")
    }

    @Test func clientCancelCutsOnlyThatClientsItems() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.post(ssip(2, .message, owner: 2))
        _ = queue.post(ssip(3, .message, owner: 1))
        let (effective, effects) = queue.stop(.client(ClientID(rawValue: 1)))
        #expect(effective)
        #expect(same(cancelled(effects), [1]))
        #expect(same(finishes(effects).map(\.0), [3]))
        #expect(same(queue.pending.map(\.id.rawValue), [2]))
        #expect(same(played(queue.playbackEnded(id(1), .cancelled)), [2]))
        #expect(same(queue.stop(.client(ClientID(rawValue: 1))).effective, false))
    }

    @Test func clientCancelLeavesAnotherClientsSpeakingItem() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 2))
        _ = queue.post(ssip(2, .message, owner: 1))
        let effects = queue.stop(.client(ClientID(rawValue: 1))).effects
        #expect(cancelled(effects).isEmpty)
        #expect(same(finishes(effects).map(\.0), [2]))
    }

    @Test func clientPauseParksItsSpeakingItemAndTheOthersGoOn() {
        var queue = SpeechQueue()
        let one = ClientID(rawValue: 1)
        let spoken = "un deux trois quatre"
        let first = SpeechItem(id: id(1), kind: .announcement, urgency: .speechDispatcher(.message), utterance: request(spoken), owner: one)
        _ = queue.post(first)
        _ = queue.playbackAudible(id(1))
        _ = queue.post(ssip(2, .message, owner: 1))
        _ = queue.post(ssip(3, .message, owner: 2))
        #expect(same(queue.wordHeard(id(1), start: 3, length: 4), [.emit(ClientEvent(.word(id(1), start: 3, length: 4), owner: one))]))
        let (paused, effects) = queue.pause(.client(one), at: .immediate)
        #expect(paused)
        // Cut, not corked: the voice is free for the others.
        #expect(same(effects, [.cancelPlayback(id(1)), .emit(ClientEvent(.paused(id(1)), owner: one))]))
        #expect(queue.wordHeard(id(1), start: 8, length: 5).isEmpty, "nothing told of audio being cut")
        let parked = queue.playbackEnded(id(1), .cancelled)
        #expect(finishes(parked).isEmpty, "a paused item does not end")
        #expect(same(played(parked), [3]), "the other client's item is spoken")
        // What is left of item 1 waits at the head of its class, held, from the word it stopped in.
        #expect(same(queue.pending.map(\.id.rawValue), [1, 2]))
        let rest = queue.pending[0]
        #expect(rest.isRemainder && rest.text == spoken)
        #expect(same(rest.utterance.segments.map(\.content), [.text("deux trois quatre")]))
        #expect(same(queue.resume(.client(ClientID(rawValue: 2))).effective, false), "client 2 was not paused")
        #expect(queue.resume(.client(one)) == (true, []) , "it waits for the speaking item, as any message")
        let next = queue.playbackEnded(id(3), .completed)
        #expect(same(finishes(next).map(\.1), [.spoken]))
        #expect(same(played(next), [1]))
        #expect(same(queue.playbackAudible(id(1)), [.emit(ClientEvent(.resumed(id(1)), owner: one))]), "its clients hear it resumed, not begun again")
        let end = queue.playbackEnded(id(1), .completed)
        #expect(same(end.first, .emit(ClientEvent(.finished(id(1), text: spoken, reason: .spoken, message: nil), owner: one))))
        #expect(same(played(end), [2]))
    }

    @Test func aClientsPauseHoldsItsWaitingAndNewItemsAndOutlivesACancel() {
        var queue = SpeechQueue()
        let one = ClientID(rawValue: 1)
        _ = queue.post(ssip(1, .message, owner: 2))
        _ = queue.post(ssip(2, .message, owner: 1))
        #expect(queue.pause(.client(one), at: .immediate) == (true, []), "not speaking: nothing cut")
        _ = queue.stop(.client(one))
        #expect(same(queue.heldClients, [one]), "a cancel does not end the client's pause")
        #expect(queue.post(ssip(3, .message, owner: 1)).isEmpty)
        _ = queue.playbackEnded(id(1), .completed)
        #expect(queue.current == nil && queue.pending.map(\.id.rawValue) == [3], "held while its client is paused")
        #expect(same(played(queue.resume(.client(one)).effects), [3]))
    }

    @Test func aClientsOwnPauseWithNobodyElseWaitingPausesInPlaceAndResumesExactly() {
        var queue = SpeechQueue()
        let one = ClientID(rawValue: 1)
        _ = queue.post(ssip(1, .message, owner: 1))
        // Nobody else waits: corked where it stands, not cut (heard whole when resumed).
        #expect(queue.pause(.client(one), at: .immediate) == (true, [.pausePlayback(id(1), .immediate), .emit(ClientEvent(.paused(id(1)), owner: one))]))
        #expect(queue.post(ssip(2, .message, owner: 1)).isEmpty, "its own next item is held and takes nothing")
        #expect(queue.resume(.client(one)) == (true, [.resumePlayback(id(1)), .emit(ClientEvent(.resumed(id(1)), owner: one))]))
    }

    @Test func anotherClientsItemCutsAnItemPausedInPlaceAndIsSpoken() {
        var queue = SpeechQueue()
        let one = ClientID(rawValue: 1)
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.playbackAudible(id(1))
        _ = queue.wordHeard(id(1), start: 0, length: 2)
        _ = queue.pause(.client(one), at: .word)
        // Its word pause was not heard yet: it is now, at once, and the voice goes to client 2.
        #expect(same(queue.post(ssip(2, .message, owner: 2)), [.cancelPlayback(id(1)), .emit(ClientEvent(.paused(id(1)), owner: one))]))
        let parked = queue.playbackEnded(id(1), .cancelled)
        #expect(finishes(parked).isEmpty && played(parked) == [2])
        #expect(queue.pending.map(\.id.rawValue) == [1] && queue.pending[0].isRemainder)
    }

    @Test func aParkedItemKeepsItsPlaceByItsPriority() {
        var queue = SpeechQueue()
        let one = ClientID(rawValue: 1)
        // A parked text is made moot by a newer text, like any waiting text.
        _ = queue.post(ssip(1, .text, owner: 1))
        _ = queue.pause(.client(one), at: .immediate)
        _ = queue.post(ssip(2, .message, owner: 2))
        _ = queue.playbackEnded(id(1), .cancelled)
        let moot = finishes(queue.post(ssip(3, .text, owner: 2)))
        #expect(moot.map(\.0) == [1] && moot.map(\.1) == [.flushed])
        // A parked message goes back to the head of its class, before what came after it started.
        var messages = SpeechQueue()
        _ = messages.post(ssip(1, .message, owner: 1))
        _ = messages.pause(.client(one), at: .immediate)
        _ = messages.post(ssip(2, .message, owner: 2))
        _ = messages.playbackEnded(id(1), .cancelled)
        _ = messages.post(ssip(3, .message, owner: 2))
        _ = messages.post(ssip(4, .important, owner: 2))
        #expect(same(messages.current?.item.id, id(2)))
        #expect(same(messages.pending.map(\.id.rawValue), [4, 1, 3]), "after the important one, before the later message")
    }

    @Test func whatAPausedClientHoldsNeverDropsAnothersNotification() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.pause(.client(ClientID(rawValue: 1)), at: .immediate)
        #expect(same(queue.post(ssip(2, .notification, owner: 2)), [.cancelPlayback(id(1))]), "accepted; the paused item gives way")
        #expect(same(played(queue.playbackEnded(id(1), .cancelled)), [2]))
    }

    @Test func aClientThatLeavesWhilePausedHoldsNobody() {
        var queue = SpeechQueue()
        let one = ClientID(rawValue: 1)
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.post(ssip(2, .message, owner: 1))
        _ = queue.pause(.client(one), at: .immediate)
        let left = queue.clientLeft(one)
        #expect(left.contains(.cancelPlayback(id(1))), "its item paused in place is cut")
        #expect(finishes(left).map(\.0) == [2] && finishes(left).map(\.1) == [.stopped])
        let ended = queue.playbackEnded(id(1), .cancelled)
        #expect(finishes(ended).map(\.0) == [1] && finishes(ended).map(\.1) == [.stopped])
        #expect(queue.heldClients.isEmpty && queue.pending.isEmpty)
        #expect(same(played(queue.post(ssip(3, .message, owner: 2))), [3]))
    }

    @Test func aClientThatLeavesDuringItsWordPauseEndsItsItem() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.pause(.client(ClientID(rawValue: 1)), at: .word)
        // Had it stayed, the word pause would have held the voice for a client that is gone.
        #expect(same(queue.clientLeft(ClientID(rawValue: 1)), [.cancelPlayback(id(1))]))
        #expect(same(finishes(queue.playbackEnded(id(1), .cancelled)).map(\.1), [.stopped]))
        #expect(same(played(queue.post(ssip(2, .message, owner: 2))), [2]))
    }

    @Test func aClientThatLeavesWhileItsItemIsBeingParkedEndsIt() {
        var queue = SpeechQueue()
        let one = ClientID(rawValue: 1)
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.post(ssip(2, .message, owner: 2))
        _ = queue.pause(.client(one), at: .immediate)
        #expect(queue.clientLeft(one).isEmpty, "its audio is already being cut")
        let ended = queue.playbackEnded(id(1), .cancelled)
        #expect(finishes(ended).map(\.0) == [1] && finishes(ended).map(\.1) == [.stopped])
        #expect(same(played(ended), [2]))
    }

    @Test func aClientThatLeavesWithoutPausingStillHasItsItemsSpoken() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.post(ssip(2, .message, owner: 1))
        #expect(queue.clientLeft(ClientID(rawValue: 1)).isEmpty)
        #expect(queue.current?.item.id == id(1) && queue.pending.map(\.id.rawValue) == [2])
    }

    @Test func pauseAllOverAClientPauseHoldsEverythingUntilResumeAll() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.playbackAudible(id(1))
        _ = queue.post(ssip(2, .message, owner: 2))
        _ = queue.pause(.client(ClientID(rawValue: 1)), at: .immediate)
        #expect(same(played(queue.playbackEnded(id(1), .cancelled)), [2]))
        #expect(queue.pause(at: .immediate).effective)
        #expect(queue.resume(.client(ClientID(rawValue: 1))).effects.isEmpty, "the pause of all still holds")
        #expect(same(queue.resume().effects, [.resumePlayback(id(2)), .emit(ClientEvent(.resumed(id(2)), owner: ClientID(rawValue: 2)))]))
        let next = queue.playbackEnded(id(2), .completed)
        #expect(same(played(next), [1]))
        #expect(same(queue.playbackAudible(id(1)), [.emit(ClientEvent(.resumed(id(1)), owner: ClientID(rawValue: 1)))]))
    }

    @Test func aPauseOfEverythingOverAClientsSpeakingItemCorksIt() {
        var queue = SpeechQueue()
        _ = queue.post(ssip(1, .message, owner: 1))
        _ = queue.pause(at: .immediate)
        #expect(queue.pause(.client(ClientID(rawValue: 1)), at: .immediate).effects.isEmpty, "already paused, kept")
        #expect(same(queue.resume().effects, [.resumePlayback(id(1)), .emit(ClientEvent(.resumed(id(1)), owner: ClientID(rawValue: 1)))]))
    }

    @Test func everyAcceptedItemFinishesExactlyOnceUnderAnyMix() {
        // A deterministic pseudo-random walk through every operation.
        var queue = SpeechQueue(pendingByteLimit: 4 * item(1).queueCost)
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
                        urgency: .speechDispatcher(MessagePriority.allCases[next(5)]),
                        utterance: request("ssip"), owner: ClientID(rawValue: UInt64(next(3))))))
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
                    record(queue.wordHeard(current.item.id, start: next(6), length: 1))
                    if next(8) == 0 { record(queue.clientLeft(ClientID(rawValue: UInt64(next(3))))) }
                }
            default:
                if let current = queue.current {
                    let outcome: SpeechQueue.PlaybackOutcome
                    switch current.phase {
                    case .stopping, .parking: outcome = .cancelled
                    case .speaking, .pausingAtWord, .paused: outcome = .completed
                    }
                    record(queue.playbackEnded(current.item.id, outcome))
                }
            }
            // What waits is in descending priority: the bound finds the lowest at the end.
            #expect(zip(queue.pending, queue.pending.dropFirst()).allSatisfy { $0.urgency.queuePriority >= $1.urgency.queuePriority })
            // The counts kept beside it are what a count of it gives.
            let counted = Dictionary(grouping: queue.pending.compactMap(\.urgency.messagePriority), by: { $0 }).mapValues(\.count)
            #expect(same(queue.waitingByMessagePriority.filter { $0.value != 0 }, counted))
        }
        // Drain: resume, end everything.
        record(queue.resume().effects)
        record(queue.stop().effects)
        if let current = queue.current { record(queue.playbackEnded(current.item.id, .cancelled)) }
        #expect(queue.current == nil && queue.pending.isEmpty)
        #expect(same(finishedCounts.count, posted))
        #expect(finishedCounts.values.allSatisfy { $0 == 1 })
    }
}
