// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11yDaemon
import A11yTestSupport
import Synchronization
import Testing

/// `HeapTrimService` gives the heap back once speech has been quiet for a moment, once per quiet
/// spell, and never while something speaks. Speech's events are fed by hand, in the order the
/// daemon sends them, and the quiet spell is measured on a manual clock: what the service armed,
/// disarmed and woke is seen as it happens, with no real waiting.
@Suite struct HeapTrimTests {
    @Test func trimsOnceSpeechHasBeenQuietAndNeverWhileSpeaking() async throws {
        let clock = ManualClock()
        let trims = Atomic<Int>(0)
        let (events, speech) = AsyncStream.makeStream(of: ClientEvent.self)
        let service = HeapTrimService(events: events, clock: clock) { trims.add(1, ordering: .relaxed) }
        let running = Task { try await service.run() }
        func emit(_ event: SpeechEvent) { speech.yield(ClientEvent(event, owner: nil)) }
        func speak(_ id: UInt64, _ text: String, _ reason: FinishReason = .spoken) {
            emit(.started(UtteranceID(rawValue: id)))
            emit(.word(UtteranceID(rawValue: id), start: 0, length: text.unicodeScalars.count))
            emit(.finished(UtteranceID(rawValue: id), text: text, reason: reason, message: nil))
        }
        let quietFor = HeapTrimService.quietFor

        // A short item, then a long one right after it: the first one's `finished` is followed by
        // the second's `started`, and nothing is trimmed while the second speaks.
        speak(1, "un")
        emit(.started(UtteranceID(rawValue: 2)))
        emit(.word(UtteranceID(rawValue: 2), start: 21, length: 5))
        #expect(
            await clock.settle { clock.sleepsBegun == 1 && clock.sleeperCount == 0 },
            "the short item's quiet spell is armed, then disarmed when the long one starts")
        #expect(clock.advance(by: quietFor + .milliseconds(500)) == 0, "trimmed while speaking")
        #expect(trims.load(ordering: .relaxed) == 0, "trimmed while speaking")
        emit(.finished(UtteranceID(rawValue: 2), text: longSentence, reason: .stopped, message: nil))
        #expect(await clock.settle { clock.sleepsBegun == 2 && clock.sleeperCount == 1 }, "armed when the long one ended")
        #expect(clock.advance(by: quietFor - .milliseconds(1)) == 0, "trimmed before the quiet delay")
        #expect(clock.advance(by: .milliseconds(1)) == 1, "trimmed once after the quiet delay")
        #expect(await clock.settle { trims.load(ordering: .relaxed) == 1 }, "trimmed once after the quiet delay")

        // Two short items in a row: one quiet spell after them, one trim.
        speak(3, "un")
        speak(4, "deux")
        #expect(await clock.settle { clock.sleepsBegun == 4 && clock.sleeperCount == 1 }, "one timer for the two items")
        #expect(
            clock.advance(by: quietFor * 3) == 1, "one trim per quiet spell, not one per item or a timer")
        #expect(await clock.settle { trims.load(ordering: .relaxed) == 2 }, "one trim per quiet spell")
        #expect(clock.sleeperCount == 0 && clock.sleepsBegun == 4, "nothing armed again while nothing speaks")
        running.cancel()
        speech.finish()
    }
}
