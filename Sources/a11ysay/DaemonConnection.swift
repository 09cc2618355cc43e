// SPDX-License-Identifier: GPL-3.0-or-later
import A11yProtocol
import A11ySystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// One JSON Lines connection to the daemon, blocking: a11ysay sends one line and reads a few, so
/// it needs no event loop and no threads.
struct DaemonConnection: ~Copyable {
    /// Why the connection could not be made: connect(2)'s errno.
    struct Refused: Error, CustomStringConvertible {
        var errno: Errno
        var description: String { errno.description }
    }

    /// Why the exchange ended before its end.
    enum Lost: Error, CustomStringConvertible {
        /// read(2) or send(2) failed.
        case system(Errno)
        case lineTooLong(limit: Int)

        var description: String {
            switch self {
            case .system(let errno): errno.description
            case .lineTooLong(let limit): "the daemon sent a line longer than \(limit) bytes"
            }
        }
    }

    /// Replies can carry rendered audio (2 minutes of base64 PCM is about 7 MB).
    static let maximumLineLength = 64 << 20

    private let descriptor: FileDescriptor

    init(path: String) throws(Refused) {
        guard let address = UnixSocketAddress(path: path) else { throw Refused(errno: .fileNameTooLong) }
        let raw = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw Refused(errno: SystemCall.lastError) }
        let descriptor = FileDescriptor(rawValue: raw)
        // Not retried on EINTR: an interrupted connect(2) goes on connecting, and a second call fails.
        guard address.withSockaddr({ connect(raw, $0, $1) }) == 0 else {
            let error = SystemCall.lastError
            try? descriptor.close()
            throw Refused(errno: error)
        }
        self.descriptor = descriptor
    }

    deinit { try? descriptor.close() }

    /// Sends `request`, then hands every message the daemon sends to `receive` until it returns
    /// false or the daemon closes the connection.
    func exchange(_ request: RequestLine, receive: (ServerMessage) throws -> Bool) throws {
        try write(RequestWriter.line(request))
        var pending: [UInt8] = []
        // Uninitialised, not an Array: zeroing 64 KiB was 65 K of the 71 K instructions a11ysay ran
        // once its post had left (callgrind).
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count: Int
            do {
                count = try SystemCall.typed { try descriptor.read(into: chunk) }
            } catch {
                throw Lost.system(error)
            }
            if count == 0 { return }
            var start = pending.count
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[..<count]))
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[..<newline]
                // A post's or a control's reply read by hand (`ReplyReader`: JSONDecoder was half of
                // a11ysay's instructions), anything else by LineCodec.
                let message = try ReplyReader.message(line) ?? LineCodec.decodeMessage(line)
                pending.removeSubrange(...newline)
                start = 0
                if try !receive(message) { return }
            }
            if pending.count > Self.maximumLineLength {
                throw Lost.lineTooLong(limit: Self.maximumLineLength)
            }
        }
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            // send(2), not write(2): MSG_NOSIGNAL, so that a daemon gone is EPIPE and not SIGPIPE.
            let written: Int
            do {
                written = try SystemCall.retryingOnInterrupt {
                    bytes[offset...].withUnsafeBytes { send(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
            } catch {
                throw Lost.system(error)
            }
            offset += written
        }
    }
}
