// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Dispatch
import Glibc
import Synchronization
import SystemPackage

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
        let started = DetachedThread.start(name: "a11yd.espeak", stackSize: 8 << 20) { [self] in serve() }
        // Only at start-up, when the process cannot make one more thread: nothing could speak.
        precondition(started == 0, "cannot start the eSpeak-NG thread: \(Errno(rawValue: started))")
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
    /// For the synchronous initializer and the engine worker's blocking look-ups; everything else uses `run`.
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
