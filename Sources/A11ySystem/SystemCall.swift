// SPDX-License-Identifier: GPL-3.0-or-later
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// What swift-system's wrappers do inside, for the calls it has no wrapper for (waitpid, flock,
/// send, nanosleep, fsync…): retry while a signal interrupts the call, and the error as an `Errno`.
/// The one place a11yd loops on EINTR; `FileDescriptor`'s calls retry on their own.
public enum SystemCall {
    /// Calls `call` again while it returns -1 with errno EINTR. Its result when it succeeds; when
    /// it fails otherwise, errno, typed.
    public static func retryingOnInterrupt<Result: FixedWidthInteger & SignedInteger>(
        _ call: () -> Result
    ) throws(Errno) -> Result {
        while true {
            let result = call()
            guard result == -1 else { return result }
            let error = lastError
            guard error == .interrupted else { throw error }
        }
    }

    /// errno as the last failed call left it, typed (swift-system's own `Errno.current` is internal).
    public static var lastError: Errno { Errno(rawValue: errno) }

    /// The `Errno` a swift-system call threw: they are declared `throws` but throw nothing else.
    public static func typed<Result>(_ body: () throws -> Result) throws(Errno) -> Result {
        do {
            return try body()
        } catch let error as Errno {
            throw error
        } catch {
            // swift-system documents every throwing call as throwing Errno: a different error is
            // a contract broken, not a condition to handle.
            preconditionFailure("swift-system threw \(error), which is not an Errno")
        }
    }
}
