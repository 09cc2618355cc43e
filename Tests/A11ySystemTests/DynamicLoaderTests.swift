// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Glibc
import Testing

/// The ELF interpreter, found from /proc/self/auxv and /proc/self/maps (this test runner is
/// dynamically linked, so it has one).
@Suite struct DynamicLoaderTests {
    @Test func theLoaderThisProcessStartedWithIsFoundAndExists() throws {
        let path = try #require(DynamicLoader.path)
        #expect(path.hasPrefix("/") && path.contains("ld-"), "\(path)")
        #expect(access(path, X_OK) == 0, "\(path)")
    }
}
