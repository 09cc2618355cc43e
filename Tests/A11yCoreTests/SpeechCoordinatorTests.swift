// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yTestSupport
import Testing

/// The coordinator against a fake engine and output, with a clock that never really sleeps.
@Suite struct SpeechCoordinatorTests {
    /// `stallLimit`: the watchdog's; tests other than the watchdog's own keep it out of the way
    /// (on the immediate clock, whose time never moves, it cannot fire anyway).
    func makeCoordinator(
        instant: Bool = true, engine: FakeEngine = FakeEngine(), stallLimit: Duration = .seconds(86_400)
    ) -> (SpeechCoordinator, FakeOutput, EventLog, Task<Void, Never>) {
        let output = FakeOutput(instant: instant)
        var configuration = SpeechCoordinator.Configuration()
        configuration.serverBufferMilliseconds = 0
        configuration.playbackStallLimit = stallLimit
        let coordinator = SpeechCoordinator(engine: engine, output: output, configuration: configuration, clock: ImmediateClock())
        let log = EventLog()
        let pump = Task { for await delivery in coordinator.events { await log.record(delivery.event) } }
        return (coordinator, output, log, pump)
    }

    /// Lets the fake server play the item's first frames until it is told `started` (told once its
    /// sound is heard, not when it is chosen).
    /// One frame only: a loaded machine must not let it play the item to its end meanwhile.
    func hearStart(_ id: UInt64, _ output: FakeOutput, _ log: EventLog) async {
        while await !log.events.contains(.started(UtteranceID(rawValue: id))) {
            if output.state.withLock({ $0.played }) == 0 { output.advance(by: 1) }
            await Task.yield()
        }
    }

    /// Lets the fake server play until `count` items have finished (controls may still be in flight).
    func playOut(_ output: FakeOutput, _ log: EventLog, until count: Int) async {
        while await log.finishedCount() < count {
            output.advance(by: 1000)
            await Task.yield()
        }
    }

    @Test func wordsAreReportedInOrderThenFinishedSpoken() async {
        let (coordinator, _, log, pump) = makeCoordinator()
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        await log.wait { $0.count(finished: 1) }
        let events = await log.events
        let id = UtteranceID(rawValue: 1)
        #expect(same(events, [
            .started(id),
            .word(id, start: 0, length: 2), .word(id, start: 3, length: 4), .word(id, start: 8, length: 5),
            .finished(id, text: "un deux trois", reason: .spoken, message: nil),
        ]))
    }

    /// Ids are a counter taken from any task without a hop onto the actor: each once, from 1.
    @Test func idsAreHandedOutOnceEachFromOne() async {
        let coordinator = SpeechCoordinator(engine: FakeEngine(), output: FakeOutput(instant: true))
        let ids = await withTaskGroup(of: UInt64.self) { group in
            for _ in 0..<100 { group.addTask { coordinator.makeID().rawValue } }
            return await group.reduce(into: [UInt64]()) { $0.append($1) }
        }
        #expect(same(ids.sorted(), Array(1...100)))
    }

    /// Each event comes with its item's owner, from the queue: nothing downstream keeps who owns what.
    @Test func everyEventCarriesItsItemsOwner() async {
        let output = FakeOutput(instant: true)
        var configuration = SpeechCoordinator.Configuration()
        configuration.serverBufferMilliseconds = 0
        let coordinator = SpeechCoordinator(engine: FakeEngine(), output: output, configuration: configuration, clock: ImmediateClock())
        var mine = item(1, text: "un deux")
        mine.owner = ClientID(rawValue: 7)
        await coordinator.post([mine, item(2, queued: true)])
        var owners: [UInt64: Set<ClientID?>] = [:]
        var finished = 0
        for await delivery in coordinator.events {
            owners[delivery.event.utterance!.rawValue, default: []].insert(delivery.owner)
            if case .finished = delivery.event { finished += 1 }
            if finished == 2 { break }
        }
        #expect(same(owners, [1: [ClientID(rawValue: 7)], 2: [nil]]))
    }

    @Test func wordsAreReportedWhenHeardNotWhenSynthesised() async throws {
        let (coordinator, output, log, pump) = makeCoordinator(instant: false)
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        while output.state.withLock({ $0.appended }) < 300 { await Task.yield() }
        for _ in 0..<50 { await Task.yield() }
        #expect(await log.events.filter { if case .word = $0 { true } else { false } }.isEmpty, "nothing heard yet")
        output.advance(by: 1)
        await log.wait { $0.contains(.word(UtteranceID(rawValue: 1), start: 0, length: 2)) }
        // Everything is synthesised at once, but nothing past the first word was heard yet.
        for _ in 0..<50 { await Task.yield() }
        #expect(same(await log.events.filter { if case .word = $0 { true } else { false } }.count, 1))
        output.advance(by: 150)
        await log.wait { $0.contains(.word(UtteranceID(rawValue: 1), start: 3, length: 4)) }
        await playOut(output, log, until: 1)
        #expect(same(await log.events.last, .finished(UtteranceID(rawValue: 1), text: "un deux trois", reason: .spoken, message: nil)))
    }

    @Test func interruptionCutsTheOutputBeforeTheNextItemBegins() async {
        let (coordinator, output, log, pump) = makeCoordinator(instant: false)
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        await hearStart(1, output, log)
        await coordinator.post(item(2, text: "quatre"))
        await hearStart(2, output, log)
        await playOut(output, log, until: 2)
        #expect(same(await log.events.finishes().map(\.1), [.interrupted, .spoken]))
        let trail = output.state.withLock { $0.log }
        #expect(trail.firstIndex(of: "cancel")! < trail.lastIndex(of: "begin")!)
    }

    @Test func immediatePauseCorksAndResumeUncorksTheSameTrack() async {
        let (coordinator, output, log, pump) = makeCoordinator(instant: false)
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        await hearStart(1, output, log)
        #expect(await coordinator.pause(at: .immediate))
        await log.wait { $0.contains(.paused(UtteranceID(rawValue: 1))) }
        while !output.state.withLock({ $0.paused }) { await Task.yield() }
        let heard = output.state.withLock { $0.played }
        output.advance(by: 1000)  // a paused server plays nothing
        #expect(same(output.state.withLock { $0.played }, heard))
        #expect(await coordinator.resume())
        await playOut(output, log, until: 1)
        #expect(same(output.state.withLock { $0.tracks }, 1), "resumed, not restarted")
        #expect(same(await log.events.finishes().map(\.1), [.spoken]))
    }

    @Test func wordPauseHoldsAtTheNextWordAndResumeGoesOnFromIt() async {
        let (coordinator, output, log, pump) = makeCoordinator(instant: false)
        defer { pump.cancel() }
        let id = UtteranceID(rawValue: 1)
        await coordinator.post(item(1, text: "un deux trois"))
        while output.state.withLock({ $0.appended }) < 300 { await Task.yield() }
        output.advance(by: 50)  // mid "un"
        await log.wait { $0.contains(.word(id, start: 0, length: 2)) }
        #expect(await coordinator.pause(at: .word))
        while output.state.withLock({ $0.hold }) == nil { await Task.yield() }
        #expect(same(output.state.withLock { $0.hold }, 100), "holds at the start of 'deux'")
        output.advance(by: 1000)
        await log.wait { $0.contains(.paused(id)) }
        #expect(same(output.state.withLock { $0.played }, 100))
        #expect(await coordinator.resume())
        await playOut(output, log, until: 1)
        let words = await log.events.compactMap { if case .word(_, let start, _) = $0 { start } else { nil } }
        #expect(same(words, [0, 3, 8]))
    }

    /// A word pause with no word boundary left: the item plays out, its `finished` is its last
    /// event, and the queue's pause is told after it; `resume` then starts the next item.
    @Test func aWordPausePastTheLastWordIsToldAsTheQueuesStateAfterFinished() async {
        let (coordinator, output, log, pump) = makeCoordinator(instant: false)
        defer { pump.cancel() }
        let id = UtteranceID(rawValue: 1)
        await coordinator.post(item(1, text: "un deux"))
        await coordinator.post(item(2, queued: true, text: "trois"))
        while output.state.withLock({ $0.appended }) < 200 { await Task.yield() }
        output.advance(by: 150)  // mid "deux": no word boundary left
        await log.wait { $0.contains(.word(id, start: 3, length: 4)) }
        #expect(await coordinator.pause(at: .word))
        output.advance(by: 1000)
        await log.wait { $0.contains(.queuePaused) }
        let events = await log.events
        #expect(same(Array(events.suffix(2)), [.finished(id, text: "un deux", reason: .spoken, message: nil), .queuePaused]))
        #expect(!events.contains(.paused(id)))
        #expect(same(await coordinator.status().state, .paused))
        #expect(await coordinator.resume())
        await playOut(output, log, until: 2)
        #expect(same(await log.events.finishes().map(\.1), [.spoken, .spoken]))
    }

    @Test func manyPausesAndResumesNeverWedge() async {
        let (coordinator, output, log, pump) = makeCoordinator(instant: false)
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        await hearStart(1, output, log)
        for n in 0..<200 {
            #expect(await coordinator.pause(at: n % 3 == 0 ? .word : .immediate))
            #expect(await coordinator.resume())
        }
        for _ in 0..<20 { await Task.yield() }
        await playOut(output, log, until: 1)
        #expect(same(await log.events.finishes().map(\.1), [.spoken]))
        #expect(same(await coordinator.status().state, .idle))
    }

    /// A pause still on its way to the output when its item is stopped must not reach the next
    /// item: the player is done with the output before the next item begins, and the output
    /// ignores calls for a track that is not its current one.
    @Test func aControlInFlightWhenItsItemIsCutNeverReachesTheNextItem() async {
        let output = GatedOutput()
        var configuration = SpeechCoordinator.Configuration()
        configuration.serverBufferMilliseconds = 0
        configuration.playbackStallLimit = .seconds(86_400)
        let coordinator = SpeechCoordinator(engine: FakeEngine(), output: output, configuration: configuration, clock: ImmediateClock())
        let log = EventLog()
        let pump = Task { for await delivery in coordinator.events { await log.record(delivery.event) } }
        defer { pump.cancel() }

        await coordinator.post(item(1, text: "un deux trois"))
        await hearStart(1, output.fake, log)
        #expect(await coordinator.pause(at: .immediate))
        while output.heldCalls == 0 { await Task.yield() }  // the cork is in flight
        #expect(await coordinator.stop())
        await coordinator.post(item(2, text: "quatre"))
        // Give the next item every chance to begin before the stale cork lands.
        for _ in 0..<1000 where output.fake.state.withLock({ $0.tracks }) < 2 { await Task.yield() }
        output.release()

        // Item 2 must be heard: a server that plays on is enough to finish it.
        for _ in 0..<10_000 where await log.finishedCount() < 2 {
            output.fake.advance(by: 1000)
            await Task.yield()
        }
        #expect(same(await log.events.finishes().map(\.1), [.stopped, .spoken]))
        #expect(same(output.fake.state.withLock { $0.paused }, false), "the next item was corked by a stale pause")
    }

    /// A word pause asked while the item is still being synthesised, then resumed, must leave no
    /// hold behind: before, the feeder could choose a hold for the cancelled pause (it had checked
    /// for a wanted pause before the resume, and set the hold after it), and the item then stopped
    /// at that word forever, with the watchdog off because it looked paused.
    @Test func aWordPauseResumedWhileSynthesisingLeavesNoHoldBehind() async {
        let output = GatedOutput()
        let engine = ScriptedEngine()
        var configuration = SpeechCoordinator.Configuration()
        configuration.serverBufferMilliseconds = 0
        configuration.playbackStallLimit = .seconds(86_400)
        let coordinator = SpeechCoordinator(engine: engine, output: output, configuration: configuration, clock: ImmediateClock())
        let log = EventLog()
        let pump = Task { for await delivery in coordinator.events { await log.record(delivery.event) } }
        defer { pump.cancel() }
        let id = UtteranceID(rawValue: 1)

        await coordinator.post(item(1, text: "un deux"))
        while !engine.isSynthesizing { await Task.yield() }
        engine.say(start: 0, length: 2)
        while output.fake.state.withLock({ $0.appended }) < 100 { await Task.yield() }
        output.fake.advance(by: 50)
        await log.wait { $0.contains(.word(id, start: 0, length: 2)) }
        // Asked while no word boundary is known yet: the pause waits for the next word.
        #expect(await coordinator.pause(at: .word))
        for _ in 0..<1000 { await Task.yield() }
        // The next word arrives while the output is slow to answer where it is.
        output.gatesProgress.withLock { $0 = true }
        engine.say(start: 3, length: 4)
        for _ in 0..<1000 where output.heldCalls < 2 { await Task.yield() }
        #expect(await coordinator.resume())
        for _ in 0..<1000 where !output.fake.state.withLock({ $0.log.contains("uncork") }) { await Task.yield() }
        output.gatesProgress.withLock { $0 = false }
        output.release()
        // Let whatever was waiting for the output's answer act on it before the audio moves on.
        for _ in 0..<1000 { await Task.yield() }
        engine.finish()

        for _ in 0..<10_000 where await log.finishedCount() < 1 {
            output.fake.advance(by: 1000)
            await Task.yield()
        }
        #expect(same(await log.events.finishes().map(\.1), [.spoken]), "\(output.fake.state.withLock { $0.log })")
    }

    /// A coordinator on an engine that speaks when the test says and an output whose calls the test
    /// can hold (`GatedOutput`).
    func makeScriptedCoordinator() -> (SpeechCoordinator, GatedOutput, ScriptedEngine, EventLog, Task<Void, Never>) {
        let output = GatedOutput()
        let engine = ScriptedEngine()
        var configuration = SpeechCoordinator.Configuration()
        configuration.serverBufferMilliseconds = 0
        let coordinator = SpeechCoordinator(engine: engine, output: output, configuration: configuration, clock: ImmediateClock())
        let log = EventLog()
        let pump = Task { for await delivery in coordinator.events { await log.record(delivery.event) } }
        return (coordinator, output, engine, log, pump)
    }

    /// The engine works while the player's track begins (a key's echo sooner): the item's audio is
    /// asked for when its player is made, not once the output has begun the track.
    @Test func theEngineIsAskedForAnItemsAudioBeforeItsTrackHasBegun() async {
        let (coordinator, output, engine, log, pump) = makeScriptedCoordinator()
        output.gatesBegin.withLock { $0 = true }
        defer { pump.cancel() }

        await coordinator.post(item(1, text: "un"))
        while output.heldCalls == 0 { await Task.yield() }  // the track's begin is in flight
        #expect(engine.isSynthesizing, "the engine is asked while the track begins")
        output.release()
        engine.say(start: 0, length: 2)
        engine.finish()
        await playOut(output.fake, log, until: 1)
        #expect(same(await log.events.finishes().map(\.1), [.spoken]))
    }

    /// A stop that comes while the player hands a chunk to the output, not while it waits for the
    /// next, still ends the synthesis (the feeder's iterator, let go, ends the stream): the engine
    /// must not go on saying the rest for nobody, with the next item waiting behind it.
    @Test func aStopBetweenTwoChunksEndsTheSynthesis() async {
        let (coordinator, output, engine, log, pump) = makeScriptedCoordinator()
        output.gatesAppend.withLock { $0 = true }
        defer { pump.cancel() }

        await coordinator.post(item(1, text: "un deux"))
        while !engine.isSynthesizing { await Task.yield() }
        engine.say(start: 0, length: 2)
        while output.heldCalls == 0 { await Task.yield() }  // the chunk is on its way to the output
        #expect(await coordinator.stop())
        output.release()
        await log.wait { $0.count(finished: 1) }
        #expect(same(engine.endedStreams, 1), "the synthesis was ended")
    }

    @Test func engineFailureFinishesWithErrorAndTheNextItemStillSpeaks() async {
        let (coordinator, _, log, pump) = makeCoordinator(engine: FakeEngine(failOn: "casse"))
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "casse"))
        await coordinator.post(item(2, queued: true, text: "bien"))
        await log.wait { $0.count(finished: 2) }
        let events = await log.events
        #expect(same(events.finishes().map(\.1), [.error, .spoken]))
        #expect(events.contains(.finished(UtteranceID(rawValue: 1), text: "casse", reason: .error, message: "fake failure")))
    }

    /// A coordinator on a manual clock, giving up on a stall, or on a lost server, after 100 ms.
    func makeTimedCoordinator() -> (SpeechCoordinator, FakeOutput, ManualClock, EventLog, Task<Void, Never>) {
        let output = FakeOutput(instant: false)
        let clock = ManualClock()
        var configuration = SpeechCoordinator.Configuration()
        configuration.playbackStallLimit = .milliseconds(100)
        configuration.audioReconnectGrace = .milliseconds(100)
        configuration.serverBufferMilliseconds = 0
        let coordinator = SpeechCoordinator(engine: FakeEngine(), output: output, configuration: configuration, clock: clock)
        let log = EventLog()
        let pump = Task { for await delivery in coordinator.events { await log.record(delivery.event) } }
        return (coordinator, output, clock, log, pump)
    }

    @Test func aStalledOutputFailsTheItemAndTheQueueGoesOn() async {
        let (coordinator, output, clock, log, pump) = makeTimedCoordinator()
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        await coordinator.post(item(2, queued: true, text: "quatre"))
        await hearStart(1, output, log)
        // 90 ms without progress: still waiting.
        await clock.run(for: .milliseconds(90), step: .milliseconds(5))
        #expect(same(await log.finishedCount(), 0))
        // Past 100 ms the watchdog gives up on item 1, and item 2 plays.
        await clock.run(for: .milliseconds(30), step: .milliseconds(5))
        await hearStart(2, output, log)
        while await log.finishedCount() < 2 {
            output.advance(by: 1000)
            await clock.run(for: .milliseconds(5), step: .milliseconds(5))
        }
        let events = await log.events
        #expect(same(events.finishes().map(\.1), [.error, .spoken]))
        #expect(events.contains {
            if case .finished(UtteranceID(rawValue: 1), _, .error, let message) = $0 { message?.contains("progress") == true } else { false }
        })
    }

    /// Paused, nothing ticks (no timer is armed), however long the pause; resumed, it plays on.
    @Test func aLongPauseIsNotAStallAndMakesNoWakeUps() async {
        let (coordinator, output, clock, log, pump) = makeTimedCoordinator()
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        await hearStart(1, output, log)
        await clock.waitForSleeper()
        #expect(same(clock.sleeperCount, 1), "the watchdog's deadline, while audio should move")
        #expect(await coordinator.pause(at: .immediate))
        while !output.state.withLock({ $0.paused }) { await Task.yield() }
        // The deadline armed before the pause wakes once, finds nothing to do, and is not re-armed.
        clock.advance(by: .milliseconds(100))
        for _ in 0..<1000 { await Task.yield() }
        #expect(same(clock.sleeperCount, 0), "a paused item must not tick")
        clock.advance(by: .seconds(60))
        for _ in 0..<1000 { await Task.yield() }
        #expect(same(await log.finishedCount(), 0))
        #expect(await coordinator.resume())
        while output.state.withLock({ $0.paused }) { await Task.yield() }
        while await log.finishedCount() < 1 {
            output.advance(by: 50)
            await clock.run(for: .milliseconds(5), step: .milliseconds(5))
        }
        let events = await log.events
        #expect(same(events.finishes().map(\.1), [.spoken]), "\(events)")
    }

    @Test func aServerGoneLongerThanTheGraceFailsTheItem() async {
        let (coordinator, output, clock, log, pump) = makeTimedCoordinator()
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        await coordinator.post(item(2, queued: true, text: "quatre"))
        await hearStart(1, output, log)
        output.setConnected(false)
        await clock.run(for: .milliseconds(90), step: .milliseconds(5))
        #expect(same(await log.finishedCount(), 0))
        await clock.run(for: .milliseconds(30), step: .milliseconds(5))
        await log.wait { $0.count(finished: 1) }
        let events = await log.events
        #expect(events.contains {
            if case .finished(UtteranceID(rawValue: 1), _, .error, let message) = $0 { message?.contains("sound server") == true } else { false }
        })
    }

    @Test func aServerBackWithinTheGraceLosesNothing() async {
        let (coordinator, output, clock, log, pump) = makeTimedCoordinator()
        defer { pump.cancel() }
        await coordinator.post(item(1, text: "un deux trois"))
        await hearStart(1, output, log)
        output.setConnected(false)
        await clock.run(for: .milliseconds(80), step: .milliseconds(5))
        output.setConnected(true)
        await clock.run(for: .milliseconds(80), step: .milliseconds(5))
        #expect(same(await log.finishedCount(), 0))
        while await log.finishedCount() < 1 {
            output.advance(by: 50)
            await clock.run(for: .milliseconds(5), step: .milliseconds(5))
        }
        #expect(same(await log.events.finishes().map(\.1), [.spoken]))
    }

    @Test func screenChangePlaysTheEarconBeforeTheWords() async {
        let (coordinator, output, log, pump) = makeCoordinator()
        defer { pump.cancel() }
        await coordinator.post(item(1, .screenChanged, text: "accueil"))
        await log.wait { $0.count(finished: 1) }
        // 150 ms of earcon and 60 ms of gap at the fake's 1 kHz, then one 100-frame word. (Read into a
        // typed constant first: the comparison inside #expect took the type checker 4 s.)
        let appended: Int = output.state.withLock { $0.appended }
        #expect(same(appended, 150 + 60 + 100))
    }

    @Test func marksAreToldWhenHeardBetweenTheWordsAroundThem() async {
        let (coordinator, _, log, pump) = makeCoordinator()
        defer { pump.cancel() }
        var utterance = request("un deux")
        utterance.segments[0] = SpeechSegment(content: .text("un"), voice: "fr", sourceStart: 0, sourceLength: 2)
        utterance.segments.append(SpeechSegment(
            content: .text("deux"), voice: "fr", sourceStart: 3, sourceLength: 4, options: .init(markBefore: "milieu")))
        let id = UtteranceID(rawValue: 1)
        await coordinator.post(SpeechItem(id: id, kind: .announcement, utterance: utterance))
        await log.wait { $0.count(finished: 1) }
        #expect(same(await log.events.dropFirst().dropLast(), [
            .word(id, start: 0, length: 2), .mark(id, name: "milieu"), .word(id, start: 3, length: 4),
        ]))
    }

    @Test func statusReportsCurrentAndPending() async {
        let (coordinator, output, log, pump) = makeCoordinator(instant: false)
        defer { pump.cancel() }
        await coordinator.post(item(1))
        await coordinator.post(item(2, queued: true))
        await hearStart(1, output, log)
        let status = await coordinator.status()
        #expect(same(status.state, .speaking))
        #expect(same(status.current?.id.rawValue, 1))
        #expect(same(status.pending.map(\.id.rawValue), [2]))
    }

    @Test func shutDownFinishesEverythingAndRefusesNewItems() async {
        let (coordinator, output, log, pump) = makeCoordinator(instant: false)
        defer { pump.cancel() }
        await coordinator.post(item(1))
        await coordinator.post(item(2, queued: true))
        await hearStart(1, output, log)
        await coordinator.shutDown()
        // Refused, not queued: the event stream has ended (the front end answers for it).
        #expect(same(await coordinator.post(item(3)), false))
        // The stream ends, and its last events are the `finished` of everything that was queued.
        await pump.value
        #expect(same(await log.events.finishes().map(\.1), [.stopped, .stopped]))
    }
}
