// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import SystemPackage
import Testing

/// What a11yd's callers rely on from swift-system's `FilePath` (the socket's and the configuration's
/// folder, the Piper runtime and voice folders), and the one thing added to it, `folder`. (The
/// suite keeps the name it had when it tested a `Path` facade: Tests/suite-times.tsv marks it `unit`.)
@Suite struct PathTests {
    @Test(arguments: [
        ("/home/a", "b", "/home/a/b"), ("/home/a//", "b", "/home/a/b"), ("/", "b", "/b"), ("//", "b", "/b"),
        ("", "b", "b"), ("a", "b", "a/b"), (".", "venv/bin/python3", "./venv/bin/python3"),
    ])
    func appendingPutsOneSlashBetween(folder: String, name: String, expected: String) {
        #expect(FilePath(folder).appending(name).string == expected)
    }

    /// "." for a bare name (a relative socket or configuration file: its folder is opened and
    /// given Landlock rights), "/" at the root, trailing slashes naming the same file.
    @Test(arguments: [
        ("/a/b/c.toml", "/a/b"), ("/a/b/", "/a"), ("/a", "/"), ("/", "/"), ("a", "."), ("", "."), ("a//b", "a"),
        ("./socket", "."), ("run/a11yd/socket", "run/a11yd"),
    ])
    func folderIsTheFolderAPathIsIn(path: String, expected: String) {
        #expect(FilePath(path).folder.string == expected)
    }

    /// Where `folder` differs from `removingLastComponent()`: only for a bare name.
    @Test func removingTheLastComponentOfABareNameLeavesNothing() {
        #expect(FilePath("a").removingLastComponent().isEmpty)
        #expect(FilePath("a").folder == ".")
    }

    @Test(arguments: [("a/b", "b"), ("a/b/", "b"), ("/", nil), ("", nil), ("name", "name"), ("/run/a11yd/socket", "socket")])
    func lastComponentIsTheName(path: String, expected: String?) {
        #expect(FilePath(path).lastComponent?.string == expected)
    }
}
