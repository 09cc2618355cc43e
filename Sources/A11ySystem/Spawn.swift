// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// posix_spawn with the standard descriptors redirected to files: how a11ysay starts the daemon
/// and how tests start programs (Foundation's Process hung in waitUntilExit on this platform).
public enum Spawn {
    /// Where a standard descriptor goes.
    public enum Redirection: Sendable {
        case devNull
        /// Truncated, or appended to, created 0600 if missing.
        case file(String, append: Bool)
        /// The same as stdout.
        case stdout
        /// This descriptor of the caller's (a socket pair's end, say).
        case descriptor(Int32)
        /// Whatever the caller has there.
        case inherited
    }

    /// posix_spawn's error: the program could not be started.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let executable: String
        public let errno: Errno
        public var description: String { "cannot start \(executable): \(errno)" }
    }

    /// Starts `executable`, shown as `argv0` (default: its path). `newSession` detaches it from the
    /// terminal and from a Ctrl-C aimed at the caller; it and `defaultSignals` start it with default
    /// signal dispositions and an empty mask, whatever the caller's threads had.
    public static func start(
        _ executable: String, _ arguments: [String], argv0: String? = nil, environment: [String: String],
        stdin: Redirection = .devNull, stdout: Redirection, stderr: Redirection,
        newSession: Bool = false, defaultSignals: Bool = false
    ) throws(Failure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, redirection) in [(Int32(0), stdin), (Int32(1), stdout), (Int32(2), stderr)] {
            switch redirection {
            case .devNull:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path, let append):
                posix_spawn_file_actions_addopen(
                    &actions, descriptor, path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0o600)
            case .stdout: posix_spawn_file_actions_adddup2(&actions, 1, descriptor)
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, descriptor)
            case .inherited: break
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if newSession || defaultSignals {
            var defaults = sigset_t()
            sigfillset(&defaults)
            var empty = sigset_t()
            sigemptyset(&empty)
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            posix_spawnattr_setsigmask(&attributes, &empty)
            posix_spawnattr_setflags(
                &attributes, Int16((newSession ? posixSpawnSetsid : 0) | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        }
        let argv = ([argv0 ?? executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw Failure(executable: executable, errno: Errno(rawValue: result))
        }
        return pid
    }

    /// glibc's POSIX_SPAWN_SETSID (2.26 and later), hidden from Swift behind _GNU_SOURCE.
    private static let posixSpawnSetsid: Int32 = 0x80

    /// The exit code, or 128 + the signal that ended it (as a shell reports it).
    public static func exitCode(fromWaitStatus status: Int32) -> Int32 {
        status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
