// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse

/// A `pa_threaded_mainloop`: libpulse's event thread, and the lock that guards everything it
/// touches. libpulse runs every callback on that thread with the lock held; the lock is
/// recursive, so callbacks fired synchronously from inside our own calls are fine.
final class ThreadedMainloop {
    private let handle: OpaquePointer
    /// For timers, contexts and streams made on this loop.
    let api: UnsafeMutablePointer<pa_mainloop_api>

    init(name: String) {
        guard let handle = pa_threaded_mainloop_new() else {
            // Only on allocation failure; nothing sensible can continue.
            fatalError("pa_threaded_mainloop_new failed")
        }
        self.handle = handle
        api = pa_threaded_mainloop_get_api(handle)
        pa_threaded_mainloop_set_name(handle, name)
    }

    /// Starts the event thread; false if it could not be started.
    func start() -> Bool { pa_threaded_mainloop_start(handle) >= 0 }

    /// Never from a callback (libpulse asserts against it).
    func withLock<R>(_ body: () -> R) -> R {
        pa_threaded_mainloop_lock(handle)
        defer { pa_threaded_mainloop_unlock(handle) }
        return body()
    }

    /// Waits for the thread to end; never from a callback.
    func stop() { pa_threaded_mainloop_stop(handle) }

    deinit { pa_threaded_mainloop_free(handle) }
}
