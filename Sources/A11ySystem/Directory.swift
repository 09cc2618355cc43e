// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// The folders a11yd and a11ysay read and make (the user's lexicons, the sockets' and the log's
/// folders), over opendir(3) and mkdir(2).
public enum Directory {
    /// A folder that could not be listed or made, and the system's reason.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Operation: Sendable, Equatable { case list, make }
        public let operation: Operation
        public let path: String
        public let errno: Errno

        public init(_ operation: Operation, path: String, errno: Errno) {
            self.operation = operation
            self.path = path
            self.errno = errno
        }

        public var description: String {
            "cannot \(operation == .list ? "list" : "create") \(path): \(errno)"
        }
    }

    /// The names in `folder`, hidden ones included but not "." and "..", in the order the file
    /// system gives them (callers sort).
    public static func names(in folder: String) throws(Failure) -> [String] {
        guard let stream = opendir(folder) else { throw Failure(.list, path: folder, errno: SystemCall.lastError) }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw Failure(.list, path: folder, errno: SystemCall.lastError) }
                return names
            }
            // d_name is a fixed C array, NUL-terminated within it.
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Makes `folder` and its missing parents (`mkdir -p`) with `mode` (less the umask); folders that
    /// already exist are left as they are. Fails on the first one that cannot be made, naming it.
    public static func make(_ folder: String, mode: mode_t = 0o777) throws(Failure) {
        let whole = FilePath(folder)
        var made = FilePath(root: whole.root)
        for component in whole.components {
            made.append(component)
            let path = made.string
            guard mkdir(path, mode) != 0 else { continue }
            let error = SystemCall.lastError
            guard error == .fileExists else { throw Failure(.make, path: path, errno: error) }
            // Something by that name already: fine if it is a folder (or a link to one).
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw Failure(.make, path: path, errno: .notDirectory) }
        }
    }
}
