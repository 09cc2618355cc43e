// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
import A11yDaemon
@testable import A11yJSONLines
import A11yProtocol
import A11ySystem
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Nothing a client does may grow the daemon's memory without bound or hold others up.
@Suite(.serialized) struct BoundedMemoryTests {
    func word(_ n: UInt64) -> ServerMessage { .event(.word(UtteranceID(rawValue: n), start: 0, length: 1)) }
    func finished(_ n: UInt64) -> ServerMessage {
        .event(.finished(UtteranceID(rawValue: n), text: "x", reason: .spoken, message: nil))
    }

    @Test func aLateReaderLosesProgressEventsAndCopiesButNothingItIsOwed() {
        let outbox = Outbox<ServerMessage>(limits: .init(shedProgressAfter: 2, shedCopiesAfter: 4))
        #expect(outbox.push(word(1)) == .queued)
        #expect(outbox.push(finished(1)) == .queued)
        // Behind: words go, finished events stay.
        #expect(outbox.push(word(2)) == .shed)
        #expect(outbox.push(finished(2)) == .queued)
        #expect(outbox.push(finished(3), owed: false) == .queued, "a copy waits while fewer than 4 do")
        #expect(outbox.push(finished(4), owed: false) == .shed, "a copy is dropped past the second limit")
        // What the client is owed is never dropped, however many wait (thousands of `finished`
        // at once after a `stop` once cut off a client that read as fast as it could).
        for n in UInt64(5)...10_000 { #expect(outbox.push(finished(n)) == .queued) }
        #expect(outbox.waiting == 10_000)
        #expect(outbox.push(word(3)) == .shed)
        outbox.finish()
        #expect(outbox.push(finished(10_001)) == .closed)
    }

    @Test func aDrainedOutboxTakesMessagesInOrderAndEndsWhenFinished() async throws {
        let outbox = Outbox<ServerMessage>()
        for n in UInt64(1)...3 { _ = outbox.push(finished(n)) }
        outbox.finish()
        let written = Collected<ServerMessage>()
        try await outbox.drain { written.append($0) }
        #expect(written.all == (UInt64(1)...3).map(finished))
    }

    @Test func aClientThatTakesNothingIsCutOffAfterTheStallLimit() async throws {
        let outbox = Outbox<ServerMessage>(limits: .init(stallLimit: .milliseconds(100)))
        _ = outbox.push(finished(1))
        _ = outbox.push(finished(2))
        // A write that never completes: a client whose socket is full and who does not read.
        let drained = await Task {
            try await outbox.drain { _ in try await Task.sleep(for: .seconds(3600)) }
        }.result
        #expect(throws: Outbox<ServerMessage>.Stalled.self) { try drained.get() }
    }

    @Test func aClientThatReadsSlowlyButSteadilyIsNeverCutOff() async throws {
        let outbox = Outbox<ServerMessage>(limits: .init(stallLimit: .milliseconds(300)))
        for n in UInt64(1)...40 { _ = outbox.push(finished(n)) }
        outbox.finish()
        let written = Collected<ServerMessage>()
        // 40 writes of 20 ms each: 0.8 s in all, far more than the stall limit, but each is taken.
        try await outbox.drain {
            try await Task.sleep(for: .milliseconds(20))
            written.append($0)
        }
        #expect(written.all == (UInt64(1)...40).map(finished))
    }

    /// Queues `count` announcements in one write (the client reading as it goes), stops them all,
    /// and returns the `finished` events received (until all came, the connection closed, or 120 s).
    static func queueThenStop(_ count: Int, on poster: TestClient) async throws -> [(UInt64, FinishReason)] {
        var lines = ""
        for n in 1...count {
            lines += LineCodec.encodeString(RequestLine(.post(.say("élément \(n)", queue: true)), id: .number(n))) + "\n"
        }
        try await poster.sendRaw(lines)
        try await poster.waitFor("last reply", timeout: .seconds(120)) { $0.id == .number(count) }
        try await poster.send(RequestLine(.stop, id: .string("stop")))
        try await poster.waitFor("stop reply") { $0.id == .string("stop") }
        let deadline = ContinuousClock.now + .seconds(120)
        while await poster.finishes().count < count, ContinuousClock.now < deadline, !(await poster.closed) {
            try await Task.sleep(for: .milliseconds(20))
        }
        return await poster.finishes()
    }

    /// One connection queues `count` announcements, reading as it goes, then stops them all: the
    /// daemon owes it `count` `finished` events at once, and it gets each, once (a burst larger than
    /// the outbox's first limit once cut the client off, and most never arrived).
    @Test(arguments: [10_000, 50_000]) func aClientThatReadsGetsEveryFinishedOfAFloodStoppedAtOnce(count: Int) async throws {
        // All of them wait (the default 16 MiB holds about 41,000 of these): what is tested is the
        // stop's burst, not the bound's drops, whose scan per post is slow in a debug build.
        var configuration = DaemonConfiguration()
        configuration.queueMaxBytes = 64 << 20
        let daemon = try await DaemonHarness(configuration: configuration)
        let poster = try await daemon.client()
        let finishes = try await Self.queueThenStop(count, on: poster)
        #expect(!(await poster.closed), "a client that reads is never cut off")
        #expect(finishes.count == count)
        #expect(Set(finishes.map(\.0)).count == count, "each item told once")
        await daemon.shutDown()
    }

    /// The same over SSIP: 10,000 SPEAKs (the default priority queues each behind the last), then
    /// `CANCEL self` with notifications on: each message ends with one `702 END` or `703 CANCELED`.
    @Test func anSSIPClientThatReadsGetsTheEndOfEveryMessageCanceledAtOnce() async throws {
        let count = 10_000
        let daemon = try await DaemonHarness(ssip: true)
        let client = try RawSSIPClient(path: try #require(daemon.ssipSocketPath))
        let (queued, ended) = try await offThePool { () throws -> (Set<String>, [String]) in
            #expect(try client.command("SET self NOTIFICATION all on") == "220 OK NOTIFICATION SET\r\n")
            var script = ""
            for n in 1...count { script += "SPEAK\r\nélément \(n)\r\n.\r\n" }
            // Written from another thread while this one reads the replies, as a client does.
            let written = client.sendFromAnotherThread(script)
            var queued = Set<String>()
            var ended: [String] = []
            func take(_ reply: String) {
                let lines = reply.split(separator: "\r\n")
                if reply.hasPrefix("225-") { queued.insert(String(lines[0].dropFirst(4))) }
                if reply.hasSuffix("702 END\r\n") || reply.hasSuffix("703 CANCELED\r\n") {
                    ended.append(String(lines[0].dropFirst(4)))
                }
            }
            while queued.count < count { take(try client.readReply()) }
            written.wait()
            try client.send("CANCEL self\r\n")
            while ended.count < count { take(try client.readReply()) }
            return (queued, ended)
        }
        #expect(queued.count == count)
        #expect(ended.count == count)
        #expect(Set(ended) == queued, "each message told once")
        await daemon.shutDown()
    }

    @Test func aSubscriberThatNeverReadsIsCutOffAndOthersAreStillServed() async throws {
        // A subscriber that takes nothing is cut off after the stall limit (3 s here, 30 s in the
        // daemon); one that reads, however slowly under load, keeps taking and is never cut off.
        // The queue's smallest bound (1 MiB, about 2,500 such posts) so that most posts are dropped
        // as they come, as a flood should be.
        var configuration = DaemonConfiguration()
        configuration.queueMaxBytes = 1 << 20
        let daemon = try await DaemonHarness(configuration: configuration, outboxLimits: .init(stallLimit: .seconds(3)))
        // A raw client that subscribes and then never reads a byte.
        let silent = try RawSocketClient(path: daemon.socketPath)
        try silent.send(#"{"op":"subscribe","all":true}"# + "\n")
        let poster = try await daemon.client()
        // More events than the socket's buffers hold, for the subscriber (about 1 MB of them): its
        // writer blocks, messages wait, and it is cut off once it has taken none for the stall
        // limit. Every post ends (more than half are dropped for the queue's bound).
        let count = 6_000
        // The poster, who reads, hears the end of every item it posted, exactly once.
        let finishes = try await Self.queueThenStop(count, on: poster)
        #expect(finishes.count == count)
        #expect(Set(finishes.map(\.0)).count == count)
        // Still served, promptly, while the silent one is dealt with.
        try await poster.send(RequestLine(.status, id: .string("status")))
        #expect(try await poster.waitFor("status") { $0.id == .string("status") }.state != nil)
        // The silent subscriber was cut off rather than kept with everything it did not read.
        #expect(silent.readsToTheEnd(timeout: .seconds(20)))
        await daemon.shutDown()
    }
}
