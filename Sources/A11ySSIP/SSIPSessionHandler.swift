// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import NIOCore
import Synchronization

/// Answers on the connection's event loop every SSIP line that needs no speech call, and hands the
/// others, with the session, to the connection's reader (`SSIPConnection`).
///
/// Why here: most of what a client like Orca sends before each `SPEAK` (its `SET`s, `SPEAK` itself,
/// the message's lines) only reads or changes the session. Answered by the reader, each line would
/// cross from NIO's event loop to the cooperative pool and its reply back, each crossing waking a
/// sleeping thread after the silence between two keys; answered here, the reply is written in the
/// same turn of the loop that read the line.
///
/// The session has one owner at a time, so what the speech path uses (voice, rate, priority set
/// before a `SPEAK`) is exactly what the client set before it: this handler while it answers, the
/// reader from the line that needs speech (`SSIPCommand`, the session and the actions that line
/// asks for) until the reader's last reply to it has been written: the reader sends the session
/// back behind those replies (`SSIPOutput.answered`), through the same outbox and pipeline, so it
/// comes back only once they are on their way to the socket. Meanwhile lines wait here, in order,
/// and nothing more is read; so no reply ever overtakes an earlier line's reply. Lines also wait
/// (and nothing is read) while the socket takes no more (the channel is not writable): a client that
/// sends without reading is held up by its own socket, as by the reader's `Outbox.waitForRoom`.
///
/// STOP and CANCEL are answered here before they take effect, as speech-dispatcher answers them,
/// and only their effect goes to the reader, without the session: Orca sends one before each key's
/// SETs and SPEAK, which are answered meanwhile; its SPEAK reaches the reader after the stop. A stop
/// of the connection's own messages goes nowhere when none is left (`SSIPChannelLink`, kept by the
/// router from each message's post, which comes before the reader's reply to its SPEAK, to its last
/// event).
///
/// A queued message's events wait for the client's next line (`SSIPRouter.endAnswer`), or at most
/// `eventsHeldFor`: when that line is answered here, or the time has run out first (a timer of this
/// event loop, armed in the turn that took the session back: it wakes no other thread), the router
/// is told to let them go (`releaseHeldEvents`), once.
final class SSIPSessionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = SSIPFrame
    typealias InboundOut = SSIPCommand
    typealias OutboundIn = SSIPOutput
    typealias OutboundOut = SSIPReply

    /// Nil while the reader carries out a line that needs speech.
    private var session: SSIPSession?
    private let link: SSIPChannelLink
    private let releaseHeldEvents: @Sendable (_ hold: UInt64) -> Void
    /// How long a queued message's events wait for the client's next line at most.
    private let eventsHeldFor: TimeAmount
    /// Lines read and not yet answered, in order.
    private var waiting = CircularBuffer<SSIPFrame>()
    /// The hold of the last queued message's events, to release at the next line answered here.
    private var heldEvents: UInt64?
    /// A read asked for while lines waited: done once they are answered.
    private var readPending = false
    /// The end of the client's input, passed on once the lines before it are.
    private var inputClosedPending = false

    init(
        session: SSIPSession, link: SSIPChannelLink, eventsHeldFor: TimeAmount,
        releaseHeldEvents: @escaping @Sendable (_ hold: UInt64) -> Void
    ) {
        self.session = session
        self.link = link
        self.eventsHeldFor = eventsHeldFor
        self.releaseHeldEvents = releaseHeldEvents
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        waiting.append(unwrapInboundIn(data))
        answerWaiting(context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .reply(let reply):
            context.write(wrapOutboundOut(reply), promise: promise)
        case .answered(let session, let heldEvents):
            // Every reply of the reader's line went down the pipeline before this.
            promise?.succeed()
            self.session = session
            self.heldEvents = heldEvents
            if let hold = heldEvents { releaseAfterTheHold(hold, context: context) }
            answerWaiting(context: context)
        }
    }

    func read(context: ChannelHandlerContext) {
        if session == nil || !waiting.isEmpty || !context.channel.isWritable {
            readPending = true
        } else {
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        answerWaiting(context: context)
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event, !waiting.isEmpty {
            // The reader must get the lines before it the end of the input.
            inputClosedPending = true
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Lets the events held since answer `hold` go once `eventsHeldFor` has passed, unless a line
    /// answered here let them go first (or a later answer holds them now).
    private func releaseAfterTheHold(_ hold: UInt64, context: ChannelHandlerContext) {
        context.eventLoop.assumeIsolated().scheduleTask(in: eventsHeldFor) {
            guard self.heldEvents == hold else { return }
            self.heldEvents = nil
            self.releaseHeldEvents(hold)
        }
    }

    /// Answers the waiting lines in order, until one needs speech (handed to the reader with the
    /// session) or the socket takes no more.
    private func answerWaiting(context: ChannelHandlerContext) {
        var wrote = false
        while var session, !waiting.isEmpty, context.channel.isWritable {
            let frame = waiting.removeFirst()
            for change in link.take() { session.apply(change) }
            let actions = session.receive(frame)
            // Still held only if the hold's time has not run out: after silence (Orca's CANCEL
            // before each key's echo) nothing is asked of the router, whose release wakes a thread
            // of the pool.
            if let hold = heldEvents {
                heldEvents = nil
                releaseHeldEvents(hold)
            }
            // The replies that lead the line go out here, at once (all of a line that needs no
            // speech; a STOP's or CANCEL's before its effect); the rest goes to the reader.
            let leading = actions.prefix(while: \.isReply)
            for case .reply(let reply) in leading {
                context.write(wrapOutboundOut(reply), promise: nil)
                wrote = true
            }
            var rest = Array(actions.dropFirst(leading.count))
            // A STOP or CANCEL, answered, leaves the session here: the reader carries out the stop
            // while the lines after it (Orca's SETs) are answered, and a line that needs speech
            // follows the stop through the reader, in order. Any other line takes the session along.
            let keepsSession = rest.allSatisfy(\.isAnsweredStop)
            self.session = keepsSession ? session : nil
            // A stop of the connection's own messages when none is left has nothing to end: Orca
            // sends CANCEL before every key's echo, mostly after silence, and carrying it out (a
            // pool thread woken, the speech API) delayed Orca's next line by about 0.1 ms.
            if keepsSession, !link.hasMessagesNotEnded {
                rest.removeAll { $0.isAnsweredStop(onlyOf: session.client) }
            }
            guard !rest.isEmpty else { continue }
            if wrote {
                context.flush()
                wrote = false
            }
            context.fireChannelRead(wrapInboundOut(SSIPCommand(actions: rest, session: session, returnsSession: !keepsSession)))
            context.fireChannelReadComplete()
            guard keepsSession else { break }
        }
        if wrote { context.flush() }
        guard waiting.isEmpty else { return }
        if inputClosedPending {
            inputClosedPending = false
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
        if readPending, session != nil, context.channel.isWritable {
            readPending = false
            context.read()
        }
    }
}

/// A line that needs speech, as the session answered it, for the connection's reader to carry out
/// (`SSIPConnection.handle`): the session is the reader's until it sends it back, unless the line is
/// an answered STOP or CANCEL (`returnsSession` false: the handler kept the session).
struct SSIPCommand: Sendable {
    var actions: [SSIPSession.Action]
    var session: SSIPSession
    var returnsSession = true
}

/// What the SSIP connection's writer hands the pipeline, in order.
public enum SSIPOutput: Sendable {
    /// A reply or an event, for the client.
    case reply(SSIPReply)
    /// The reader's last reply to a line is written: the session goes back to the event loop
    /// (`SSIPSessionHandler`), with the hold of its message's events if it queued one. Never
    /// written to the socket.
    case answered(SSIPSession, heldEvents: UInt64?)

    /// The reply or event, if this is one.
    var reply: SSIPReply? {
        if case .reply(let reply) = self { return reply }
        return nil
    }

    /// Only index marks may be dropped for a late reader.
    var isProgress: Bool {
        reply?.code == SSIPEvents.indexMarkCode
    }
}

/// What the router leaves for one connection's session handler, which reads it on the event loop:
/// the settings other connections changed for it (`SET all …`, `SET <its id> …`), applied before
/// its next line; and how many of its messages have not had their last event yet.
final class SSIPChannelLink: Sendable {
    private let changes = Mutex<[SSIPSettingChange]>([])
    private let messagesNotEnded = Atomic<Int>(0)

    func append(_ change: SSIPSettingChange) {
        changes.withLock { $0.append(change) }
    }

    func take() -> [SSIPSettingChange] {
        changes.withLock { changes in
            guard !changes.isEmpty else { return [] }
            defer { changes = [] }
            return changes
        }
    }

    /// Set by the router whenever the connection's messages change: from the step that posts one
    /// (before the reader's reply to its SPEAK, so before the next line is answered) to its last event.
    func setMessagesNotEnded(_ count: Int) {
        messagesNotEnded.store(count, ordering: .releasing)
    }

    /// Whether the connection has a message that may still be waiting or speaking. When it has
    /// none, a STOP or CANCEL of its own has nothing to end.
    var hasMessagesNotEnded: Bool {
        messagesNotEnded.load(ordering: .acquiring) > 0
    }
}

extension SSIPSession.Action {
    /// Whether the action only writes a reply: no speech call, no other connection.
    var isReply: Bool {
        if case .reply = self { return true }
        return false
    }

    /// A STOP's or CANCEL's effect, its reply already written: it needs the speech API but not the
    /// session, nor anything written after it.
    var isAnsweredStop: Bool {
        switch self {
        case .control(.stop, _, reply: nil), .control(.cancel, _, reply: nil): true
        default: false
        }
    }

    /// An answered STOP's or CANCEL's effect on `client`'s own messages only.
    func isAnsweredStop(onlyOf client: ClientID) -> Bool {
        guard isAnsweredStop, case .control(_, .client(let scope), _) = self else { return false }
        return scope == client
    }
}
