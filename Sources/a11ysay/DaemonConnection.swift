import A11yProtocol
import NIOCore
import NIOPosix

/// One JSON Lines connection to the daemon, framed by A11yProtocol's handlers.
struct DaemonConnection {
    let channel: NIOAsyncChannel<LineBatch, RequestLine>

    static func connect(path: String) async throws -> DaemonConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(LineFrameDecoder()), MessageToByteHandler(JSONLineEncoder<RequestLine>()))
                    return try NIOAsyncChannel<LineBatch, RequestLine>(wrappingChannelSynchronously: channel)
                }
            }
        return DaemonConnection(channel: channel)
    }

    /// Sends `request`, then hands every message the daemon sends to `receive` until it returns
    /// false or the daemon closes the connection.
    func exchange(_ request: RequestLine, receive: (ServerMessage) throws -> Bool) async throws {
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(request)
            reading: for try await batch in inbound {
                for line in batch.lines {
                    if try !receive(try LineCodec.decodeMessage(line.readableBytesView)) { break reading }
                }
            }
        }
    }
}
