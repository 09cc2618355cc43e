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

/// Nothing a client does may grow the daemon's memory without bound or hold others up (issue 10).
@Suite(.serialized) struct BoundedMemoryTests {
    func word(_ n: UInt64) -> ServerMessage { .event(.word(UtteranceID(rawValue: n), start: 0, length: 1)) }
    func finished(_ n: UInt64) -> ServerMessage {
        .event(.finished(UtteranceID(rawValue: n), text: "x", reason: .spoken, message: nil))
    }

    @Test func aLateReaderLosesProgressEventsFirstAndIsCutOffAtTheLimit() {
        let outbox = Outbox<ServerMessage>(limits: .init(shedProgressAfter: 2, cutOffAfter: 4))
        #expect(outbox.push(word(1)) == .queued)
        #expect(outbox.push(finished(1)) == .queued)
        // Behind: words go, finished events stay.
        #expect(outbox.push(word(2)) == .shed)
        #expect(outbox.push(finished(2)) == .queued)
        #expect(outbox.push(finished(3)) == .queued)
        #expect(outbox.waiting == 4)
        #expect(outbox.push(finished(4)) == .overflowed)
        // Cut off: nothing more is held for it.
        #expect(outbox.waiting == 0)
        #expect(outbox.push(finished(5)) == .closed)
    }

    @Test func aDrainedOutboxTakesMessagesInOrderAndEndsWhenFinished() async throws {
        let outbox = Outbox<ServerMessage>()
        for n in UInt64(1)...3 { _ = outbox.push(finished(n)) }
        outbox.finish()
        var written: [ServerMessage] = []
        try await outbox.drain { written.append($0) }
        #expect(written == (UInt64(1)...3).map(finished))
    }

    /// A raw client that subscribes and then never reads a byte.
    final class SilentSubscriber {
        let descriptor: Int32

        init(path: String) throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard let address = UnixSocketAddress(path: path),
                address.withSockaddr({ connect(descriptor, $0, $1) }) == 0
            else { throw TestFailure("connect: errno \(errno)") }
            let line = Array(#"{"op":"subscribe","all":true}"#.utf8) + [10]
            _ = line.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        }

        deinit { close(descriptor) }

        /// Reads everything the daemon left (without keeping it) until the end of the stream;
        /// true if the daemon closed the connection within `timeout`.
        func readsToTheEnd(timeout: Duration) -> Bool {
            let deadline = ContinuousClock.now + timeout
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while ContinuousClock.now < deadline {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) > 0 else { continue }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count == 0 || (count < 0 && errno == ECONNRESET) { return true }
            }
            return false
        }
    }

    @Test func aSubscriberThatNeverReadsIsCutOffAndOthersAreStillServed() async throws {
        // The daemon's own limit (4096 unread messages): a client that reads, however slowly under
        // load, is held up by backpressure long before it.
        // The queue's smallest bound (1 MiB, about 2,500 such posts) so that most posts are dropped
        // as they come, as a flood should be, and the stop ends fewer than the cut-off at once.
        var configuration = DaemonConfiguration()
        configuration.queueMaxBytes = 1 << 20
        let daemon = try await DaemonHarness(configuration: configuration)
        let silent = try SilentSubscriber(path: daemon.socketPath)
        let poster = try await daemon.client()
        // More events than the socket's buffers and the limit hold, for the subscriber: every post
        // ends (most are dropped for the queue's bound).
        let count = 12_000
        var lines = ""
        for n in 1...count {
            lines += LineCodec.encodeString(RequestLine(.post(.say("élément \(n)", queue: true)), id: .number(n))) + "\n"
        }
        try await poster.sendRaw(lines)
        try await poster.waitFor("last reply", timeout: .seconds(120)) { $0.id == .number(count) }
        try await poster.send(RequestLine(.stop, id: .string("stop")))
        try await poster.waitFor("stop reply") { $0.id == .string("stop") }
        // The poster, who reads, hears the end of every item it posted, exactly once.
        let deadline = ContinuousClock.now + .seconds(120)
        while await poster.finishes().count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let finishes = await poster.finishes()
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
