/// Paths as strings, the way the daemon names its files: joined, cut to their folder or to their
/// last component. No file system access, no URL parsing.
public enum Path {
    /// `name` inside `folder`: one slash between them however many `folder` ends with;
    /// `name` alone when `folder` is empty.
    public static func joined(_ folder: String, _ name: String) -> String {
        if folder.isEmpty { return name }
        return withoutTrailingSlashes(folder) == "/" ? "/" + name : withoutTrailingSlashes(folder) + "/" + name
    }

    /// The folder `path` is in: "/" for a path at the root (and for "/" itself), "." for a bare
    /// name or an empty path. Trailing slashes name the same file ("a/b/" is in "a").
    public static func parent(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        if trimmed == "/" { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let folder = withoutTrailingSlashes(String(trimmed[..<slash]))
        return folder.isEmpty ? "/" : folder
    }

    /// The last component of `path` ("b" for "a/b" and "a/b/"); "/" for the root, "" for "".
    public static func lastComponent(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        if trimmed == "/" { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `path` without the slashes it ends with, except that the root stays "/".
    static func withoutTrailingSlashes(_ path: String) -> String {
        var result = Substring(path)
        while result.count > 1, result.last == "/" { result.removeLast() }
        return String(result)
    }
}
