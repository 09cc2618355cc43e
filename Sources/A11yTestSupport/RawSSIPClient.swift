// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking SSIP client over a Unix socket, with a receive timeout so that a test cannot hang.
/// Used by one test at a time (hence unchecked); `offThePool` keeps its waits off Swift's threads.
public final class RawSSIPClient: @unchecked Sendable {
    /// -1 once closed: closing again (the deinit after `close()`) must not close the number again,
    /// which by then may be another socket's of this process (a server's under test: NIO then
    /// traps on EBADF, as a lane of CI did).
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    /// Events (`70x`) read while looking for a reply or another event, oldest first, each whole.
    public private(set) var events: [String] = []

    public init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard let address = UnixSocketAddress(path: path),
            address.withSockaddr({ connect(descriptor, $0, $1) }) == 0
        else { throw TestFailure("cannot connect to \(path)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    /// Ends the connection; later calls do nothing.
    public func close() {
        guard descriptor >= 0 else { return }
        Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
        descriptor = -1
    }

    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else { throw TestFailure("write failed") }
    }

    /// Writes `text` from a thread of its own (it may block until the server reads); `wait()`
    /// on the result returns once it is all written or the socket failed. The thread writes to a
    /// descriptor of its own (a `dup`), so that a `close()` meanwhile ends its writes (the socket is
    /// shut down) and never leaves it writing to a number reused by another socket.
    public func sendFromAnotherThread(_ text: String) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let bytes = Array(text.utf8)
        let own = dup(descriptor)
        Thread.detachNewThread {
            defer { if own >= 0 { Glibc.close(own) } }
            var sent = 0
            while own >= 0, sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { Glibc.send(own, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count <= 0 { break }
                sent += count
            }
            done.signal()
        }
        return done
    }

    /// Sends `line` with CRLF and reads one whole reply.
    public func exchange(_ line: String) throws -> String {
        try send(line + "\r\n")
        return try readReply()
    }

    /// One reply: lines up to the one whose fourth character is a space.
    public func readReply() throws -> String {
        var reply = ""
        while true {
            let line = try readLine()
            reply += line
            let characters = Array(line.utf8)
            if characters.count >= 4, characters[3] == UInt8(ascii: " ") { return reply }
        }
    }

    /// Sends `line` and returns its reply, setting aside the events that come before it (an event
    /// may precede a reply; it never falls inside one).
    public func command(_ line: String) throws -> String {
        try send(line + "\r\n")
        while true {
            let reply = try readReply()
            guard reply.hasPrefix("7") else { return reply }
            events.append(reply)
        }
    }

    /// The first event whose last line is `name` (`"702 END"`) and whose first names `message`, if
    /// given, read within `timeout`; the events before it stay in `events`. Nil when none came.
    public func waitForEvent(_ name: String, message: String? = nil, timeout: Duration = .seconds(20)) throws -> String? {
        let matches = { (event: String) in
            event.hasSuffix(name + "\r\n") && (message.map { event.hasPrefix(name.prefix(3) + "-" + $0 + "\r\n") } ?? true)
        }
        if let index = events.firstIndex(where: matches) { return events.remove(at: index) }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let event = try? readReply() else { continue }
            if matches(event) { return event }
            events.append(event)
        }
        return nil
    }

    /// Whatever comes until the server closes.
    public func readToEnd() throws -> String {
        var rest = buffer
        buffer = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count <= 0 { break }
            rest += chunk[0..<count]
        }
        return String(decoding: rest, as: UTF8.self)
    }

    private func readLine() throws -> String {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[...end]
                buffer.removeFirst(end + 1)
                return String(decoding: line, as: UTF8.self)
            }
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { throw TestFailure("the server closed or did not answer in 5 s") }
            buffer += chunk[0..<count]
        }
    }
}

/// Runs blocking work on a thread of its own, so that a test waiting on a socket never takes one of
/// the few threads the daemon under test runs on.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
