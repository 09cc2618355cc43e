// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import CSeccomp
import Glibc
import Logging
import SystemPackage

/// One running engine worker, seen from a11yd: its pid, and the reader of its stderr. a11yd's end
/// of its channel is handed to the caller at the start (`WorkerLink` makes it a NIO channel).
final class WorkerProcess: Sendable {
    let pid: pid_t
    /// What reads the worker's stderr into a11yd's log.
    private let stderr: WorkerStderrReader

    private init(pid: pid_t, stderr: WorkerStderrReader) {
        self.pid = pid
        self.stderr = stderr
    }

    /// Starts `executable arguments` with one end of a new socket pair as its descriptor 0, stdout
    /// on /dev/null, and stderr on a pipe whose lines `WorkerStderrReader` logs through `logger`
    /// as a11yd's own, naming `engine`. The Swift runtime's crash backtracer is off in the worker:
    /// it would try to exec a program, which the sandbox forbids, and a crash must end quickly.
    /// `environment`: the little else the worker is given (where eSpeak's data is). Returns the
    /// worker and a11yd's end of the socket pair, which the caller owns.
    static func start(
        executable: String, arguments: [String], environment: [String: String] = [:], engine: String = "engine",
        logger: Logger = Logger(label: "a11yd")
    ) throws(WorkerFailure) -> (process: WorkerProcess, channel: Int32) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw WorkerFailure("socketpair: \(SystemCall.lastError.description)")
        }
        defer { close(pair[1]) }
        // Close-on-exec: the worker gets the write end as its descriptor 2 only (posix_spawn's dup2
        // clears the flag there), no other program a11yd starts meanwhile gets either end, and the
        // pipe ends when the worker does.
        var pipe: [Int32] = [-1, -1]
        guard a11y_pipe_cloexec(&pipe) == 0 else {
            close(pair[0])
            throw WorkerFailure("pipe2: \(SystemCall.lastError.description)")
        }
        let pid: pid_t
        do {
            defer { close(pipe[1]) }
            // argv[0] "a11yd": what ps shows, rather than the path it was started by.
            pid = try Spawn.start(
                executable, arguments, argv0: "a11yd",
                environment: environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { _, backtrace in backtrace },
                stdin: .descriptor(pair[1]), stdout: .devNull, stderr: .descriptor(pipe[1]), defaultSignals: true)
        } catch {
            close(pair[0])
            close(pipe[0])
            throw WorkerFailure(error.description)
        }
        guard let reader = WorkerStderrReader.start(descriptor: pipe[0], engine: engine, pid: pid, logger: logger) else {
            close(pair[0])
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = try? SystemCall.retryingOnInterrupt { waitpid(pid, &status, 0) }
            throw WorkerFailure("no thread could be started to read its stderr")
        }
        return (WorkerProcess(pid: pid, stderr: reader), pair[0])
    }

    /// The CPU time the worker has spent, all its threads; nil when it cannot be read (it is gone).
    func cpuTime() -> Duration? {
        var clock = clockid_t()
        guard clock_getcpuclockid(pid, &clock) == 0 else { return nil }
        var time = timespec()
        guard clock_gettime(clock, &time) == 0 else { return nil }
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// Whether one of the worker's threads waits for the machine rather than for a11yd or a lock:
    /// runnable (`R`: for a CPU) or in uninterruptible sleep (`D`: for the disk), as /proc says.
    func waitsForTheMachine() -> Bool {
        guard let threads = try? Directory.names(in: "/proc/\(pid)/task") else { return false }
        return threads.contains { thread in
            (try? TextFile.read("/proc/\(pid)/task/\(thread)/stat", limit: 4096)).flatMap(Self.runState).map { $0 == "R" || $0 == "D" } ?? false
        }
    }

    /// The state letter of a /proc `stat` line: the field after the command name, which is in
    /// parentheses and may itself hold ") ".
    static func runState(ofStat line: String) -> Character? {
        guard let close = line.lastIndex(of: ")") else { return nil }
        return line[line.index(after: close)...].first { $0 != " " }
    }

    /// Kills the worker first if `killing` (else it is expected to exit, its channel closed), and
    /// waits for it: how it ended. Blocks: called on a thread that may.
    func wait(killing: Bool) -> String {
        if killing { kill(pid, SIGKILL) }
        var status: Int32 = 0
        do {
            _ = try SystemCall.retryingOnInterrupt { waitpid(pid, &status, 0) }
        } catch {
            return "its end is unknown (waitpid: \(error))"
        }
        // What it wrote last (a traceback) is logged before how it ended, and its pipe is closed
        // when this returns. Bounded: something the worker started could hold its stderr open.
        _ = stderr.waitForTheEnd(limit: Self.stderrEndLimit)
        let signal = status & 0x7f
        if signal == 0 { return "it exited with status \((status >> 8) & 0xff)" }
        return "it was killed by signal \(signal) (\(Self.signalName(signal)))"
    }

    /// How long `wait` waits for the end of the worker's stderr once the worker is gone.
    static let stderrEndLimit = Duration.seconds(1)

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGSEGV: "SIGSEGV"
        case SIGKILL: "SIGKILL"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGFPE: "SIGFPE"
        case SIGILL: "SIGILL"
        case SIGTERM: "SIGTERM"
        case SIGSYS: "SIGSYS"
        default: "signal \(signal)"
        }
    }
}

struct WorkerFailure: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
