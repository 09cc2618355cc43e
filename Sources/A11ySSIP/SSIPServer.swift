// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
import Logging
import NIOCore
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// The SSIP front end: speech-dispatcher's socket, one session per connection, over the speech API.
///
/// If something already answers on the path (a running speech-dispatcher) it says so in the log and
/// serves nothing, waiting for shutdown; it never unlinks a live socket. Like the JSON front end it
/// stops accepting on a graceful shutdown, and closes connections once speech's event stream has
/// ended (after the last `finished`) and their last replies are written. The loops are
/// `SocketFrontEnd`'s; what is SSIP's is `SSIPHandler`.
public final class SSIPServer: Service, Sendable {
    public struct Configuration: Sendable {
        /// Longest line accepted; a longer one is answered `500` (a command) or refuses its message.
        public var maximumLineLength = 256 * 1024
        /// Most bytes of one SPEAK body.
        public var maximumMessageBytes = 1024 * 1024
        /// What may wait for a client that does not read: index marks are dropped past the first
        /// limit, and a client that takes nothing for the stall limit is cut off (`Outbox`).
        public var outboxLimits = Outbox<SSIPOutput>.Limits()
        /// How long a queued message's first events wait after its `225`, unless the client's next
        /// command comes first: python3-speechd drops events it gets before it has registered the
        /// message's callbacks (`SSIPRouter.endAnswer`; the time is kept by `SSIPSessionHandler`).
        public var eventsHeldAfterQueued: Duration = .milliseconds(30)
        /// What `GET LANGUAGE` says before a client sets one: speech-dispatcher's built-in default.
        public var defaultLanguage = "en-US"
        /// The priority of a client's messages until it sets one (`SET self PRIORITY`):
        /// speech-dispatcher's built-in default, `message` (config `ssip.default_priority`).
        public var defaultPriority = MessagePriority.message

        public init() {}
    }

    private let frontEnd: SocketFrontEnd<SSIPHandler>

    /// Only clients of `allowedUIDs`, the daemon's own user and root are served. Its connections are
    /// counted in `connectionCount`.
    public init(
        listener: SocketListener, allowedUIDs: [UInt32] = [], connectionCount: ConnectionCount = ConnectionCount(),
        speech: any SpeechControl, configuration: Configuration = .init(), logger: Logger
    ) {
        let router = SSIPRouter(
            speech: speech, limits: configuration.outboxLimits, holdsEventsAfterQueued: configuration.eventsHeldAfterQueued > .zero)
        self.frontEnd = SocketFrontEnd(
            listener: listener, peers: PeerPolicy(allowedUIDs: allowedUIDs), connectionCount: connectionCount,
            logPrefix: "SSIP ", handler: SSIPHandler(speech: speech, router: router, configuration: configuration, logger: logger),
            speech: speech, logger: logger)
    }

    /// Where every SSIP client looks first: `$XDG_RUNTIME_DIR/speech-dispatcher/speechd.sock`
    /// (nil without `XDG_RUNTIME_DIR`).
    public static func defaultPath(environment: [String: String]) -> String? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        return runtime + "/speech-dispatcher/speechd.sock"
    }

    public func run() async throws {
        try await frontEnd.run()
    }
}
