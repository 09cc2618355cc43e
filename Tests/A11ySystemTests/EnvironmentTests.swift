import A11ySystem
import Glibc
import Testing

@Suite struct EnvironmentTests {
    @Test func theSnapshotHoldsWhatGetenvSays() {
        setenv("A11Y_SYSTEM_TEST", "a=b=c", 1)
        let snapshot = Environment.snapshot()
        #expect(snapshot["A11Y_SYSTEM_TEST"] == "a=b=c", "split at the first '=' only")
        #expect(snapshot["PATH"] == getenv("PATH").map { String(cString: $0) })
    }

    @Test func homeIsHOMEElseThePasswdEntry() {
        #expect(HomeFolder.current(environment: ["HOME": "/somewhere"]) == "/somewhere")
        let fromPasswd = HomeFolder.fromPasswd(uid: getuid())
        #expect(HomeFolder.current(environment: ["HOME": ""]) == fromPasswd ?? "/")
        // A buffer far too small at first: grown until glibc has room for the entry.
        #expect(HomeFolder.fromPasswd(uid: getuid(), bufferSize: 1) == fromPasswd)
        #expect(HomeFolder.fromPasswd(uid: 0) == "/root")
    }
}
