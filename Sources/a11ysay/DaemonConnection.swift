import A11yProtocol
import NIOCore
import NIOPosix

/// One JSON Lines connection to the daemon.
struct DaemonConnection {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    static func connect(path: String) async throws -> DaemonConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return DaemonConnection(channel: channel)
    }

    /// Sends `requests`, then hands every line the daemon sends to `receive` until it returns false
    /// or the daemon closes the connection.
    func exchange(_ requests: [ClientRequest], receive: (ServerMessage) throws -> Bool) async throws {
        try await channel.executeThenClose { inbound, outbound in
            let text = requests.map { LineCodec.encode($0) + "\n" }.joined()
            try await outbound.write(ByteBuffer(string: text))
            var carry: [UInt8] = []
            reading: for try await buffer in inbound {
                for byte in buffer.readableBytesView {
                    guard byte == UInt8(ascii: "\n") else {
                        carry.append(byte)
                        continue
                    }
                    let line = String(decoding: carry, as: UTF8.self)
                    carry.removeAll(keepingCapacity: true)
                    if try !receive(try LineCodec.decodeMessage(line)) { break reading }
                }
            }
        }
    }
}
