import CSeccomp
import Glibc
import Synchronization

/// One running engine worker, seen from a11yd: its pid and a11yd's end of the socket pair.
/// Used by `WorkerEngine`'s link thread only, except `send`, which the link thread and a
/// cancelling consumer may call at once (a lock keeps their frames whole).
final class WorkerProcess: Sendable {
    let pid: pid_t
    /// a11yd's end of the channel.
    let descriptor: Int32
    private let sendLock = Mutex<Void>(())
    /// Only the link thread reads (`receive`), so only it touches the decoder. `Mutex` makes the
    /// class `Sendable` without claiming more than that.
    private let decoder = Mutex(WorkerFrameDecoder())

    private init(pid: pid_t, descriptor: Int32) {
        self.pid = pid
        self.descriptor = descriptor
    }

    /// Starts `executable arguments` with one end of a new socket pair as its descriptor 0, stdout
    /// on /dev/null and a11yd's stderr. The Swift runtime's crash backtracer is off in the worker:
    /// it would try to exec a program, which the sandbox forbids, and a crash must end quickly.
    /// `environment`: the little else the worker is given (where eSpeak's data is).
    static func start(executable: String, arguments: [String], environment: [String: String] = [:]) throws(WorkerFailure) -> WorkerProcess {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw WorkerFailure("socketpair: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pair[1], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Default signal handling and an empty mask, whatever a11yd's threads had.
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        // argv[0] "a11yd": what ps shows, rather than the path it was started by.
        let argv = (["a11yd"] + arguments).map { strdup($0) } + [nil]
        let variables = ["SWIFT_BACKTRACE=enable=no"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(pair[1])
        guard result == 0 else {
            close(pair[0])
            throw WorkerFailure("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return WorkerProcess(pid: pid, descriptor: pair[0])
    }

    /// Writes `message` whole, waiting at most `timeout` each time the channel is full; nil, or
    /// why it could not (the worker is gone, or reads nothing: a stopped worker must not hold the
    /// link thread in `send` for ever).
    func send(_ message: WorkerMessage, timeout: Duration) -> String? {
        let frame = WorkerFrame.encode(message)
        return sendLock.withLock { _ in write(frame, timeout: timeout) }
    }

    /// Sends `message` only if that cannot block: not while the link thread is in the middle of a
    /// frame, nor when the channel is full. For a cancel, from whatever thread the consumer left on
    /// (a pool thread must never wait on a worker); the link thread sends it itself otherwise.
    func sendIfReady(_ message: WorkerMessage) -> Bool {
        let frame = WorkerFrame.encode(message)
        return sendLock.withLockIfAvailable { _ in write(frame, timeout: .zero) == nil } ?? false
    }

    /// Under `sendLock`. A frame cut short by a timeout leaves the channel unusable: the caller
    /// then ends the worker.
    private func write(_ frame: [UInt8], timeout: Duration) -> String? {
        var offset = 0
        while offset < frame.count {
            let sent = frame.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if sent > 0 {
                offset += sent
                continue
            }
            guard sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                return "send: \(String(cString: strerror(errno)))"
            }
            if errno == EINTR { continue }
            guard timeout > .zero else { return "the channel is full" }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Self.milliseconds(timeout))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return "it read nothing for \(timeout)" }
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

    /// The next message, waiting at most `timeout` (nil: as long as it takes) for each read.
    func receive(timeout: Duration?) -> Received {
        // Made only when the decoder holds no whole message: one read brings many chunks.
        var buffer: [UInt8] = []
        while true {
            do {
                if let message = try decoder.withLock({ decoder throws(WorkerProtocolError) in try decoder.next() }) {
                    return .message(message)
                }
            } catch {
                return .broken("it sent a bad message (\(error))")
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = timeout.map(Self.milliseconds) ?? -1
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready != 0 else { return .silent }
            if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 64 * 1024) }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return .broken("its channel closed") }
            buffer.withUnsafeBytes { bytes in
                decoder.withLock { $0.append(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) }
            }
        }
    }

    /// Kills the worker (if it still runs), waits for it and closes the channel: how it ended.
    func end() -> String {
        kill(pid, SIGKILL)
        return reap()
    }

    /// Closes the channel (a healthy worker then exits) and waits for it: how it ended.
    func reap() -> String {
        close(descriptor)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return "its end is unknown (waitpid: \(String(cString: strerror(errno))))" }
        }
        let signal = status & 0x7f
        if signal == 0 { return "it exited with status \((status >> 8) & 0xff)" }
        return "it was killed by signal \(signal) (\(Self.signalName(signal)))"
    }

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
