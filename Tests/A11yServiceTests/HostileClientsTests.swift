// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What careless or hostile clients do to the real daemon process: lines that never end, floods
/// from a hundred connections at once. Its memory stays bounded, everybody else is still
/// answered, and every accepted post ends with exactly one `finished`.
@Suite(.serialized) struct HostileClientsTests {
    /// Resident memory of a process, in KiB (VmRSS).
    func residentKiB(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    /// Asks for the status and waits for it; a daemon held up by another client would time out.
    func statusAnswers(_ client: TestClient, _ tag: String) async throws {
        try await client.send(RequestLine(.status, id: .string(tag)))
        let reply = try await client.waitFor("status \(tag)", timeout: .seconds(10)) { $0.id == .string(tag) }
        #expect(reply.state != nil)
    }

    @Test func linesThatNeverEndAreNeverHeldWholeAndHoldNobodyUp() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let daemon = try await sandbox.startDaemon(pulse: pulse)
        let control = try await TestClient.connect(path: sandbox.socketPath)
        try await statusAnswers(control, "warm")
        let before = residentKiB(daemon.pid)

        // Half a line that never ends, left open for the whole test.
        let half = try await TestClient.connect(path: sandbox.socketPath)
        try await half.sendRaw(#"{"op":"post","text":""# + String(repeating: "é", count: 200_000))
        // A line of 64 MiB, sent in pieces: far over the 1 MiB limit and never held whole.
        let streamer = try await TestClient.connect(path: sandbox.socketPath)
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        for n in 1...64 {
            try await streamer.sendBytes(piece)
            if n % 16 == 0 { try await statusAnswers(control, "during \(n)") }
        }
        let during = residentKiB(daemon.pid)
        try await streamer.sendRaw("\n" + LineCodec.encodeString(RequestLine(.status, id: .string("after"))) + "\n")
        let refusal = try await streamer.waitFor("line_too_long") { $0.error != nil }
        #expect(refusal.error?.code == "line_too_long")
        try await statusAnswers(streamer, "after")
        // What the daemon holds for them is bounded by the 1 MiB limit, not by what they sent.
        #expect(during - before < 16 * 1024, "RSS grew from \(before) KiB to \(during) KiB")
        try await statusAnswers(control, "end")
        #expect(daemon.isRunning)
        await half.close()
        await streamer.close()
        await control.close()
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")
    }

    @Test func aHundredClientsFloodingAtOnceAreEachAnsweredAndOthersStillServed() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        let daemon = try await sandbox.startDaemon(pulse: pulse)
        let control = try await TestClient.connect(path: sandbox.socketPath)
        try await statusAnswers(control, "warm")

        let postsEach = 50
        var flooders: [TestClient] = []
        for _ in 0..<100 { flooders.append(try await TestClient.connect(path: sandbox.socketPath)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, flooder) in flooders.enumerated() {
                group.addTask {
                    var lines = ""
                    for n in 1...postsEach {
                        let post = RequestLine(.post(.say("client \(index), élément \(n)", queue: true)), id: .number(n))
                        lines += LineCodec.encodeString(post) + "\n"
                    }
                    try await flooder.sendRaw(lines)
                }
            }
            // Everybody else is still answered while the flood comes in.
            group.addTask {
                try await statusAnswers(control, "flood")
                try await control.send(RequestLine(.stop, id: .string("stop")))
                _ = try await control.waitFor("stop", timeout: .seconds(10)) { $0.id == .string("stop") }
            }
            try await group.waitForAll()
        }
        for flooder in flooders {
            try await flooder.waitFor("last reply", timeout: .seconds(60)) { $0.id == .number(postsEach) }
        }
        try await control.send(RequestLine(.stop, id: .string("final stop")))
        _ = try await control.waitFor("final stop", timeout: .seconds(10)) { $0.id == .string("final stop") }
        // Every accepted post ends exactly once, for its own client.
        for (index, flooder) in flooders.enumerated() {
            let deadline = ContinuousClock.now + .seconds(30)
            while await flooder.finishes().count < postsEach, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let finishes = await flooder.finishes()
            #expect(finishes.count == postsEach, "client \(index): \(finishes.count) finished")
            #expect(Set(finishes.map(\.0)).count == finishes.count, "client \(index): a finished twice")
        }
        try await statusAnswers(control, "after")
        #expect(daemon.isRunning)
        for flooder in flooders { await flooder.close() }
        await control.close()
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")
    }
}
