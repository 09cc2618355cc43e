// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import NIOCore

/// What one front end does with its clients, and nothing else: its framing, its answer to each value
/// a client sends, when its side of a conversation is over, and where speech's events go.
///
/// The loops are `SocketFrontEnd`'s, written once for every front end (as hummingbird's
/// `ServerChildChannel` leaves its server's loop to the server): accepting, admitting the peer,
/// counting the connection, draining the client's `Outbox` to the socket, cutting off a client that
/// stalls or whose socket fails (logged), reading values with backpressure, and telling speech
/// `clientLeft` once the client can ask nothing more, however the conversation ended.
public protocol ConnectionHandler: Sendable {
    /// One value read from a client (a batch of lines, an SSIP line or message).
    associatedtype Inbound: Sendable
    /// One value written to a client (a reply or an event).
    associatedtype Outbound: Sendable
    /// What one conversation keeps from one value to the next (SSIP's session settings). Only the
    /// connection's reader touches it.
    associatedtype Conversation
    /// What a connection's pipeline handlers share with its conversation, made with them (SSIP: the
    /// settings other connections change for it, which its session handler applies on the event
    /// loop, and whether any of its messages is left). `Void` when the pipeline only frames.
    associatedtype ChannelLink: Sendable = Void

    /// Adds the framing to a new connection's pipeline, on its event loop before anything is read:
    /// bytes to `Inbound`, `Outbound` to bytes, and whatever the front end answers there itself.
    func setUpChannel(_ pipeline: ChannelPipeline.SynchronousOperations, for client: ClientID) throws -> ChannelLink

    /// A client connected: the outbox its writer drains until the handler finishes it, and the
    /// conversation its values are answered in.
    func open(_ client: ClientID, link: ChannelLink) async -> (outbox: Outbox<Outbound>, conversation: Conversation)

    /// Answers one value. Returns false when the client ended the conversation (SSIP's `QUIT`):
    /// nothing more is read.
    func handle(value: Inbound, conversation: inout Conversation) async -> Bool

    /// The client will send nothing more (it closed or half-closed its end, ended the conversation,
    /// or was cut off). The handler finishes the client's outbox now, or once what it still owes the
    /// client has been queued (`JSONLinesRouter`: the events of the items it posted): what is queued
    /// is written, then the connection closes.
    func stoppedSending(_ client: ClientID, conversation: inout Conversation) async

    /// The connection is closed, or can no longer be written to: forget the client (finishing its
    /// outbox if it was not).
    func close(_ client: ClientID) async

    /// Hands one of speech's events to the clients it is for.
    func route(_ event: ClientEvent) async

    /// Finishes every client's outbox, at shutdown, once speech's last event is routed: what is
    /// queued is still written.
    func closeAll() async

    /// Something live already answers at the socket's path: throw, or return to serve nothing.
    func socketTaken(at path: String) async throws
}
