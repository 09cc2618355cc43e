import A11yCore
import CPulse
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Everything `PulseOutput` does with libpulse. Not thread-safe by itself: every method and property
/// is used only with the threaded mainloop lock held, either by `PulseOutput` (which takes the lock
/// through `LockedEngine`) or by libpulse callbacks (which run on the mainloop thread, lock held).
/// The lock is recursive, so callbacks libpulse fires synchronously from inside our calls are fine.
final class PulseEngine {
    static let reconnectDelayUsec: UInt64 = 150_000
    static let targetLengthMs = 30
    static let minimumRequestMs = 5

    let mainloop: OpaquePointer
    let api: UnsafeMutablePointer<pa_mainloop_api>
    let applicationName: String
    let server: String?
    let logger: Logger

    private var context: OpaquePointer?
    private(set) var connected = false
    private var reconnectTimer: OpaquePointer?
    private var outageLogged = false
    private var everConnected = false
    private var shuttingDown = false

    private var stream: OpaquePointer?
    private var streamFormat: AudioFormat?
    private var streamReady = false
    /// Data was written to this stream since it was created (so its indices are not at zero).
    private var streamUsed = false
    /// The cork state last requested from the server.
    private(set) var corked = true
    private(set) var grantedAttr: pa_buffer_attr?

    private var track: PulseTrack?
    private var paused = false

    private var drainOp: OpaquePointer?
    private var drainTarget = 0
    private enum ResyncKind { case newTrack, rewind }
    private var resyncOp: OpaquePointer?
    private var resyncKind = ResyncKind.newTrack

    init(mainloop: OpaquePointer, applicationName: String, server: String?, logger: Logger) {
        self.mainloop = mainloop
        self.api = pa_threaded_mainloop_get_api(mainloop)
        self.applicationName = applicationName
        self.server = server
        self.logger = logger
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ ud: UnsafeMutableRawPointer?) -> PulseEngine? {
        guard let ud else { return nil }
        return Unmanaged<PulseEngine>.fromOpaque(ud).takeUnretainedValue()
    }

    // MARK: Connection

    func connect() {
        guard !shuttingDown, context == nil else { return }
        guard let c = pa_context_new(api, applicationName) else {
            logger.error("pa_context_new failed")
            scheduleReconnect()
            return
        }
        context = c
        pa_context_set_state_callback(c, { c, ud in
            guard let c, let engine = PulseEngine.from(ud) else { return }
            engine.contextStateChanged(c)
        }, userdata)
        if pa_context_connect(c, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            // May already have gone FAILED through the callback; scheduling is idempotent.
            noteOutage("cannot connect: \(String(cString: pa_strerror(pa_context_errno(c))))")
            scheduleReconnect()
        }
    }

    private func contextStateChanged(_ c: OpaquePointer) {
        guard c == context, !shuttingDown else { return }
        let state = pa_context_get_state(c)
        if state == PA_CONTEXT_READY {
            connected = true
            if everConnected || outageLogged {
                logger.info("sound server connection restored", metadata: ["server": "\(serverName(c))"])
            } else {
                logger.debug("connected to sound server", metadata: ["server": "\(serverName(c))"])
            }
            everConnected = true
            outageLogged = false
            if let t = track { ensureStream(format: t.format) }
        } else if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
            let wasConnected = connected
            connected = false
            let reason = String(cString: pa_strerror(pa_context_errno(c)))
            if wasConnected {
                logger.warning("lost the sound server; reconnecting", metadata: ["reason": "\(reason)"])
                outageLogged = true
            } else {
                noteOutage(reason)
            }
            dropStream()
            scheduleReconnect()
        }
    }

    private func serverName(_ c: OpaquePointer) -> String {
        if let s = pa_context_get_server(c) { return String(cString: s) }
        return server ?? "default"
    }

    private func noteOutage(_ reason: String) {
        if !outageLogged {
            logger.warning("sound server unavailable; retrying", metadata: [
                "server": "\(server ?? "default")", "reason": "\(reason)",
            ])
            outageLogged = true
        } else {
            logger.trace("sound server still unavailable", metadata: ["reason": "\(reason)"])
        }
    }

    private func scheduleReconnect() {
        guard !shuttingDown, reconnectTimer == nil else { return }
        var tv = timeval()
        gettimeofday(&tv, nil)
        pa_timeval_add(&tv, Self.reconnectDelayUsec)
        reconnectTimer = api.pointee.time_new(api, &tv, { _, e, _, ud in
            guard let engine = PulseEngine.from(ud) else { return }
            engine.reconnectTimerFired(e)
        }, userdata)
    }

    private func reconnectTimerFired(_ e: OpaquePointer?) {
        if let e { api.pointee.time_free(e) }
        reconnectTimer = nil
        guard !shuttingDown else { return }
        releaseContext()
        connect()
    }

    /// Forgets the current context (never from inside its own state callback).
    private func releaseContext() {
        dropStream()
        if let c = context {
            pa_context_set_state_callback(c, nil, nil)
            pa_context_disconnect(c)
            pa_context_unref(c)
            context = nil
        }
        connected = false
    }

    func shutdown() {
        shuttingDown = true
        if let e = reconnectTimer {
            api.pointee.time_free(e)
            reconnectTimer = nil
        }
        releaseContext()
        track = nil
    }

    // MARK: Stream

    private func ensureStream(format: AudioFormat) {
        if stream != nil, streamFormat == format { return }
        dropStream()
        guard connected, let c = context else { return }
        var spec = pa_sample_spec(
            format: PA_SAMPLE_S16LE, rate: UInt32(clamping: format.sampleRate),
            channels: UInt8(clamping: format.channels))
        guard pa_sample_spec_valid(&spec) != 0 else {
            logger.error("invalid audio format", metadata: ["format": "\(format)"])
            return
        }
        guard let s = pa_stream_new(c, "speech", &spec, nil) else {
            logger.error("pa_stream_new failed: \(String(cString: pa_strerror(pa_context_errno(c))))")
            return
        }
        stream = s
        streamFormat = format
        streamReady = false
        streamUsed = false
        corked = true
        grantedAttr = nil
        pa_stream_set_state_callback(s, { s, ud in
            guard let s, let engine = PulseEngine.from(ud) else { return }
            engine.streamStateChanged(s)
        }, userdata)
        pa_stream_set_write_callback(s, { s, _, ud in
            guard let s, let engine = PulseEngine.from(ud), s == engine.stream else { return }
            engine.pump()
        }, userdata)

        let frameBytes = 2 * format.channels
        func bytes(_ ms: Int) -> UInt32 { UInt32(clamping: format.frames(milliseconds: ms) * frameBytes) }
        // prebuf of one frame: a short chunk starts at once and the end of a track plays out,
        // yet an underrun (engine late, or a hold) pauses the stream instead of losing data.
        var attr = pa_buffer_attr(
            maxlength: UInt32.max, tlength: bytes(Self.targetLengthMs), prebuf: UInt32(frameBytes),
            minreq: bytes(Self.minimumRequestMs), fragsize: UInt32.max)
        let flags = pa_stream_flags_t(
            rawValue: PA_STREAM_START_CORKED.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue
                | PA_STREAM_AUTO_TIMING_UPDATE.rawValue | PA_STREAM_ADJUST_LATENCY.rawValue)
        if pa_stream_connect_playback(s, nil, &attr, flags, nil, nil) < 0 {
            logger.error("pa_stream_connect_playback failed: \(String(cString: pa_strerror(pa_context_errno(c))))")
            dropStream()
            return
        }
        // A new stream's indices start at zero: the track continues there from what was written.
        if let written = track?.writtenFrames {
            track?.segment = StreamSegment(trackFrame: written, streamFrame: 0)
        }
    }

    private func streamStateChanged(_ s: OpaquePointer) {
        guard s == stream, !shuttingDown else { return }
        let state = pa_stream_get_state(s)
        if state == PA_STREAM_READY {
            streamReady = true
            if let a = pa_stream_get_buffer_attr(s) {
                grantedAttr = a.pointee
                logger.debug("playback stream ready", metadata: [
                    "tlength": "\(a.pointee.tlength)", "minreq": "\(a.pointee.minreq)",
                    "prebuf": "\(a.pointee.prebuf)", "format": "\(streamFormat.map { "\($0)" } ?? "?")",
                ])
            }
            pump()
        } else if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
            // When the whole context failed, its callback handles it.
            guard let c = context, pa_context_get_state(c) == PA_CONTEXT_READY else { return }
            logger.warning("playback stream lost: \(String(cString: pa_strerror(pa_context_errno(c))))")
            dropStream()
            if let t = track { ensureStream(format: t.format) }
        }
    }

    /// Forgets the stream. Frames already given to it count as played (the server has them or is gone).
    private func dropStream() {
        cancel(&drainOp)
        cancel(&resyncOp)
        if let s = stream {
            pa_stream_set_state_callback(s, nil, nil)
            pa_stream_set_write_callback(s, nil, nil)
            if streamReady { pa_stream_disconnect(s) }
            pa_stream_unref(s)
        }
        stream = nil
        streamFormat = nil
        streamReady = false
        streamUsed = false
        corked = true
        if var t = track {
            t.lastPlayed = max(t.lastPlayed, t.writtenFrames)
            t.drainedThrough = max(t.drainedThrough, t.writtenFrames)
            t.segment = nil
            track = t
        }
    }

    private func cancel(_ op: inout OpaquePointer?) {
        if let o = op {
            pa_operation_cancel(o)
            pa_operation_unref(o)
            op = nil
        }
    }

    private func setCorked(_ c: Bool, force: Bool = false) {
        guard let s = stream, streamReady, force || c != corked else { return }
        corked = c
        if let op = pa_stream_cork(s, c ? 1 : 0, nil, nil) { pa_operation_unref(op) }
    }

    /// Corks, flushes and asks where the read index now is; writes wait for the answer.
    private func resync(_ kind: ResyncKind) {
        guard let s = stream, streamReady else { return }
        cancel(&drainOp)
        cancel(&resyncOp)
        setCorked(true, force: true)
        if let op = pa_stream_flush(s, nil, nil) { pa_operation_unref(op) }
        resyncKind = kind
        resyncOp = pa_stream_update_timing_info(s, { s, success, ud in
            guard let s, let engine = PulseEngine.from(ud) else { return }
            engine.resyncAnswered(s, success: success != 0)
        }, userdata)
    }

    private func resyncAnswered(_ s: OpaquePointer, success: Bool) {
        if let op = resyncOp { pa_operation_unref(op) }
        resyncOp = nil
        guard s == stream, var t = track else { return }
        guard success, let info = pa_stream_get_timing_info(s),
            let readFrame = StreamClock.frames(bytes: info.pointee.read_index, frameSize: 2 * t.format.channels)
        else {
            // Positions on this stream are unknown from here on; drains still tell what played.
            logger.warning("timing update failed after flush")
            t.segment = nil
            track = t
            pump()
            return
        }
        switch resyncKind {
        case .newTrack:
            t.segment = StreamSegment(trackFrame: 0, streamFrame: readFrame)
        case .rewind:
            if let segment = t.segment {
                let at = segment.trackFrame(atStreamFrame: readFrame) ?? 0
                t.writtenFrames = min(t.writtenFrames, max(at, t.lastPlayed, t.drainedThrough))
                // The flush made the write index equal to the read index: continue from there.
                t.segment = StreamSegment(trackFrame: t.writtenFrames, streamFrame: readFrame)
            }
        }
        track = t
        pump()
    }

    /// Writes what the server asks for (up to the hold), keeps the cork state right, drains at a stop.
    func pump() {
        guard var t = track, let s = stream, streamReady, resyncOp == nil else { return }
        let channels = max(t.format.channels, 1)
        let frameBytes = 2 * channels
        let limit = t.writeLimit
        if t.writtenFrames < limit {
            let writable = pa_stream_writable_size(s)
            if writable != Int.max, writable >= frameBytes {  // (size_t)-1 means error
                let frames = min(limit - t.writtenFrames, writable / frameBytes)
                let start = t.writtenFrames * channels
                let r = t.samples.withUnsafeBufferPointer { p in
                    pa_stream_write(s, p.baseAddress! + start, frames * frameBytes, nil, 0, PA_SEEK_RELATIVE)
                }
                if r == 0 {
                    t.writtenFrames += frames
                    streamUsed = true
                } else {
                    logger.warning("pa_stream_write failed: \(String(cString: pa_strerror(r)))")
                }
            }
        }
        track = t
        if t.isFinished {
            setCorked(true)
        } else if !paused, t.writtenFrames > t.drainedThrough {
            setCorked(false)
        }
        if drainOp == nil, let stop = t.stopPoint, t.writtenFrames >= stop, t.drainedThrough < stop {
            drainTarget = t.writtenFrames
            drainOp = pa_stream_drain(s, { s, success, ud in
                guard let s, let engine = PulseEngine.from(ud) else { return }
                engine.drained(s, success: success != 0)
            }, userdata)
        }
    }

    private func drained(_ s: OpaquePointer, success: Bool) {
        if let op = drainOp { pa_operation_unref(op) }
        drainOp = nil
        guard s == stream, var t = track else { return }
        if success {
            t.drainedThrough = max(t.drainedThrough, drainTarget)
            t.lastPlayed = max(t.lastPlayed, t.drainedThrough)
            track = t
        }
        pump()
    }

    // MARK: Track operations (lock held by caller)

    func begin(format: AudioFormat) {
        cancel(&drainOp)
        track = PulseTrack(format: format)
        paused = false
        if stream != nil, streamFormat != format {
            dropStream()
        }
        if stream == nil {
            ensureStream(format: format)
        } else if streamUsed {
            resync(.newTrack)
        } else {
            track?.segment = StreamSegment(trackFrame: 0, streamFrame: 0)
        }
    }

    func append(_ samples: [Int16]) {
        guard track != nil else {
            logger.debug("append without a track ignored")
            return
        }
        guard track?.ended == false else {
            logger.debug("append after end ignored")
            return
        }
        track!.samples.append(contentsOf: samples)
        pump()
    }

    func end() {
        guard track != nil else { return }
        track!.ended = true
        pump()
    }

    func hold(at frame: Int?) {
        guard var t = track else { return }
        t.hold = frame.map { max(0, $0) }
        let rewind = t.hold.map { $0 < t.writtenFrames } ?? false
        track = t
        if rewind {
            if stream != nil, streamReady, t.segment != nil {
                resync(.rewind)
                return
            } else if stream == nil {
                // Nothing buffered anywhere: restart from the hold (or what is known to be played).
                track!.writtenFrames = max(t.hold!, t.lastPlayed)
            }
        }
        cancel(&drainOp)  // the stop point moved; a new drain is issued for the new one
        pump()
    }

    func setPaused(_ p: Bool) {
        paused = p
        if p {
            setCorked(true)
        } else {
            pump()
        }
    }

    func cancelTrack() {
        cancel(&drainOp)
        if let s = stream, streamReady {
            setCorked(true, force: true)
            if streamUsed, let op = pa_stream_flush(s, nil, nil) { pa_operation_unref(op) }
        }
        track = nil
        paused = false
    }

    func progress() -> PlaybackProgress {
        guard var t = track else {
            return PlaybackProgress(playedFrames: 0, appendedFrames: 0, isFinished: false, isConnected: connected)
        }
        var played = max(t.lastPlayed, t.drainedThrough)
        if let s = stream, streamReady, resyncOp == nil, let segment = t.segment {
            var usec: pa_usec_t = 0
            if pa_stream_get_time(s, &usec) == 0,
                let f = segment.trackFrame(atMicroseconds: usec, sampleRate: t.format.sampleRate)
            {
                played = max(played, min(f, t.writtenFrames))
            }
        }
        let finished = t.isFinished
        if finished, let stop = t.stopPoint { played = max(played, stop) }
        t.lastPlayed = played
        track = t
        return PlaybackProgress(
            playedFrames: played, appendedFrames: t.appendedFrames, isFinished: finished, isConnected: connected)
    }

    var hasStream: Bool { stream != nil && streamReady }
}
