// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
import A11yProtocol
import Logging
import NIOCore
import ServiceLifecycle

/// The JSON Lines front end: a Unix socket, one connection per client, over the speech API.
///
/// It stops accepting on a graceful shutdown. Speech shuts down before it (the daemon lists it
/// after the front ends), so when the event stream ends every `finished` has been routed; then
/// connections are closed once their last lines are written. The loops are `SocketFrontEnd`'s;
/// what is JSON Lines' is `JSONLinesHandler`.
public final class JSONLinesServer: Service, Sendable {
    public struct Configuration: Sendable {
        /// Longest line read; a longer one is dropped as it comes and answered `line_too_long`.
        public var maximumLineLength = LineFrameDecoder.defaultMaximumLength
        /// What may wait for a client that does not read: `word` and `mark` events are dropped past
        /// the first limit, a subscriber's copies of others' events past the second, and a client
        /// that takes nothing for the stall limit is cut off (`Outbox`).
        public var outboxLimits = Outbox<ServerMessage>.Limits()

        public init() {}
    }

    /// Another a11yd already answers on the socket: this one serves nothing.
    public struct SocketTaken: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var description: String { "another a11yd is already listening on \(path)" }
    }

    private let frontEnd: SocketFrontEnd<JSONLinesHandler>
    private let onReady: @Sendable () -> Void

    /// Only clients of `allowedUIDs`, the daemon's own user and root are served. Its connections are
    /// counted in `connectionCount`. `onReady` is called once the socket listens.
    public init(
        listener: SocketListener, allowedUIDs: [UInt32] = [], connectionCount: ConnectionCount = ConnectionCount(),
        speech: any SpeechControl, configuration: Configuration = .init(), logger: Logger,
        onReady: @escaping @Sendable () -> Void = {}
    ) {
        let router = JSONLinesRouter(speech: speech, limits: configuration.outboxLimits, logger: logger)
        self.frontEnd = SocketFrontEnd(
            listener: listener, peers: PeerPolicy(allowedUIDs: allowedUIDs), connectionCount: connectionCount,
            handler: JSONLinesHandler(speech: speech, router: router, maximumLineLength: configuration.maximumLineLength),
            speech: speech, logger: logger)
        self.onReady = onReady
    }

    public func run() async throws {
        try await frontEnd.run(onReady: onReady)
    }
}
