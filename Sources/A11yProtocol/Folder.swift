#if canImport(Glibc)
import Glibc
#endif

/// Folders of absolute paths, without Foundation: where the socket lives (daemon) and where the
/// autospawn lock and log go (a11ysay).
public enum Folder {
    /// A folder that could not be made, and why.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let folder: String
        public let errno: Int32
        public var description: String { "cannot create \(folder): \(String(cString: strerror(errno)))" }
    }

    /// The folder `path` is in ("/" for a path at the root, "." for a bare name).
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Creates `folder` and its missing parents, owner-only (0700); existing ones are left as they are.
    public static func make(_ folder: String) throws(Failure) {
        var path = ""
        for component in folder.split(separator: "/", omittingEmptySubsequences: true) {
            path += "/" + component
            if mkdir(path, 0o700) != 0, errno != EEXIST { throw Failure(folder: path, errno: errno) }
        }
    }
}
