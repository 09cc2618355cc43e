// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11ySSIP
import A11yTestSupport
import NIOCore
import NIOEmbedded
import Testing

/// The lines answered on the event loop, row by row, in an `EmbeddedChannel`: what is written at
/// once, what is handed to the reader (`SSIPCommand`), and what waits for the session to come back.
@Suite struct SSIPSessionHandlerTests {
    /// Counts the reads that reach the socket.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// Whether the end of the input reached the reader's side.
    final class InputClosedWatcher: ChannelInboundHandler {
        typealias InboundIn = SSIPCommand
        typealias InboundOut = SSIPCommand
        var inputClosed = false
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { inputClosed = true }
            context.fireUserInboundEventTriggered(event)
        }
    }

    struct Harness {
        /// As `SSIPServer.Configuration`'s; the embedded loop's clock moves only when told.
        static let eventsHeldFor = TimeAmount.milliseconds(30)
        let channel = EmbeddedChannel()
        let link = SSIPChannelLink()
        let released = Collected<UInt64>()
        let reads = ReadCounter()
        let watcher = InputClosedWatcher()

        init() throws {
            let released = released
            try channel.pipeline.syncOperations.addHandlers(
                reads,
                SSIPSessionHandler(session: SSIPSession(client: ClientID(rawValue: 7)), link: link, eventsHeldFor: Self.eventsHeldFor) {
                    released.append($0)
                },
                watcher)
        }

        /// Lines read at once, as one read.
        func read(_ lines: String...) throws {
            for line in lines { try channel.writeInbound(SSIPFrame.line(Array(line.utf8), crlf: true)) }
        }

        /// The replies written to the socket so far, as their wire text.
        func written() throws -> [String] {
            var replies: [String] = []
            while let reply = try channel.readOutbound(as: SSIPReply.self) { replies.append(reply.description) }
            return replies
        }

        /// The lines handed to the reader so far.
        func handedOver() throws -> [SSIPCommand] {
            var commands: [SSIPCommand] = []
            while let command = try channel.readInbound(as: SSIPCommand.self) { commands.append(command) }
            return commands
        }

        /// Does what the reader does with a `SPEAK`: queued as `id`, its 225 written, the session back.
        func readerQueues(_ command: SSIPCommand, as id: UInt64, heldEvents: UInt64? = nil) throws {
            var session = command.session
            for case .reply(let reply) in session.queued(UtteranceID(rawValue: id)) {
                try channel.writeOutbound(SSIPOutput.reply(reply))
            }
            try channel.writeOutbound(SSIPOutput.answered(session, heldEvents: heldEvents))
        }
    }

    func rate(of command: SSIPCommand) -> Double? {
        guard case .speak(let request, _)? = command.actions.first else { return nil }
        return request.rate
    }

    @Test func pipelinedSetsAndSpeaksAreAnsweredInOrderAndEachSpeakCarriesTheSettingsSetBeforeIt() throws {
        let h = try Harness()
        try h.read("SET self RATE 10", "SPEAK", "un", ".", "SET self RATE 20", "SPEAK", "deux", ".", "GET RATE")
        // Up to the first message's end, at once; then nothing until the reader is done with it.
        #expect(try h.written() == ["203 OK RATE SET\r\n", "230 OK RECEIVING DATA\r\n"])
        let first = try h.handedOver()
        #expect(first.count == 1)
        #expect(rate(of: first[0]) == SSIPSettings.requestRate(10))
        try h.readerQueues(first[0], as: 1)
        #expect(try h.written() == [
            "225-1\r\n225 OK MESSAGE QUEUED\r\n", "203 OK RATE SET\r\n", "230 OK RECEIVING DATA\r\n",
        ])
        let second = try h.handedOver()
        #expect(second.count == 1)
        #expect(rate(of: second[0]) == SSIPSettings.requestRate(20))
        #expect(try h.written().isEmpty, "GET waits behind the second message")
        try h.readerQueues(second[0], as: 2)
        #expect(try h.written() == ["225-2\r\n225 OK MESSAGE QUEUED\r\n", "251-20\r\n251 OK GET RETURNED\r\n"])
    }

    /// Orca's key echo: CANCEL, its SETs, then SPEAK. The CANCEL is answered here at once and the
    /// SETs after it too, while the reader carries out the stop (without the session); the message
    /// goes to the reader after the stop, with the settings set before it.
    @Test func aCancelIsAnsweredAtOnceAndTheLinesAfterItAreNotHeldUp() throws {
        let h = try Harness()
        h.link.setMessagesNotEnded(1)  // one of its messages may be speaking
        try h.read("CANCEL self", "SET self RATE 10", "STOP all", "SPEAK", "un", ".")
        #expect(try h.written() == ["213 OK CANCELED\r\n", "203 OK RATE SET\r\n", "210 OK STOPPED\r\n", "230 OK RECEIVING DATA\r\n"])
        let handed = try h.handedOver()
        #expect(handed.map(\.actions.count) == [1, 1, 1])
        #expect(handed.prefix(2).map(\.actions) == [
            [.control(.cancel, .client(ClientID(rawValue: 7)), reply: nil)], [.control(.stop, .all, reply: nil)],
        ])
        #expect(handed.map(\.returnsSession) == [false, false, true])
        #expect(rate(of: handed[2]) == SSIPSettings.requestRate(10))
    }

    /// Orca's key echo after silence: a stop of the connection's own messages when every one has
    /// ended has nothing to end, and is only answered; a stop of others' still goes to the reader,
    /// and so does its own once a message is left (the router counts them from their post).
    @Test func aStopOfItsOwnMessagesWhenNoneIsLeftIsOnlyAnswered() throws {
        let h = try Harness()
        try h.read("CANCEL self", "STOP self", "CANCEL 8", "STOP all")
        #expect(try h.written() == ["213 OK CANCELED\r\n", "210 OK STOPPED\r\n", "213 OK CANCELED\r\n", "210 OK STOPPED\r\n"])
        #expect(try h.handedOver().map(\.actions) == [
            [.control(.cancel, .client(ClientID(rawValue: 8)), reply: nil)], [.control(.stop, .all, reply: nil)],
        ])
        h.link.setMessagesNotEnded(1)
        try h.read("CANCEL self")
        #expect(try h.written() == ["213 OK CANCELED\r\n"])
        #expect(try h.handedOver().map(\.actions) == [[.control(.cancel, .client(ClientID(rawValue: 7)), reply: nil)]])
    }

    /// A PAUSE is answered once in force: all of it goes to the reader.
    @Test func aPauseIsAnsweredByTheReader() throws {
        let h = try Harness()
        try h.read("PAUSE self")
        #expect(try h.written().isEmpty)
        #expect(try h.handedOver().map(\.actions) == [[.control(.pause, .client(ClientID(rawValue: 7)), reply: SSIPReply(211, "OK PAUSED"))]])
    }

    @Test func nothingIsReadWhileALineIsWithTheReader() throws {
        let h = try Harness()
        h.channel.read()
        #expect(h.reads.reads == 1)
        try h.read("GET RATE")
        h.channel.read()
        #expect(h.reads.reads == 2, "a line answered at once holds nothing up")
        try h.read("SPEAK", "un", ".")
        h.channel.read()
        #expect(h.reads.reads == 2)
        try h.readerQueues(try #require(h.handedOver().first), as: 1)
        #expect(h.reads.reads == 3, "the held read, once the session is back")
    }

    @Test func theEndOfTheInputFollowsTheLinesBeforeIt() throws {
        let h = try Harness()
        try h.read("SPEAK", "un", ".", "SPEAK", "deux", ".")
        h.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!h.watcher.inputClosed, "the second message is still to be handed over")
        try h.readerQueues(try #require(h.handedOver().first), as: 1)
        #expect(try h.handedOver().count == 1)
        #expect(h.watcher.inputClosed)
    }

    @Test func whatOtherConnectionsSetIsAppliedBeforeTheNextLine() throws {
        let h = try Harness()
        try h.read("GET RATE")
        h.link.append(.rate(40))
        try h.read("GET RATE")
        #expect(try h.written() == ["251-0\r\n251 OK GET RETURNED\r\n", "251-40\r\n251 OK GET RETURNED\r\n"])
    }

    @Test func aQueuedMessagesEventsAreReleasedOnceByTheNextLineAnsweredHere() throws {
        let h = try Harness()
        try h.read("SPEAK", "un", ".")
        try h.readerQueues(try #require(h.handedOver().first), as: 1, heldEvents: 5)
        #expect(h.released.all.isEmpty)
        try h.read("GET RATE")
        #expect(h.released.all == [5])
        try h.read("GET RATE")
        #expect(h.released.all == [5])
    }

    /// With no next line, the handler lets them go itself once the hold's time has passed, on its
    /// event loop; a line after that (Orca's CANCEL after silence) asks nothing of the router, whose
    /// release wakes a thread of the pool.
    @Test func aQueuedMessagesEventsAreReleasedOnceAfterTheHoldWhenNoLineComes() throws {
        let h = try Harness()
        try h.read("SPEAK", "un", ".")
        try h.readerQueues(try #require(h.handedOver().first), as: 1, heldEvents: 5)
        h.channel.embeddedEventLoop.advanceTime(by: Harness.eventsHeldFor - .milliseconds(1))
        #expect(h.released.all.isEmpty)
        h.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(h.released.all == [5])
        try h.read("GET RATE")
        h.channel.embeddedEventLoop.advanceTime(by: Harness.eventsHeldFor)
        #expect(h.released.all == [5])
    }

    /// A hold's time running out after the next line let its events go, or once a later message
    /// holds its own, releases nothing more: each hold is released once.
    @Test func aHoldsTimeReleasesNothingOnceTheNextLineHas() throws {
        let h = try Harness()
        try h.read("SPEAK", "un", ".")
        try h.readerQueues(try #require(h.handedOver().first), as: 1, heldEvents: 5)
        try h.read("SPEAK", "deux", ".")
        #expect(h.released.all == [5])
        try h.readerQueues(try #require(h.handedOver().first), as: 2, heldEvents: 6)
        h.channel.embeddedEventLoop.advanceTime(by: Harness.eventsHeldFor)
        #expect(h.released.all == [5, 6])
    }
}
