// SPDX-License-Identifier: GPL-3.0-or-later
import SystemPackage

/// Reads the small UTF-8 text files the daemon is given (its configuration, the user's lexicons),
/// bounded: only a regular file is read (a FIFO or a device named by mistake could block or never
/// end), and at most `limit` bytes of it. `bytes` reads a binary file (eSpeak's phoneme tables) the same way.
public enum TextFile {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// It exists but cannot be opened or read: the system's reason.
        case unreadable(Errno)
        /// A directory, FIFO, socket or device.
        case notARegularFile
        case largerThan(Int)
        case notUTF8

        /// Why the file cannot be used, as the end of a sentence ("… cannot be read: Permission denied").
        public var description: String {
            switch self {
            case .unreadable(let why): why.description
            case .notARegularFile: "not a regular file"
            case .largerThan(let limit): "larger than \(limit) bytes"
            case .notUTF8: "cannot read the file as UTF-8 text"
            }
        }
    }

    /// The file's text, or nil when there is no such file.
    public static func read(_ path: String, limit: Int) throws(Failure) -> String? {
        guard let bytes = try bytes(path, limit: limit) else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        return text
    }

    /// The file's bytes, or nil when there is no such file (never `.notUTF8`).
    public static func bytes(_ path: String, limit: Int) throws(Failure) -> [UInt8]? {
        let descriptor: FileDescriptor
        do {
            // Non-blocking: opening a FIFO must not wait for a writer before fstat refuses it.
            descriptor = try SystemCall.typed {
                try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .nonBlocking])
            }
        } catch {
            if error == .noSuchFileOrDirectory || error == .notDirectory { return nil }
            throw .unreadable(error)
        }
        defer { try? descriptor.close() }
        guard let info = try? descriptor.stat(), info.type == .regular else { throw .notARegularFile }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count <= limit {
            let got: Int
            do {
                got = try SystemCall.typed { try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) } }
            } catch {
                throw .unreadable(error)
            }
            if got == 0 { break }
            bytes += chunk[..<got]
        }
        guard bytes.count <= limit else { throw .largerThan(limit) }
        return bytes
    }
}
