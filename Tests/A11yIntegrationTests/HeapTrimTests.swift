// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yDaemon
import A11yProtocol
import A11yTestSupport
import Foundation
import Synchronization
import Testing

/// `HeapTrimService` gives the heap back once speech has been quiet for a moment, once per quiet
/// spell, and never while something speaks.
@Suite(.serialized) struct HeapTrimTests {
    @Test func trimsOnceSpeechHasBeenQuietAndNeverWhileSpeaking() async throws {
        let daemon = try await DaemonHarness()
        let trims = Atomic<Int>(0)
        let service = HeapTrimService(speech: daemon.speech) { trims.add(1, ordering: .relaxed) }
        let running = Task { try await service.run() }
        let client = try await daemon.client()

        // A short item, then a long one right after it: the first one's `finished` is followed by
        // the second's `started`, and nothing is trimmed while the second speaks.
        let short = try await client.post(.say("un"))
        let long = try await client.post(.say(longSentence, queue: true))
        _ = try await client.finished(short)
        try await client.waitFor("a few words in") { $0.event == "word" && $0.utterance == long && ($0.start ?? 0) > 20 }
        try await Task.sleep(for: HeapTrimService.quietFor + .milliseconds(500))
        #expect(trims.load(ordering: .relaxed) == 0, "trimmed while speaking")
        try await client.send(RequestLine(.stop))
        _ = try await client.finished(long)
        try await Task.sleep(for: HeapTrimService.quietFor + .milliseconds(500))
        #expect(trims.load(ordering: .relaxed) == 1, "trimmed once after the quiet delay")

        // Two short items in a row: one quiet spell after them, one trim.
        let first = try await client.post(.say("un"))
        let second = try await client.post(.say("deux", queue: true))
        _ = try await client.finished(first)
        _ = try await client.finished(second)
        try await Task.sleep(for: HeapTrimService.quietFor * 3)
        #expect(trims.load(ordering: .relaxed) == 2, "one trim per quiet spell, not one per item or a timer")
        running.cancel()
        await daemon.shutDown()
    }
}
