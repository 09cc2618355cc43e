// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking client over a Unix socket, with a receive timeout so that a test cannot hang: it
/// writes what a test gives it and reads lines, or everything up to the end. `RawSSIPClient` reads
/// SSIP's replies and events over it; a test that needs a JSON Lines client that misbehaves (one that
/// never reads) uses it as it is. Used by one test at a time (hence unchecked); `offThePool` keeps
/// its waits off Swift's threads.
public class RawSocketClient: @unchecked Sendable {
    /// -1 once closed: closing again (the deinit after `close()`) must not close the number again,
    /// which by then may be another socket's of this process (a server's under test: NIO then
    /// traps on EBADF, as a lane of CI did).
    private var descriptor: Int32
    private var buffer: [UInt8] = []

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

    /// Reads everything the server sends (without keeping it) until it ends the connection; true if
    /// it did within `timeout`.
    public func readsToTheEnd(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count == 0 || (count < 0 && errno == ECONNRESET) { return true }
        }
        return false
    }

    /// One line, with its newline.
    func readLine() throws -> String {
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
