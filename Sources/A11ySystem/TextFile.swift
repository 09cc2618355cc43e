#if canImport(Glibc)
import Glibc
#endif

/// Reads the small UTF-8 text files the daemon is given (its configuration, the user's lexicons),
/// bounded: only a regular file is read (a FIFO or a device named by mistake could block or never
/// end), and at most `limit` bytes of it. `bytes` reads a binary file (eSpeak's phoneme tables) the same way.
public enum TextFile {
    public enum Failure: Error, Sendable, Equatable {
        /// It exists but cannot be opened or read: the system's reason.
        case unreadable(String)
        /// A directory, FIFO, socket or device.
        case notARegularFile
        case largerThan(Int)
        case notUTF8
    }

    /// The file's text, or nil when there is no such file.
    public static func read(_ path: String, limit: Int) throws(Failure) -> String? {
        guard let bytes = try bytes(path, limit: limit) else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        return text
    }

    /// The file's bytes, or nil when there is no such file (never `.notUTF8`).
    public static func bytes(_ path: String, limit: Int) throws(Failure) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw .unreadable(String(cString: strerror(code)))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count <= limit {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(String(cString: strerror(errno)))
            }
            if got == 0 { break }
            bytes += chunk[..<got]
        }
        guard bytes.count <= limit else { throw .largerThan(limit) }
        return bytes
    }
}
