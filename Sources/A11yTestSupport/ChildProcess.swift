// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A program a test started, stdout and stderr in files, that any task can poll: the exit status,
/// once reaped, is kept behind a lock. Killed if still running when dropped.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    public let logPath: String
    public let errorPath: String
    private let status = Mutex<Int32?>(nil)

    /// stdout goes to `logPath`; stderr too unless `errorPath` is given.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String], logPath: String,
        errorPath: String? = nil
    ) throws {
        do {
            pid = try Spawn.start(
                executable, arguments, environment: environment, stdout: .file(logPath, append: false),
                stderr: errorPath.map { .file($0, append: false) } ?? .stdout)
        } catch {
            throw TestFailure(error.description)
        }
        self.logPath = logPath
        self.errorPath = errorPath ?? logPath
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            _ = try? SystemCall.retryingOnInterrupt { waitpid(pid, &raw, 0) }
        }
    }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    public var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    public var isRunning: Bool {
        status.withLock { status in
            if status != nil { return false }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid {
                status = Spawn.exitCode(fromWaitStatus: raw)
                return false
            }
            if result < 0 {
                status = -1
                return false
            }
            return true
        }
    }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for the exit (up to `timeout`) and returns the exit status (128+N for signal N).
    public func waitForExit(timeout: Duration = .seconds(15)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { throw TestFailure("pid \(pid) still running after \(timeout); log:\n\(log)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return status.withLock { $0 } ?? -1
    }

    /// Waits until the log contains `text`.
    public func waitForLog(_ text: String, timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !log.contains(text) {
            guard ContinuousClock.now < deadline else { throw TestFailure("no '\(text)' in the log after \(timeout):\n\(log)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

private let runCounter = Atomic<Int>(0)

/// Runs a command to its end; returns status and output (through files, not pipes).
@discardableResult
public func run(
    _ executable: String, _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(120)
) async throws -> (status: Int32, stdout: String, stderr: String) {
    let n = runCounter.add(1, ordering: .relaxed).newValue
    let base = NSTemporaryDirectory() + "a11y-run-\(getpid())-\(n)"
    defer {
        unlink(base + ".out")
        unlink(base + ".err")
    }
    let child = try ChildProcess(executable, arguments, environment: environment, logPath: base + ".out", errorPath: base + ".err")
    let status: Int32
    do {
        status = try await child.waitForExit(timeout: timeout)
    } catch {
        child.signal(SIGKILL)
        throw TestFailure("\(executable) \(arguments) did not finish within \(timeout)")
    }
    return (status, child.log, child.errors)
}
