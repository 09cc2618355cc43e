// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse

#if canImport(Glibc)
import Glibc
#endif

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

    /// Whether this is the event thread (a callback, with the lock held): where `withLock`, `stop`
    /// and freeing the loop are not allowed.
    var isEventThread: Bool { pa_threaded_mainloop_in_thread(handle) != 0 }

    /// Runs `body` once on the event thread, with the lock held, and releases it there: what `body`
    /// holds last goes away on that thread, as when a callback outlives an object's owner.
    func once(_ body: @escaping () -> Void) {
        final class Box {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
        }
        let userdata = Unmanaged.passRetained(Box(body)).toOpaque()
        withLock {
            pa_mainloop_api_once(api, { _, userdata in
                guard let userdata else { return }
                Unmanaged<Box>.fromOpaque(userdata).takeRetainedValue().body()
            }, userdata)
        }
    }

    /// A one-shot timer `usec` from now (lock held), which calls `fired` with `userdata` on the event
    /// thread. Freed with `cancel(_:)`: when it fired, or before what `userdata` points to goes away.
    func timer(afterUsec usec: UInt64, userdata: UnsafeMutableRawPointer, _ fired: pa_time_event_cb_t) -> OpaquePointer? {
        var tv = timeval()
        gettimeofday(&tv, nil)
        pa_timeval_add(&tv, usec)
        return api.pointee.time_new(api, &tv, fired, userdata)
    }

    /// Frees `timer`, if set, and forgets it (lock held).
    func cancel(_ timer: inout OpaquePointer?) {
        guard let event = timer else { return }
        api.pointee.time_free(event)
        timer = nil
    }

    deinit { pa_threaded_mainloop_free(handle) }
}
