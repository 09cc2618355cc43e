import A11yProtocol
import A11ySystem

#if canImport(Glibc)
import Glibc
#endif

/// One JSON Lines connection to the daemon, blocking: a11ysay sends one line and reads a few, so
/// it needs no event loop and no threads.
struct DaemonConnection: ~Copyable {
    /// Why the connection could not be made: connect(2)'s errno.
    struct Refused: Error {
        var errno: Int32
        var description: String { String(cString: strerror(errno)) }
    }

    struct Lost: Error, CustomStringConvertible {
        var description: String
    }

    /// Replies can carry rendered audio (2 minutes of base64 PCM is about 7 MB).
    static let maximumLineLength = 64 << 20

    private let descriptor: Int32

    init(path: String) throws(Refused) {
        guard let address = UnixSocketAddress(path: path) else { throw Refused(errno: ENAMETOOLONG) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Refused(errno: errno) }
        let result = address.withSockaddr { connect(descriptor, $0, $1) }
        guard result == 0 else {
            let error = errno
            close(descriptor)
            throw Refused(errno: error)
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

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
            let count = read(descriptor, chunk.baseAddress, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw Lost(description: String(cString: strerror(errno)))
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
                throw Lost(description: "the daemon sent a line longer than \(Self.maximumLineLength) bytes")
            }
        }
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Lost(description: String(cString: strerror(errno)))
            }
            offset += written
        }
    }
}
