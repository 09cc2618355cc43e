import Dispatch
import Glibc
import Synchronization

/// The one thread of this process that calls into libespeak-ng.
///
/// libespeak-ng keeps its state in C globals and is not reentrant (two threads inside
/// `espeak_Synth` crash), so every call into it, from `espeak_Initialize` on, runs here.
/// The worker is process-wide: every `EspeakEngine` in the process shares it, which also makes
/// a second engine instance safe. Jobs are served one at a time, in the order submitted.
/// The thread lives as long as the process (libespeak-ng cannot be used by another thread
/// afterwards anyway).
final class EspeakWorker: Sendable {
    /// A unit of work run on the worker thread with the thread-confined session.
    typealias Job = @Sendable (EspeakSession) -> Void

    static let shared = EspeakWorker()

    /// Jobs waiting for the thread, oldest first. Guarded by the mutex; `available` counts them.
    private let jobs = Mutex<[Job]>([])
    /// Counts queued jobs: `submit` signals once per job, the thread waits once per job.
    private let available = DispatchSemaphore(value: 0)

    private init() {
        // libespeak-ng keeps sizeable buffers on the stack; give it room.
        Self.startThread(name: "a11yd.espeak", stackSize: 8 << 20) { [self] in serve() }
    }

    /// What the new thread runs, passed to it through `pthread_create`'s argument.
    private final class ThreadBody: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a detached POSIX thread (what Foundation's `Thread` did, without Foundation).
    private static func startThread(name: String, stackSize: Int, _ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        pthread_attr_setdetachstate(&attributes, CInt(PTHREAD_CREATE_DETACHED))
        let argument = Unmanaged.passRetained(ThreadBody(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { argument in
            guard let argument else { return nil }
            let thread = Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue()
            // Its name in /proc (what pthread_setname_np does; Glibc's Swift module lacks that one).
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = thread.name.withCString { write(comm, $0, strlen($0)) }
                close(comm)
            }
            thread.body()
            return nil
        }, argument)
        // Only at start-up, when the process cannot make one more thread: nothing could speak.
        precondition(result == 0, "cannot start the eSpeak-NG thread: \(String(cString: strerror(result)))")
    }

    /// The thread's body: never returns.
    private func serve() -> Never {
        // The session (and everything libespeak-ng touches) never leaves this thread.
        let session = EspeakSession()
        while true {
            available.wait()
            let job: Job? = jobs.withLock { queue in
                queue.isEmpty ? nil : queue.removeFirst()
            }
            job?(session)
        }
    }

    /// Queues `job` behind every job already submitted.
    func submit(_ job: @escaping Job) {
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    /// Runs `body` on the worker thread and blocks the caller until it is done.
    /// Only for the synchronous initializer; everything else uses `run`.
    func runAndWait<T: Sendable>(_ body: @escaping @Sendable (EspeakSession) throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        submit { session in
            let outcome = Result { try body(session) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }

    /// Runs `body` on the worker thread and suspends the caller until it is done.
    func run<T: Sendable>(_ body: @escaping @Sendable (EspeakSession) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { session in
                continuation.resume(with: Result { try body(session) })
            }
        }
    }
}
