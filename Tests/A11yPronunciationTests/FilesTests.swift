// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11yPronunciation
import A11ySystem
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Paths, folders and files without Foundation: what LexiconStore and the engine read and write.
@Suite struct FilesTests {
    func temporaryFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("a11yd-files-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: [
        ("/a/b", "c", "/a/b/c"), ("/a/b/", "c", "/a/b/c"), ("/a/b///", "c", "/a/b/c"), ("/", "c", "/c"),
        ("//", "c", "/c"), ("", "c", "c"), ("a", "c", "a/c"), (".", "lexicons", "./lexicons"),
    ])
    func joining(folder: String, name: String, joined: String) {
        #expect(FilePath(folder).appending(name).string == joined)
    }

    @Test(arguments: [
        ("/a/b/c", "/a/b", "c"), ("/a/b/c/", "/a/b", "c"), ("/a//b", "/a", "b"), ("/a", "/", "a"), ("/", "/", nil),
        ("//", "/", nil), ("a/b", "a", "b"), ("b", ".", "b"), ("", ".", nil),
    ])
    func folderAndLastComponent(path: String, folder: String, last: String?) {
        #expect(FilePath(path).folder.string == folder, "folder of '\(path)'")
        #expect(FilePath(path).lastComponent?.string == last, "last component of '\(path)'")
    }

    /// For the absolute paths the daemon uses, the same answers as the URL calls they replace.
    @Test(arguments: ["/a/b/c", "/a/b/c/", "/a/b", "/a", "/root/.config/a11yd/lexicon.pls"])
    func absolutePathsAsURLDidThem(path: String) {
        let url = URL(fileURLWithPath: path)
        #expect(FilePath(path).folder.string == url.deletingLastPathComponent().path)
        #expect(FilePath(path).lastComponent?.string == url.lastPathComponent)
        #expect(FilePath(path).appending("x.pls").string == url.appendingPathComponent("x.pls").path)
    }

    @Test func listingSkipsOnlyDotAndDotDot() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["b.pls", "a.pls", ".hidden.pls", "notes.txt"] {
            #expect(FileManager.default.createFile(atPath: folder + "/" + name, contents: Data("x".utf8)))
        }
        try FileManager.default.createDirectory(atPath: folder + "/sub.pls", withIntermediateDirectories: false)
        #expect(try Directory.names(in: folder).sorted() == [".hidden.pls", "a.pls", "b.pls", "notes.txt", "sub.pls"])
        #expect(try Directory.names(in: folder + "/sub.pls") == [])

        let missing = #expect(throws: Directory.Failure.self) { try Directory.names(in: folder + "/none") }
        #expect(missing == Directory.Failure(.list, path: folder + "/none", errno: .noSuchFileOrDirectory))
        #expect(missing?.description == "cannot list \(folder)/none: No such file or directory")
        let notAFolder = #expect(throws: Directory.Failure.self) { try Directory.names(in: folder + "/a.pls") }
        #expect(notAFolder?.errno == .notDirectory)
    }

    @Test func makeCreatesEveryMissingFolderAndAcceptsExistingOnes() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let nested = folder + "/one/two//three/"
        try Directory.make(nested)
        var info = stat()
        #expect(stat(folder + "/one/two/three", &info) == 0 && info.st_mode & S_IFMT == S_IFDIR)
        try Directory.make(nested)
        try Directory.make(folder)
        try Directory.make("/")

        #expect(FileManager.default.createFile(atPath: folder + "/file", contents: nil))
        let inTheWay = #expect(throws: Directory.Failure.self) { try Directory.make(folder + "/file/sub") }
        #expect(inTheWay == Directory.Failure(.make, path: folder + "/file", errno: .notDirectory))
        #expect(inTheWay?.description == "cannot create \(folder)/file: Not a directory")
        let beneathAFile = #expect(throws: Directory.Failure.self) { try Directory.make(folder + "/file/sub/deeper") }
        #expect(beneathAFile?.path == folder + "/file")
    }

    @Test func makeOfARelativePathStaysRelative() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let previous = FileManager.default.currentDirectoryPath
        #expect(chdir(folder) == 0)
        defer { _ = chdir(previous) }
        try Directory.make("x/y")
        #expect(try Directory.names(in: folder + "/x") == ["y"])
    }

    @Test func bytesOfAFileAndTheSameFailuresAsText() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let binary: [UInt8] = [0, 0xff, 0xfe, 10, 0x80]
        #expect(FileManager.default.createFile(atPath: folder + "/bin", contents: Data(binary)))
        #expect(try TextFile.bytes(folder + "/bin", limit: 5) == binary)
        #expect(throws: TextFile.Failure.notUTF8) { try TextFile.read(folder + "/bin", limit: 5) }
        #expect(throws: TextFile.Failure.largerThan(4)) { try TextFile.bytes(folder + "/bin", limit: 4) }
        #expect(try TextFile.bytes(folder + "/none", limit: 5) == nil)
        #expect(try TextFile.bytes(folder + "/bin/below", limit: 5) == nil)
        #expect(throws: TextFile.Failure.notARegularFile) { try TextFile.bytes(folder, limit: 5) }
        #expect(symlink("loop", folder + "/loop") == 0)
        #expect(throws: TextFile.Failure.unreadable(.tooManySymbolicLinkLevels)) {
            try TextFile.bytes(folder + "/loop", limit: 5)
        }
    }

    /// The lexicon folder as LexiconStore reads it: only `*.pls` that are not hidden, by name; the
    /// user's file first. Its errors for unreadable files and for a folder it cannot make.
    @Test func theStoreReadsVisiblePLSFilesByNameAndSaysWhatFailed() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = LexiconStore(location: .init(configurationDirectory: folder + "/"))
        #expect(store.location == .init(userFile: folder + "/lexicon.pls", directory: folder + "/lexicons"))
        #expect(store.reload().isEmpty, "no folder, no user file: nothing, no error")

        func lexicon(_ grapheme: String) -> String {
            PLS.document(Lexicon(entries: [LexiconEntry(grapheme: grapheme, pronunciation: .alias(grapheme + "!"))]))
        }
        try Directory.make(folder + "/lexicons")
        for name in ["b.pls", "a.pls", ".hidden.pls", "notes.txt", "c.pls.bak"] {
            try LexiconStore.writeAtomically(lexicon(name), to: folder + "/lexicons/" + name)
        }
        try LexiconStore.writeAtomically(lexicon("user"), to: folder + "/lexicon.pls")
        #expect(store.reload().isEmpty)
        #expect(store.sources.map(\.path) == [folder + "/lexicon.pls", folder + "/lexicons/a.pls", folder + "/lexicons/b.pls"])
        #expect(try Directory.names(in: folder + "/lexicons").filter { $0.hasSuffix(".tmp") } == [], "no temporary file left")

        // A file written into folders that do not exist yet makes them.
        try LexiconStore.writeAtomically(lexicon("deep"), to: folder + "/new/deeper/lexicon.pls")
        #expect(try LexiconStore.read(folder + "/new/deeper/lexicon.pls")?.entries.count == 1)

        #expect(try LexiconStore.read(folder + "/none.pls") == nil, "a missing file is no lexicon, not an error")
        let directory = #expect(throws: LexiconFileError.self) { try LexiconStore.read(folder + "/lexicons") }
        #expect(directory?.description == "\(folder)/lexicons: is not a regular file")
        #expect(symlink("loop.pls", folder + "/loop.pls") == 0)
        let loop = #expect(throws: LexiconFileError.self) { try LexiconStore.read(folder + "/loop.pls") }
        #expect(loop?.description == "\(folder)/loop.pls: cannot be read: Too many levels of symbolic links")
        let blocked = #expect(throws: LexiconFileError.self) {
            try LexiconStore.writeAtomically(lexicon("x"), to: folder + "/lexicons/a.pls/inside/lexicon.pls")
        }
        #expect(blocked?.description == "\(folder)/lexicons/a.pls/inside/lexicon.pls: cannot create \(folder)/lexicons/a.pls: Not a directory")
    }
}
