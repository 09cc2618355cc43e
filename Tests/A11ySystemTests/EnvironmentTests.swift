// SPDX-License-Identifier: GPL-3.0-or-later
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

    /// a11ysay's way: one variable read when needed, as the snapshot holds it.
    @Test func aVariableReadsWhatTheSnapshotHolds() {
        setenv("A11Y_SYSTEM_TEST_ONE", "x=y", 1)
        setenv("A11Y_SYSTEM_TEST_EMPTY", "", 1)
        unsetenv("A11Y_SYSTEM_TEST_UNSET")
        let snapshot = Environment.snapshot()
        for name in ["A11Y_SYSTEM_TEST_ONE", "A11Y_SYSTEM_TEST_EMPTY", "A11Y_SYSTEM_TEST_UNSET", "PATH", "HOME"] {
            #expect(Environment.variable(name) == snapshot[name], "\(name)")
        }
        #expect(Environment.variable("A11Y_SYSTEM_TEST_EMPTY") == "", "set but empty is not unset")
        #expect(HomeFolder.current(environment: Environment.variable) == HomeFolder.current(environment: snapshot))
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
