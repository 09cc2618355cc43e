// Runs programs for tests. Foundation's Process hung in waitUntilExit/readDataToEndOfFile on this
// platform, so this is posix_spawn and waitpid.
import A11yCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program started with stdin from /dev/null and stdout and stderr sent to files.
public struct ChildProcess: Sendable {
    public let pid: pid_t
    public let stdoutPath: String
    public let stderrPath: String

    /// Starts `path` with `arguments`; stdout goes to `stdoutPath`, stderr to `stderrPath`
    /// (the same file when `stderrPath` is nil).
    public static func start(
        _ path: String, _ arguments: [String], environment: [String: String],
        stdoutPath: String, stderrPath: String? = nil
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let stderrPath {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, nil, argv, envp)
        guard result == 0 else { throw SpeechError(.internal, "cannot start \(path): errno \(result)") }
        return ChildProcess(pid: child, stdoutPath: stdoutPath, stderrPath: stderrPath ?? stdoutPath)
    }

    /// Waits for the exit status (the code it exited with, or 128 + signal).
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// Waits without blocking a cooperative thread for long: polls every 10 ms up to `timeout`.
    public func wait(timeout: Duration) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                if status & 0x7f == 0 { return (status >> 8) & 0xff }
                return 128 + (status & 0x7f)
            }
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                throw SpeechError(.internal, "process \(pid) did not exit within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    public var standardOutput: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}
