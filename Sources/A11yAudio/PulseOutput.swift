import A11yCore
import CPulse
import Logging

/// `AudioOutput` on PulseAudio's asynchronous API (`pa_threaded_mainloop`, `pa_context`, `pa_stream`).
///
/// Appended PCM is kept in-process and written only as the server asks for it (tlength about 30 ms,
/// minreq 5 ms, prebuf one frame so that short tracks start and the end of a track plays out).
/// While idle the stream is corked. If the server goes away, the output reports
/// `isConnected == false`, reconnects with a fresh context every 150 ms and then carries on with the
/// current track from the first frame not yet given to the server.
///
/// Every method returns promptly: none waits for the server.
public final class PulseOutput: AudioOutput {
    private let engine: LockedEngine
    private let logger: Logger

    /// - Parameters:
    ///   - server: a libpulse server string (`unix:/path/native`, …); `nil` uses libpulse's default,
    ///     which honours `PULSE_SERVER`.
    /// Connects in the background: never blocks on, and never fails because of, the server.
    public init(applicationName: String = "a11yd", server: String? = nil, logger: Logger) {
        self.logger = logger
        engine = LockedEngine(applicationName: applicationName, server: server, logger: logger)
    }

    public func begin(format: AudioFormat) {
        engine.withLock { $0.begin(format: format) }
    }

    public func append(_ samples: [Int16]) {
        engine.withLock { $0.append(samples) }
    }

    public func end() {
        engine.withLock { $0.end() }
    }

    public func hold(at frame: Int?) {
        engine.withLock { $0.hold(at: frame) }
    }

    public func setPaused(_ paused: Bool) {
        engine.withLock { $0.setPaused(paused) }
    }

    public func cancel() {
        engine.withLock { $0.cancelTrack() }
    }

    public func progress() -> PlaybackProgress {
        engine.withLock { $0.progress() }
    }

    /// Waits (polling every few ms) until the output is connected to the server.
    /// - Throws: `SpeechError.audioUnavailable` after `timeout` seconds without a connection.
    public func waitUntilConnected(timeout: Duration = .seconds(5)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while !progress().isConnected {
            if clock.now >= deadline {
                throw SpeechError(.audioUnavailable, "no connection to the sound server within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// What the output currently asks of the server, for tests and diagnostics.
    public struct StreamStatus: Sendable, Equatable {
        /// A playback stream exists and is ready.
        public var hasStream: Bool
        /// The cork state last requested for that stream (`true` when there is none).
        public var isCorked: Bool
        /// Target length and minimum request the server granted, in bytes (0 when unknown).
        public var grantedTargetLength: Int
        public var grantedMinimumRequest: Int
        public var grantedPrebuffer: Int
    }

    public func streamStatus() -> StreamStatus {
        engine.withLock { e in
            StreamStatus(
                hasStream: e.hasStream, isCorked: e.corked,
                grantedTargetLength: Int(e.grantedAttr?.tlength ?? 0),
                grantedMinimumRequest: Int(e.grantedAttr?.minreq ?? 0),
                grantedPrebuffer: Int(e.grantedAttr?.prebuf ?? 0))
        }
    }
}

/// The threaded mainloop and the engine it protects.
///
/// `@unchecked Sendable` is safe because the engine (all mutable state, all libpulse objects) is
/// reachable from outside only through `withLock`, which holds the threaded mainloop's lock for the
/// whole access; libpulse runs every callback (the only other way in) on the mainloop thread with
/// that same lock held. The lock is recursive, so callbacks fired synchronously inside our own
/// libpulse calls do not deadlock. `withLock` must never be called from a mainloop callback
/// (libpulse asserts against it); nothing in this module does.
final class LockedEngine: @unchecked Sendable {
    private let mainloop: OpaquePointer
    private let engine: PulseEngine

    init(applicationName: String, server: String?, logger: Logger) {
        guard let ml = pa_threaded_mainloop_new() else {
            // Only on allocation failure; nothing sensible can continue.
            fatalError("pa_threaded_mainloop_new failed")
        }
        mainloop = ml
        pa_threaded_mainloop_set_name(ml, "a11y-pulse")
        engine = PulseEngine(mainloop: ml, applicationName: applicationName, server: server, logger: logger)
        if pa_threaded_mainloop_start(ml) < 0 {
            logger.error("pa_threaded_mainloop_start failed; audio output disabled")
        }
        withLock { $0.connect() }
    }

    deinit {
        withLock { $0.shutdown() }
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    func withLock<R>(_ body: (PulseEngine) -> R) -> R {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return body(engine)
    }
}
