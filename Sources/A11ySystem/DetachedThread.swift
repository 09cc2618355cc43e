// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif

/// A detached POSIX thread with a name (what Foundation's `Thread` did, without Foundation), for
/// work that must stay on one thread of its own and block while idle: eSpeak-NG's calls, the
/// engine worker's link.
public enum DetachedThread {
    /// What the new thread runs, passed through `pthread_create`'s argument.
    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Starts `body` on a new detached thread named `name` (as /proc shows it), with `stackSize`
    /// bytes of stack when given. Returns the `pthread_create` error, 0 when it started.
    public static func start(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> CInt {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        pthread_attr_setdetachstate(&attributes, CInt(PTHREAD_CREATE_DETACHED))
        let argument = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { argument in
            guard let argument else { return nil }
            let body = Unmanaged<Body>.fromOpaque(argument).takeRetainedValue()
            // Its name in /proc (what pthread_setname_np does; Glibc's Swift module lacks that one).
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = body.name.withCString { write(comm, $0, strlen($0)) }
                close(comm)
            }
            body.run()
            return nil
        }, argument)
        if result != 0 { Unmanaged<Body>.fromOpaque(argument).release() }
        return result
    }
}
