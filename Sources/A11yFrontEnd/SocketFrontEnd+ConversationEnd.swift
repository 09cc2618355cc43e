// SPDX-License-Identifier: GPL-3.0-or-later
import NIOCore

/// Ends a connection's reading once a11yd's side of the conversation is over.
///
/// A front end finishes its writer when it has nothing more to send (the client quit, was too slow,
/// or a11yd is stopping); NIO then writes what is queued and shuts the socket's output
/// (`outputClosed`). Nothing read after that could be answered, yet the reader went on waiting
/// for the client's own EOF: a client that stays connected and silent (Orca while a11yd stops)
/// held the connection until the service group cut it after its grace period, and a cut SSIP
/// front end made a11yd exit 1. Closing the input only on `outputClosed`, not when the writer
/// finishes, keeps every queued reply and event: NIO reports it once they are on the wire.
final class EndsReadingWhenOutputCloses: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.outputClosed = event {
            context.close(mode: .input, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}
