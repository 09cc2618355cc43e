// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Foundation
import Glibc
import SystemPackage
import Testing

/// The bounded reader and folders, on real files in a folder of each test's own.
@Suite final class TextFileTests {
    let folder: String

    init() throws {
        var template = Array("/tmp/a11y-textfile-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        folder = String(cString: try #require(made))
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    private func write(_ name: String, _ bytes: [UInt8]) -> String {
        let path = FilePath(folder).appending(name).string
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        return path
    }

    @Test func readsASmallUTF8FileAndSaysNilForNoFile() throws {
        let path = write("a.toml", Array("rate = 1 # é\n".utf8))
        #expect(try TextFile.read(path, limit: 1024) == "rate = 1 # é\n")
        #expect(try TextFile.read(FilePath(folder).appending("missing").string, limit: 1024) == nil)
        #expect(try TextFile.read(FilePath(path).appending("below-a-file").string, limit: 1024) == nil, "ENOTDIR is no file too")
    }

    @Test func refusesWhatIsTooLargeNotUTF8OrNotARegularFile() throws {
        let large = write("large", [UInt8](repeating: 0x61, count: 5000))
        #expect(throws: TextFile.Failure.largerThan(4096)) { try TextFile.read(large, limit: 4096) }
        #expect(try TextFile.read(large, limit: 5000)?.utf8.count == 5000, "the limit itself is allowed")
        let latin1 = write("latin1", [0x63, 0x61, 0x66, 0xE9])
        #expect(throws: TextFile.Failure.notUTF8) { try TextFile.read(latin1, limit: 1024) }
        #expect(try TextFile.bytes(latin1, limit: 1024) == [0x63, 0x61, 0x66, 0xE9])
        #expect(throws: TextFile.Failure.notARegularFile) { try TextFile.read(folder, limit: 1024) }
        let fifo = FilePath(folder).appending("fifo").string
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opened without blocking and refused before any read: a FIFO with no writer never ends.
        #expect(throws: TextFile.Failure.notARegularFile) { try TextFile.read(fifo, limit: 1024) }
    }

    /// A file that exists but cannot be opened keeps the system's reason, typed: what a caller
    /// tells apart (and the text it shows is strerror's).
    @Test func anUnopenableFileKeepsItsErrno() throws {
        let loop = FilePath(folder).appending("loop").string
        #expect(symlink("loop", loop) == 0)
        let failure = #expect(throws: TextFile.Failure.self) { try TextFile.read(loop, limit: 1024) }
        #expect(failure == .unreadable(.tooManySymbolicLinkLevels))
        guard case .unreadable(let errno) = failure else { return }
        #expect(errno.description == "Too many levels of symbolic links")
        #expect("\(failure!)" == "Too many levels of symbolic links", "said as the system says it, once")
    }

    /// What a refusal says when it ends a sentence (the configuration's error, a Piper voice's problem).
    @Test func eachFailureSaysWhyInWords() {
        #expect([TextFile.Failure.notARegularFile, .largerThan(64), .notUTF8, .unreadable(.permissionDenied)].map(\.description) == [
            "not a regular file", "larger than 64 bytes", "cannot read the file as UTF-8 text", "Permission denied",
        ])
    }

    @Test func directoryMakesMissingParentsAndListsNames() throws {
        let nested = FilePath(folder).appending("x/y/z").string
        try Directory.make(nested)
        try Directory.make(nested)  // already there: fine
        _ = write("x/y/file", [0x31])
        #expect(try Directory.names(in: FilePath(folder).appending("x/y").string).sorted() == ["file", "z"])
        let file = FilePath(folder).appending("x/y/file").string
        #expect(throws: Directory.Failure.self) { try Directory.make(FilePath(file).appending("below").string) }
    }
}
