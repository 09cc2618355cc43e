import A11yProtocol
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The Unix-socket front door: JSON Lines in, replies and events out.
///
/// On shutdown it stops accepting, has the speech service finish every item (so each client
/// hears its `finished`), then closes connections once their last lines are written.
public final class SocketServer: Service {
    public enum Listener: Sendable {
        /// Bind a new socket at this path (removed again at exit).
        case path(String)
        /// A listening socket handed over by systemd (never unlinked by us).
        case inherited(descriptor: CInt, path: String?)
    }

    private let listener: Listener
    private let speech: SpeechService
    private let logger: Logger
    private let onReady: @Sendable () -> Void

    public init(listener: Listener, speech: SpeechService, logger: Logger, onReady: @escaping @Sendable () -> Void = {}) {
        self.listener = listener
        self.speech = speech
        self.logger = logger
        self.onReady = onReady
    }

    public func run() async throws {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<AcceptedConnection> = { channel in
            channel.eventLoop.makeCompletedFuture {
                try AcceptedConnection(
                // Half-closure: finishing our writer flushes what is queued and then sends EOF, so
                // a client knows the daemon is done with it (shutdown, or its items all finished).
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                    wrappingChannelSynchronously: channel,
                    configuration: .init(isOutboundHalfClosureEnabled: true)))
            }
        }
        let server: NIOAsyncChannel<AcceptedConnection, Never>
        var ownedPath: String?
        switch listener {
        case .path(let path):
            try SocketFile.prepare(path: path)
            // Owner-only from the first instant: no window where another user could connect.
            let previous = umask(0o077)
            defer { umask(previous) }
            server = try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: initializer)
            chmod(path, 0o600)  // rw for the owner, as documented; umask 077 already kept others out
            ownedPath = path
            logger.info("listening", metadata: ["socket": "\(path)"])
        case .inherited(let descriptor, let path):
            server = try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
            logger.info("listening on the socket systemd passed", metadata: ["fd": "\(descriptor)", "socket": "\(path ?? "?")"])
        }
        defer {
            if let ownedPath { unlink(ownedPath) }
        }
        onReady()

        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection.channel) }
                    }
                }
                // No more connections: finish every item while connections can still hear it.
                await speech.stopAll()
                await speech.router.closeAll()
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
        logger.info("socket closed")
    }

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        let router = speech.router
        let (id, lines) = await router.register()
        let handler = RequestHandler(speech: speech, connection: id, logger: logger)
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        // The writer: every line for this connection, in order, until the router closes it.
                        do {
                            for await line in lines {
                                try await outbound.write(ByteBuffer(string: line + "\n"))
                            }
                            outbound.finish()
                        } catch {
                            await router.remove(id)
                        }
                    }
                    var framer = LineFramer(maximumLength: LineCodec.maximumLineLength)
                    do {
                        for try await buffer in inbound {
                            let batch = framer.append(buffer)
                            if !batch.lines.isEmpty { await handler.handle(lines: batch.lines) }
                            if batch.overflowed {
                                await router.send(
                                    .failure(.init(.lineTooLong, "a line exceeded \(LineCodec.maximumLineLength) bytes and was ignored"), id: nil),
                                    to: id)
                            }
                        }
                        // A last line without a newline still counts.
                        if let last = framer.finish() { await handler.handle(lines: [last]) }
                    } catch {
                        logger.debug("connection read ended", metadata: ["connection": "\(id)", "error": "\(error)"])
                    }
                    await router.stoppedReading(id)
                }
            }
        } catch {
            logger.debug("connection ended", metadata: ["connection": "\(id)", "error": "\(error)"])
        }
        await router.remove(id)
    }
}

/// A connection as the accept loop hands it over.
///
/// NIO traps when an `NIOAsyncChannel` is dropped with its writer unfinished, and a connection
/// accepted just as the server closes can be dropped that way, never yielded to the loop (seen
/// with a client that connected as SIGTERM arrived). This finishes the writer in that case; for a
/// served connection `executeThenClose` already finished it and finishing again does nothing.
final class AcceptedConnection: Sendable {
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    init(_ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        self.channel = channel
    }

    deinit {
        channel.outbound.finish()
        channel.channel.close(promise: nil)
    }
}

/// Splits a byte stream into lines, refusing (and skipping) lines longer than the limit.
struct LineFramer {
    let maximumLength: Int
    private var carry: [UInt8] = []
    private var discarding = false

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    mutating func append(_ buffer: ByteBuffer) -> (lines: [Substring], overflowed: Bool) {
        var lines: [Substring] = []
        var overflowed = false
        for byte in buffer.readableBytesView {
            if byte == UInt8(ascii: "\n") {
                if !discarding {
                    lines.append(Substring(String(decoding: carry, as: UTF8.self)))
                }
                carry.removeAll(keepingCapacity: true)
                discarding = false
            } else if !discarding {
                carry.append(byte)
                if carry.count > maximumLength {
                    carry.removeAll()
                    discarding = true
                    overflowed = true
                }
            }
        }
        return (lines, overflowed)
    }

    mutating func finish() -> Substring? {
        defer { carry.removeAll() }
        guard !discarding, !carry.isEmpty else { return nil }
        return Substring(String(decoding: carry, as: UTF8.self))
    }
}

/// The socket's folder and a stale file left by a daemon that died.
enum SocketFile {
    static func prepare(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        guard FileManager.default.fileExists(atPath: path) else { return }
        if SocketProbe.accepts(path: path) {
            throw DaemonError(.alreadyRunning, "another a11yd is already listening on \(path)")
        }
        // Nobody answers: a leftover from a daemon that died. Safe to replace.
        unlink(path)
    }
}

/// Why the daemon could not start or go on.
public struct DaemonError: Error, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let alreadyRunning = Code(rawValue: "already_running")
        public static let badSocketActivation = Code(rawValue: "bad_socket_activation")
        public static let engineUnavailable = Code(rawValue: "engine_unavailable")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
