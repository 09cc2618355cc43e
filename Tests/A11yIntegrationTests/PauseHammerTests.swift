// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// A client posting a long text, then pausing and resuming it 40 times in a row, 0–10 ms
/// apart, again and again. Under load this killed a11yd within seconds (libpulse's interpolated
/// stream time, after quick cork/uncork cycles, can exceed `Int64.max`, which trapped in
/// `Int64(_:)`). The daemon runs in this process, so a trap fails the whole run.
///
/// `make test` storms for 15 s (about 35 rounds of 40 pauses and resumes); `make soak` for the full
/// minute (`A11Y_PAUSE_STORM_SECONDS`), as a long run belongs there.
@Suite struct PauseHammerTests {
    static var stormSeconds: Int {
        getenv("A11Y_PAUSE_STORM_SECONDS").flatMap { Int(String(cString: $0)) } ?? 15
    }

    @Test func pauseResumeStormsNeitherKillNorWedgeTheDaemon() async throws {
        let daemon = try await DaemonHarness()
        // Recording all along, as a user listens: the monitor's 5 ms fragments keep the sink at low
        // latency, where libpulse's timing is most easily upset.
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        var posted: [UInt64] = []
        var requestNumber = 0
        func nextID() -> RequestID {
            requestNumber += 1
            return .number(requestNumber)
        }
        let end = ContinuousClock.now + .seconds(Self.stormSeconds)
        var round = 0
        while ContinuousClock.now < end {
            round += 1
            let id = try await client.post(.say(longSentence))
            posted.append(id)
            // Half the storms start at once, half once the utterance is heard.
            if round % 2 == 0 {
                try await client.waitFor("first word of #\(id)") {
                    ($0.event == "word" || $0.event == "finished") && $0.utterance == id
                }
            }
            for _ in 0..<40 {
                try await client.send(RequestLine(.pause(.immediate), id: nextID()))
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...10)))
                try await client.send(RequestLine(.resume, id: nextID()))
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...10)))
            }
            // Still answering: every request of the storm got its reply.
            let last = RequestID.number(requestNumber)
            try await client.waitFor("reply to the last resume of round \(round)") { $0.id == last }
        }

        // A final post, after the storms, is heard.
        let finalPostedAt = recorder.elapsed()
        let final = try await client.post(.say("toujours là", queue: false))
        posted.append(final)
        let finished = try await client.finished(final, timeout: .seconds(30))
        try await Task.sleep(for: .milliseconds(100))
        let recording = recorder.stop()
        #expect(finished.reason == .spoken)
        #expect(recording.rms(from: finalPostedAt) > 0.02, "the final post reached the null sink")

        // Every accepted post got exactly one finished.
        for id in posted {
            _ = try await client.finished(id, timeout: .seconds(30))
        }
        let finishes = await client.finishes().map(\.0)
        let counts = Dictionary(finishes.map { ($0, 1) }, uniquingKeysWith: +)
        let wrong = posted.filter { counts[$0] != 1 }
        #expect(wrong.isEmpty, "posts without exactly one finished: \(wrong.map { ($0, counts[$0] ?? 0) })")
        #expect(Set(finishes).isSubset(of: Set(posted)))
        print("pause hammer: \(round) rounds, \(posted.count) posts, \(requestNumber) pause/resume requests")
        await daemon.shutDown()
    }
}
