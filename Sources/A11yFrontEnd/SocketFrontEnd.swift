// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Where a front end listens.
public enum SocketListener: Sendable, Equatable {
    /// Bind a new socket at this path, owner-only (removed again at exit).
    case path(String)
    /// A listening socket handed over by systemd (never unlinked by us).
    case inherited(descriptor: SystemPackage.FileDescriptor, path: String?)
}

/// What every Unix-socket front end does the same way, written once: bind its socket owner-only (or
/// adopt the one systemd passed), admit only allowed users, accept connections until a graceful
/// shutdown, run each connection's conversation, route speech's events while it runs, and close
/// connections once both have ended. The front end brings only its `ConnectionHandler`.
///
/// Speech shuts down before the front ends (the daemon lists it last), so when the event stream ends
/// every `finished` has been routed; only then are connections closed, once their last lines are
/// written.
public struct SocketFrontEnd<Handler: ConnectionHandler>: Sendable {
    public typealias Connection = NIOAsyncChannel<Handler.Inbound, Handler.Outbound>

    public let listener: SocketListener
    public let peers: PeerPolicy
    /// Counts this front end's connections (with the other front ends', for idle exit).
    public let connectionCount: ConnectionCount
    /// Before "listening", "socket closed" and each connection's lines in the log ("" or "SSIP ").
    public let logPrefix: String
    public let logger: Logger
    private let handler: Handler
    private let speech: any SpeechControl
    private let events: AsyncStream<ClientEvent>

    public init(
        listener: SocketListener, peers: PeerPolicy, connectionCount: ConnectionCount = ConnectionCount(), logPrefix: String = "",
        handler: Handler, speech: any SpeechControl, logger: Logger
    ) {
        self.listener = listener
        self.peers = peers
        self.connectionCount = connectionCount
        self.logPrefix = logPrefix
        self.handler = handler
        self.speech = speech
        // Subscribed now, before any client can post, so that no event is missed.
        self.events = speech.events()
        self.logger = logger
    }

    /// Runs until a graceful shutdown (or cancellation). `onReady` is called once the socket listens.
    public func run(onReady: @Sendable () -> Void = {}) async throws {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let peers = peers
        let logger = logger
        let handler = handler
        let initializer: @Sendable (any Channel) -> EventLoopFuture<AcceptedConnection<Handler>> = { channel in
            // Whatever the socket's mode, another user's client is not served.
            peers.admit(channel) { peer in
                logger.warning("refused a client of another user", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
            }.flatMapThrowing {
                let client = ClientID.next()
                try channel.pipeline.syncOperations.addHandler(EndsReadingWhenOutputCloses())
                let link = try handler.setUpChannel(channel.pipeline.syncOperations, for: client)
                // Half-closure: finishing our writer flushes what is queued and then sends EOF.
                return AcceptedConnection(client: client, link: link, channel: try Connection(
                    wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true)))
            }
        }
        let server: NIOAsyncChannel<AcceptedConnection<Handler>, Never>
        var ownedPath: String?
        switch listener {
        case .path(let path):
            guard try SocketFile.prepare(path: path) else {
                try await handler.socketTaken(at: path)
                return
            }
            // Bound under a private name, made 0600, then linked to its path: the path never shows
            // another mode, no process-wide umask is touched (both front ends bind at once), and
            // a daemon that lost a start-up race finds the path taken rather than replacing it.
            let staging = try SocketFile.stagingPath(for: path)
            unlink(staging)
            server = try await bootstrap.bind(unixDomainSocketPath: staging, childChannelInitializer: initializer)
            chmod(staging, 0o600)
            let linked: Errno? = link(staging, path) == 0 ? nil : SystemCall.lastError
            unlink(staging)
            if let linked {
                try? await server.channel.close()
                if linked == .fileExists {
                    try await handler.socketTaken(at: path)
                    return
                }
                throw SocketFileError(path: path, errno: linked)
            }
            ownedPath = path
            logger.info("\(logPrefix)listening", metadata: ["socket": "\(path)"])
        case .inherited(let descriptor, let path):
            server = try await bootstrap.bind(descriptor.rawValue, childChannelInitializer: initializer)
            logger.info("\(logPrefix)listening on the socket systemd passed", metadata: ["fd": "\(descriptor.rawValue)", "socket": "\(path ?? "?")"])
        }
        defer {
            if let ownedPath { unlink(ownedPath) }
        }
        onReady()

        let connectionCount = connectionCount
        let events = events
        try await withThrowingDiscardingTaskGroup { connections in
            // The front door: accepting, and routing events, both end before connections are closed.
            try await withThrowingDiscardingTaskGroup { frontDoor in
                frontDoor.addTask { for await event in events { await handler.route(event) } }
                try await withGracefulShutdownHandler {
                    try await server.executeThenClose { accepted in
                        for try await connection in accepted {
                            connectionCount.opened()
                            connections.addTask {
                                await serve(connection.channel, client: connection.client, link: connection.link)
                                connectionCount.closed()
                            }
                        }
                    }
                } onGracefulShutdown: {
                    server.channel.close(promise: nil)
                }
            }
            await handler.closeAll()
        }
        logger.info("\(logPrefix)socket closed")
    }

    /// One connection, until it has ended both ways: every front end's connection loop.
    ///
    /// Two halves. The writer drains the client's outbox to the socket until the handler finishes
    /// it, then finishes our output: NIO writes what is queued and shuts the socket's output, and
    /// `EndsReadingWhenOutputCloses` ends the reader. A writer that cannot go on (the client took
    /// nothing for the stall limit, or the socket failed) closes the connection at once, unwritten
    /// messages and all, which ends the reader too. The reader answers each value once the client's
    /// answers have room (a client that sends without reading is held up by its own socket, not by
    /// our memory); once it ends, for whatever reason, the handler is told the client sends nothing
    /// more, and speech that the client left (`SpeechControl.clientLeft`: what its own pause held
    /// ends, since nobody can resume it).
    private func serve(_ channel: Connection, client: ClientID, link: Handler.ChannelLink) async {
        let opened = await handler.open(client, link: link)
        let outbox = opened.outbox
        var conversation = opened.conversation
        let handler = handler
        let logger = logger
        let logPrefix = logPrefix
        do {
            try await channel.executeThenClose { inbound, outbound in
                await withDiscardingTaskGroup { group in
                    group.addTask {
                        do {
                            try await outbox.drain { try await outbound.write($0) }
                            // The handler finished the outbox and all of it is written: end our side
                            // (EndsReadingWhenOutputCloses then ends the reader).
                            outbound.finish()
                        } catch {
                            if let stalled = error as? Outbox<Handler.Outbound>.Stalled {
                                logger.warning("\(logPrefix)client cut off: \(stalled)", metadata: ["client": "\(client)"])
                            } else {
                                logger.debug("\(logPrefix)write failed", metadata: ["client": "\(client)", "error": "\(error)"])
                            }
                            // Nothing more can be written to it: close now, which ends the reader.
                            await handler.close(client)
                            channel.channel.close(promise: nil)
                        }
                    }
                    do {
                        for try await value in inbound {
                            // Backpressure: nothing more is read while this client's answers wait unread.
                            await outbox.waitForRoom()
                            guard await handler.handle(value: value, conversation: &conversation) else { break }
                        }
                    } catch {
                        logger.debug("\(logPrefix)read ended", metadata: ["client": "\(client)", "error": "\(error)"])
                    }
                    // However it ended (EOF, QUIT, a read error, cut off), the client can ask
                    // nothing more: nothing may wait on it.
                    await handler.stoppedSending(client, conversation: &conversation)
                    await speech.clientLeft(client)
                }
            }
        } catch {
            logger.debug("\(logPrefix)connection ended", metadata: ["client": "\(client)", "error": "\(error)"])
        }
        await handler.close(client)
    }
}

/// A connection as the accept loop hands it over.
///
/// NIO traps when an `NIOAsyncChannel` is dropped with its writer unfinished, and a connection
/// accepted just as the server closes can be dropped that way, never yielded to the loop (seen
/// with a client that connected as SIGTERM arrived). This finishes the writer in that case; for a
/// served connection `executeThenClose` already finished it and finishing again does nothing.
public final class AcceptedConnection<Handler: ConnectionHandler>: Sendable {
    public let client: ClientID
    public let link: Handler.ChannelLink
    public let channel: NIOAsyncChannel<Handler.Inbound, Handler.Outbound>

    init(client: ClientID, link: Handler.ChannelLink, channel: NIOAsyncChannel<Handler.Inbound, Handler.Outbound>) {
        self.client = client
        self.link = link
        self.channel = channel
    }

    deinit {
        channel.outbound.finish()
        channel.channel.close(promise: nil)
    }
}

/// The socket's folder, and what is already at its path.
public enum SocketFile {
    /// Makes the missing folders (0700) and clears a stale socket file. Returns false when a live
    /// server answers at `path`: its socket is left alone.
    public static func prepare(path: String) throws -> Bool {
        try Directory.make(FilePath(path).folder.string, mode: 0o700)
        var status = stat()
        guard lstat(path, &status) == 0 else { return true }
        if SocketProbe.accepts(path: path) { return false }
        // Nobody answers: a leftover of a server that died. Safe to replace.
        unlink(path)
        return true
    }

    /// A name beside `path`, of this process, under which the socket is bound before it is linked
    /// to `path`.
    public static func stagingPath(for path: String) throws -> String {
        let socket = FilePath(path)
        let name = socket.lastComponent?.string ?? "socket"
        let staging = socket.folder.appending(".\(name).\(getpid())").string
        guard UnixSocketAddress(path: staging) != nil else {
            throw SocketFileError(path: path, errno: .fileNameTooLong)
        }
        return staging
    }
}

/// The socket could not be put at its path.
public struct SocketFileError: Error, CustomStringConvertible {
    public var path: String
    public var errno: Errno

    public var description: String {
        "cannot create the socket \(path): \(errno)"
    }
}
