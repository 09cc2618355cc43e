// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11yEngine
import Foundation
import Testing

/// eSpeak's phoneme tables read from disk without Foundation: the same mnemonics as the bytes
/// Foundation reads, and the same error for a missing file and an unreadable one.
@Suite struct PhontabFileTests {
    let installed = "/usr/lib/x86_64-linux-gnu/espeak-ng-data/phontab"

    @Test func theInstalledTablesGiveWhatFoundationsBytesGave() throws {
        let data = try #require(FileManager.default.contents(atPath: installed), "eSpeak-NG's data is installed")
        let list = try EspeakSession.mnemonics(inPhontabAt: installed)
        #expect(list == EspeakSession.parsePhontab([UInt8](data)))
        #expect(list.count > 100 && list.contains("a") && list.contains("S"), "\(list.count) mnemonics")
    }

    @Test(arguments: ["/nonexistent/phontab", "/tmp", "/proc/self/mem/x"])
    func aMissingOrUnreadableFileIsTheEngineFailingWithItsPath(path: String) {
        let error = #expect(throws: SpeechError.self) { try EspeakSession.mnemonics(inPhontabAt: path) }
        #expect(error?.code == .engineFailed)
        #expect(error?.message == "cannot read eSpeak phoneme tables at \(path)")
    }
}
