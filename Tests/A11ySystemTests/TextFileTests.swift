import A11ySystem
import Foundation
import Glibc
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
        let path = Path.joined(folder, name)
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        return path
    }

    @Test func readsASmallUTF8FileAndSaysNilForNoFile() throws {
        let path = write("a.toml", Array("rate = 1 # é\n".utf8))
        #expect(try TextFile.read(path, limit: 1024) == "rate = 1 # é\n")
        #expect(try TextFile.read(Path.joined(folder, "missing"), limit: 1024) == nil)
        #expect(try TextFile.read(Path.joined(path, "below-a-file"), limit: 1024) == nil, "ENOTDIR is no file too")
    }

    @Test func refusesWhatIsTooLargeNotUTF8OrNotARegularFile() throws {
        let large = write("large", [UInt8](repeating: 0x61, count: 5000))
        #expect(throws: TextFile.Failure.largerThan(4096)) { try TextFile.read(large, limit: 4096) }
        #expect(try TextFile.read(large, limit: 5000)?.utf8.count == 5000, "the limit itself is allowed")
        let latin1 = write("latin1", [0x63, 0x61, 0x66, 0xE9])
        #expect(throws: TextFile.Failure.notUTF8) { try TextFile.read(latin1, limit: 1024) }
        #expect(try TextFile.bytes(latin1, limit: 1024) == [0x63, 0x61, 0x66, 0xE9])
        #expect(throws: TextFile.Failure.notARegularFile) { try TextFile.read(folder, limit: 1024) }
        let fifo = Path.joined(folder, "fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // Opened without blocking and refused before any read: a FIFO with no writer never ends.
        #expect(throws: TextFile.Failure.notARegularFile) { try TextFile.read(fifo, limit: 1024) }
    }

    @Test func directoryMakesMissingParentsAndListsNames() throws {
        let nested = Path.joined(folder, "x/y/z")
        try Directory.make(nested)
        try Directory.make(nested)  // already there: fine
        _ = write("x/y/file", [0x31])
        #expect(try Directory.names(in: Path.joined(folder, "x/y")).sorted() == ["file", "z"])
        let file = Path.joined(folder, "x/y/file")
        #expect(throws: Directory.Failure.self) { try Directory.make(Path.joined(file, "below")) }
    }
}
