// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Synchronization

/// The daemon's main thread, which waits for the daemon to end rather than leave.
///
/// An `async` main on Linux hands the main thread to `dispatch_main()`, which ends it with `pthread_exit`.
/// That forced unwind looks up every frame in the binary's unwind tables (`.eh_frame_hdr`, `.eh_frame`), and
/// the kernel's fault-around leaves much of them resident for the daemon's whole life (docs/memory.md). Nothing in the daemon runs on the main queue, so the thread can simply block.
enum MainThread {
    /// Runs `body` on the global executor and blocks the calling thread until it returns or throws.
    static func wait(for body: @escaping @Sendable () async throws -> Void) throws {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let ended = DispatchSemaphore(value: 0)
        Task {
            let result = await Result { try await body() }
            outcome.withLock { $0 = result }
            ended.signal()
        }
        ended.wait()
        try outcome.withLock { $0 }?.get()
    }
}

private extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
