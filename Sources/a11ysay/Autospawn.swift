// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Starting `a11yd` when nothing listens, for machines without systemd (docs/service.md).
///
/// Under a lock (`flock` on `<socket dir>/autospawn.lock`) a11ysay checks the socket again, and only
/// if it still does not accept starts `a11yd --socket PATH` detached (own session, stdin from
/// /dev/null, stdout and stderr appended to `$XDG_STATE_HOME/a11yd/a11yd.log`), then polls the
/// socket every 2 ms until it accepts. A second a11ysay waiting on the lock finds the socket
/// accepting and starts nothing.
enum Autospawn {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// How long to wait for a started daemon to accept.
    static let timeout: Duration = .seconds(5)
    static let pollInterval: Duration = .milliseconds(2)

    /// What the client settings say: nil if autospawn may run, else why not (one line).
    static func disabledReason(environment: (String) -> String?, settings: ClientSettings) -> String? {
        if let value = environment("A11YD_NO_AUTOSPAWN"), !value.isEmpty, value != "0" {
            return "autospawn is off (A11YD_NO_AUTOSPAWN=\(value))"
        }
        if settings.autospawn == false {
            return "autospawn is off (daemon.autospawn = false in \(settings.path))"
        }
        return nil
    }

    /// True when the connect error means "nobody listens there" (rather than, say, permissions).
    static func meansNothingListens(_ error: Errno) -> Bool {
        error == .noSuchFileOrDirectory || error == .connectionRefused
    }

    /// Starts a11yd unless another client does or did; returns once `path` accepts connections.
    /// Returns the pid of the daemon it started, or nil when one was already there.
    @discardableResult
    static func ensureRunning(socketPath path: String, environment: [String: String]) throws -> Int32? {
        let folder = FilePath(path).removingLastComponent()
        try makeFolder(folder.string)
        let lockPath = folder.appending("autospawn.lock").string
        let lock: FileDescriptor
        do {
            lock = try SystemCall.typed {
                try FileDescriptor.open(lockPath, .readWrite, options: [.create, .closeOnExec], permissions: .ownerReadWrite)
            }
        } catch {
            throw Failure(description: "cannot open the lock \(lockPath): \(error)")
        }
        defer { try? lock.close() }  // Also releases the flock.
        // Blocks while another a11ysay starts the daemon; that one gives up after `timeout`.
        do {
            _ = try SystemCall.retryingOnInterrupt { flock(lock.rawValue, LOCK_EX) }
        } catch {
            throw Failure(description: "cannot lock \(lockPath): \(error)")
        }
        // Someone may have started it while we waited for the lock.
        if SocketProbe.accepts(path: path) { return nil }

        let daemon = try findDaemon(environment: environment)
        let logPath = try logFile(environment: environment)
        let pid = try spawn(daemon, arguments: ["--socket", path], logPath: logPath, environment: environment)

        let deadline = ContinuousClock.now + timeout
        while true {
            if SocketProbe.accepts(path: path) { return pid }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw Failure(description: "started \(daemon) but it exited (\(describe(status: status))) before listening on \(path); see \(logPath)")
            }
            if ContinuousClock.now >= deadline {
                throw Failure(description: "started \(daemon) (pid \(pid)) but \(path) did not accept within \(timeout); see \(logPath)")
            }
            sleep(for: pollInterval)
        }
    }

    /// `a11yd` next to this `a11ysay` (as `make install` and `swift build` put them), else on PATH.
    static func findDaemon(environment: [String: String]) throws -> String {
        if let me = readLink("/proc/self/exe") {
            let beside = FilePath(me).removingLastComponent().appending("a11yd").string
            if access(beside, X_OK) == 0 { return beside }
        }
        for folder in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = String(folder) + "/a11yd"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw Failure(description: "cannot find a11yd next to a11ysay or on PATH")
    }

    /// `$XDG_STATE_HOME/a11yd/a11yd.log`, default `~/.local/state/a11yd/a11yd.log`; the folder is created.
    static func logFile(environment: [String: String]) throws -> String {
        let home = HomeFolder.current(environment: environment)
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/state"
        let folder = state + "/a11yd"
        try makeFolder(folder)
        return folder + "/a11yd.log"
    }

    static func makeFolder(_ folder: String) throws {
        do {
            try Directory.make(folder, mode: 0o700)
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// Detached: a session of its own, stdin /dev/null, stdout and stderr appended to the log.
    static func spawn(_ executable: String, arguments: [String], logPath: String, environment: [String: String]) throws -> Int32 {
        // Nothing but stdin, stdout and stderr reaches the daemon: a descriptor a11ysay inherited
        // without close-on-exec (a caller's pipe, say) would otherwise stay open as long as the
        // daemon lives, and whoever reads that pipe would wait for its end forever.
        markDescriptorsCloseOnExec(from: 3)
        var childEnvironment = environment
        // stderr is a file now, not the journal; and no systemd hand-over meant for a11ysay applies.
        for key in ["JOURNAL_STREAM", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES", "NOTIFY_SOCKET"] {
            childEnvironment.removeValue(forKey: key)
        }
        do {
            return try Spawn.start(
                executable, arguments, environment: childEnvironment, stdout: .file(logPath, append: true),
                stderr: .stdout, newSession: true)
        } catch {
            throw Failure(description: error.description)
        }
    }

    static func markDescriptorsCloseOnExec(from lowest: Int32) {
        guard let folder = opendir("/proc/self/fd") else { return }
        defer { closedir(folder) }
        var descriptors: [Int32] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let descriptor = Int32(name), descriptor >= lowest { descriptors.append(descriptor) }
        }
        for descriptor in descriptors where descriptor != dirfd(folder) {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        _ = try? SystemCall.retryingOnInterrupt {
            let result = nanosleep(&request, &remaining)
            request = remaining  // what is left, should a signal have cut it short
            return result
        }
    }

    static func describe(status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exit status \((status >> 8) & 0xff)" }
        return "signal \(signal)"
    }
}

// A small POSIX helper, so that a11ysay needs no Foundation.
extension Autospawn {
    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
