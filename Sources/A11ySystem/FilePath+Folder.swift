// SPDX-License-Identifier: GPL-3.0-or-later
import SystemPackage

extension FilePath {
    /// The folder this path names a file in: `removingLastComponent()` ("/" at the root, trailing
    /// slashes ignored: "a/b/" is in "a"), but "." rather than an empty path for a bare name. An
    /// empty path opens nothing, so a Landlock rule for it, or the eSpeak data path "" + "/espeak-ng-data",
    /// would silently be wrong for a socket or configuration file named relative to the current folder.
    public var folder: FilePath {
        let folder = removingLastComponent()
        return folder.isEmpty ? "." : folder
    }
}
