// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import CSeccomp
import Glibc
import DequeModule
import Logging
import NIOCore
import Synchronization
import SystemPackage

/// One running engine worker, seen from a11yd: its pid and a11yd's end of the socket pair.
/// Used by `WorkerEngine`'s link thread only, except `send`, which the link thread and a
/// cancelling consumer may call at once (a lock keeps their frames whole).
final class WorkerProcess: Sendable {
    let pid: pid_t
    /// a11yd's end of the channel.
    let descriptor: Int32
    /// Held while a frame is written, and while the channel is closed; true once it is. A consumer's
    /// cancel may come just as the link thread ends the worker: it then finds the channel closed
    /// instead of sending on the number, which by then may be another descriptor's of a11yd.
    private let sendLock = Mutex<Bool>(false)
    /// Only the link thread reads (`receive`), so only it touches what was read. `Mutex` makes the
    /// class `Sendable` without claiming more than that.
    private let incoming = Mutex(IncomingFrames())

    /// What `receive` has read of the channel and not handed out yet: the bytes of a frame still
    /// arriving, the messages decoded, and the refusal that ends them (after the messages before it).
    private struct IncomingFrames {
        let decoder = NIOSingleStepByteToMessageProcessor(WorkerFrameDecoder())
        var messages = Deque<WorkerMessage>()
        var refusal: (any Error)?

        /// The next message, or nil until more bytes arrive.
        mutating func next() throws -> WorkerMessage? {
            if let message = messages.popFirst() { return message }
            if let refusal { throw refusal }
            return nil
        }

        mutating func append(_ bytes: ByteBuffer) {
            guard refusal == nil else { return }
            do {
                try decoder.process(buffer: bytes) { messages.append($0) }
            } catch {
                refusal = error
            }
        }
    }

    /// What reads the worker's stderr into a11yd's log.
    private let stderr: WorkerStderrReader

    private init(pid: pid_t, descriptor: Int32, stderr: WorkerStderrReader) {
        self.pid = pid
        self.descriptor = descriptor
        self.stderr = stderr
    }

    /// Starts `executable arguments` with one end of a new socket pair as its descriptor 0, stdout
    /// on /dev/null, and stderr on a pipe whose lines `WorkerStderrReader` logs through `logger`
    /// as a11yd's own, naming `engine`. The Swift runtime's crash backtracer is off in the worker:
    /// it would try to exec a program, which the sandbox forbids, and a crash must end quickly.
    /// `environment`: the little else the worker is given (where eSpeak's data is).
    static func start(
        executable: String, arguments: [String], environment: [String: String] = [:], engine: String = "engine",
        logger: Logger = Logger(label: "a11yd")
    ) throws(WorkerFailure) -> WorkerProcess {
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
        return WorkerProcess(pid: pid, descriptor: pair[0], stderr: reader)
    }

    /// Why a message could not be sent.
    struct SendFailure: Error, CustomStringConvertible {
        /// The channel is closed: the worker is gone (else it read nothing for the time allowed).
        var workerGone: Bool
        var description: String
    }

    /// Writes `message` whole, waiting at most `timeout` each time the channel is full; nil, or
    /// why it could not (the worker is gone, or reads nothing: a stopped worker must not hold the
    /// link thread in `send` for ever).
    func send(_ message: WorkerMessage, timeout: Duration) -> SendFailure? {
        let frame = WorkerFrame.encode(message)
        return sendLock.withLock { closed in
            closed ? SendFailure(workerGone: true, description: "its channel is closed") : write(frame, timeout: timeout)
        }
    }

    /// Sends `message` only if that cannot block: not while the link thread is in the middle of a
    /// frame, nor when the channel is full. For a cancel, from whatever thread the consumer left on
    /// (a pool thread must never wait on a worker); the link thread sends it itself otherwise.
    func sendIfReady(_ message: WorkerMessage) -> Bool {
        let frame = WorkerFrame.encode(message)
        return sendLock.withLockIfAvailable { closed in !closed && write(frame, timeout: .zero) == nil } ?? false
    }

    /// Under `sendLock`. A frame cut short by a timeout leaves the channel unusable: the caller
    /// then ends the worker.
    private func write(_ frame: ByteBuffer, timeout: Duration) -> SendFailure? {
        var frame = frame
        while frame.readableBytes > 0 {
            do {
                let sent = try SystemCall.retryingOnInterrupt {
                    frame.withUnsafeReadableBytes {
                        Glibc.send(descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                    }
                }
                guard sent > 0 else { return SendFailure(workerGone: true, description: "send: nothing sent") }
                frame.moveReaderIndex(forwardBy: sent)
                continue
            } catch .resourceTemporarilyUnavailable {
                // The channel is full: wait below for the worker to read.
            } catch {
                return SendFailure(workerGone: true, description: "send: \(error)")
            }
            guard timeout > .zero else { return SendFailure(workerGone: false, description: "the channel is full") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let ready = (try? SystemCall.retryingOnInterrupt { poll(&poller, 1, Self.milliseconds(timeout)) }) ?? 0
            guard ready > 0 else { return SendFailure(workerGone: false, description: "it read nothing for \(timeout)") }
        }
        return nil
    }

    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds.multipliedReportingOverflow(by: 1000).partialValue + attoseconds / 1_000_000_000_000_000)
    }

    enum Received {
        case message(WorkerMessage)
        /// Nothing within the time allowed.
        case silent
        /// The channel closed (the worker died) or carried what cannot be: why.
        case broken(String)
    }

    /// The next message; `.silent` once the worker, sending nothing, has spent no CPU for `timeout`
    /// or looped for `SilenceWatch.runawayFactor` times it (nil: waits as long as it takes). A
    /// worker that works slowly (a busy machine) is waited for: see `SilenceWatch`.
    func receive(timeout: Duration?) -> Received {
        // Made only when no whole message was read yet: one read brings many chunks.
        var buffer: ByteBuffer?
        let clock = ContinuousClock()
        var watch = timeout.map { SilenceWatch(limit: $0, now: clock.now, cpu: cpuTime()) }
        var wait = timeout.map(SilenceWatch.slice)
        while true {
            do {
                if let message = try incoming.withLock({ try $0.next() }) {
                    return .message(message)
                }
            } catch {
                return .broken("it sent a bad message (\(error))")
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready: Int32
            do {
                ready = try SystemCall.retryingOnInterrupt { poll(&poller, 1, wait.map(Self.milliseconds) ?? -1) }
            } catch {
                return .broken("its channel cannot be watched (poll: \(error))")
            }
            if ready == 0, var silence = watch {
                switch silence.verdict(now: clock.now, cpu: cpuTime(), waitsForTheMachine: waitsForTheMachine()) {
                case .hung: return .silent
                case .wait(let next): wait = next
                }
                watch = silence
                continue
            }
            var bytes = buffer ?? ByteBuffer()
            bytes.clear(minimumCapacity: Self.readSize)
            let count = bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.readSize) { space in
                (try? SystemCall.retryingOnInterrupt { read(descriptor, space.baseAddress, space.count) }) ?? 0
            }
            guard count > 0 else { return .broken("its channel closed") }
            // Something came: the silence, if any, starts again from here.
            if let limit = timeout {
                watch = SilenceWatch(limit: limit, now: clock.now, cpu: cpuTime())
                wait = SilenceWatch.slice(of: limit)
            }
            incoming.withLock { $0.append(bytes) }
            buffer = bytes
        }
    }

    /// The most one read takes from the channel.
    static let readSize = 64 * 1024

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

    /// Kills the worker (if it still runs), waits for it and closes the channel: how it ended.
    func end() -> String {
        kill(pid, SIGKILL)
        return reap()
    }

    /// Closes the channel (a healthy worker then exits) and waits for it: how it ended.
    func reap() -> String {
        sendLock.withLock { closed in
            guard !closed else { return }
            close(descriptor)
            closed = true
        }
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

    /// How long `reap` waits for the end of the worker's stderr once the worker is gone.
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
