import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the idle daemon costs the machine (issue 11): the libraries it maps.
/// The memory itself is measured by `make bench`, not asserted.
@Suite(.serialized) struct DaemonFootprintTests {
    @Test func a11ydLinksNeitherFoundationNorICU() async throws {
        let result = try await run("/usr/bin/ldd", [Binaries.daemon], environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        let libraries = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(libraries.contains { $0.hasPrefix("libespeak-ng") }, "ldd lists the daemon's libraries: \(libraries)")
        for banned in ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so"] {
            #expect(!libraries.contains { $0.hasPrefix(banned) }, "a11yd links \(banned): \(libraries)")
        }
    }
}
