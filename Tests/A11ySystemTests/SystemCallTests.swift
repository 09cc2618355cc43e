// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Glibc
import SystemPackage
import Testing

/// The one EINTR loop: a call interrupted by a signal is made again, any other failure is its Errno.
@Suite struct SystemCallTests {
    /// A stand-in system call: fails with each errno of `failures` in turn, then returns `success`.
    final class Scripted {
        var failures: [CInt]
        var calls = 0
        init(failing failures: [CInt]) { self.failures = failures }
        func call(success: CInt = 7) -> CInt {
            calls += 1
            guard !failures.isEmpty else { return success }
            errno = failures.removeFirst()
            return -1
        }
    }

    @Test(arguments: [0, 1, 3])
    func anInterruptedCallIsMadeAgainUntilItSucceeds(interruptions: Int) throws {
        let scripted = Scripted(failing: Array(repeating: EINTR, count: interruptions))
        #expect(try SystemCall.retryingOnInterrupt { scripted.call() } == 7)
        #expect(scripted.calls == interruptions + 1)
    }

    @Test func anotherFailureIsThrownAsItsErrnoAfterOneCall() {
        let scripted = Scripted(failing: [EINTR, EACCES, EINTR])
        #expect(throws: Errno.permissionDenied) { try SystemCall.retryingOnInterrupt { scripted.call() } }
        #expect(scripted.calls == 2, "retried the EINTR, not the EACCES")
    }

    @Test func aNegativeResultOtherThanMinusOneIsAResult() throws {
        // Only -1 means failure (nice(2) and the like return other negatives).
        #expect(try SystemCall.retryingOnInterrupt { CInt(-2) } == -2)
    }

    @Test func aRealCallFailsWithItsErrno() {
        var status: CInt = 0
        // No such child: ECHILD, not retried.
        #expect(throws: Errno.noChildProcess) { try SystemCall.retryingOnInterrupt { waitpid(-1, &status, WNOHANG) } }
    }
}
