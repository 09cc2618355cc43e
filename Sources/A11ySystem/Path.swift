// SPDX-License-Identifier: GPL-3.0-or-later
import SystemPackage

/// Paths as strings, for the callers not yet moved to swift-system's `FilePath`, which is what
/// does the work here: new code uses `FilePath` (`appending`, `removingLastComponent()`,
/// `lastComponent`) directly. Kept, thin, so that A11yFrontEnd, A11yEngineWorker and A11yDaemon
/// compile unchanged until they move.
public enum Path {
    /// `name` inside `folder`: one slash between them however many `folder` ends with;
    /// `name` alone when `folder` is empty.
    public static func joined(_ folder: String, _ name: String) -> String {
        FilePath(folder).appending(name).string
    }

    /// The folder `path` is in: "/" for a path at the root (and for "/" itself), "." for a bare
    /// name or an empty path. Trailing slashes name the same file ("a/b/" is in "a").
    public static func parent(of path: String) -> String {
        let folder = FilePath(path).removingLastComponent()
        return folder.isEmpty ? "." : folder.string
    }

    /// The last component of `path` ("b" for "a/b" and "a/b/"); "/" for the root, "" for "".
    public static func lastComponent(of path: String) -> String {
        let path = FilePath(path)
        return path.lastComponent?.string ?? path.root?.string ?? ""
    }
}
