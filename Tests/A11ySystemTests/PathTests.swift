// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Testing

@Suite struct PathTests {
    @Test(arguments: [
        ("/home/a", "b", "/home/a/b"), ("/home/a//", "b", "/home/a/b"), ("/", "b", "/b"), ("//", "b", "/b"),
        ("", "b", "b"), ("a", "b", "a/b"),
    ])
    func joinedPutsOneSlashBetween(folder: String, name: String, expected: String) {
        #expect(Path.joined(folder, name) == expected)
    }

    @Test(arguments: [
        ("/a/b/c.toml", "/a/b"), ("/a/b/", "/a"), ("/a", "/"), ("/", "/"), ("a", "."), ("", "."), ("a//b", "a"),
    ])
    func parentIsTheFolderAPathIsIn(path: String, expected: String) {
        #expect(Path.parent(of: path) == expected)
    }

    @Test(arguments: [("a/b", "b"), ("a/b/", "b"), ("/", "/"), ("", ""), ("name", "name")])
    func lastComponentIsTheName(path: String, expected: String) {
        #expect(Path.lastComponent(of: path) == expected)
    }
}
