// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import CPulse
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// One `pa_stream` for playback, in one format, on the connection's current context.
///
/// Used only with the mainloop lock held (by the owner, or by libpulse callbacks). At most one
/// drain, one read-index request and one timing refresh are outstanding, each a `StreamOperation`;
/// `close()` cancels them, so their completions never run for a stream that is gone.
final class PlaybackStream {
    enum Event {
        case ready
        /// The stream failed or was ended by the server.
        case failed
        /// The server wants more data (it played some).
        case writable
        /// A timing update came back: the playback position is fresh.
        case timing
    }

    /// What the server granted, in bytes.
    struct BufferAttributes: Equatable {
        var targetLength: Int
        var minimumRequest: Int
        var prebuffer: Int
    }

    static let targetLengthMs = 30
    /// On PulseAudio; on PipeWire's pulse server one `pipeWireBlock`.
    static let minimumRequestMs = 5

    /// On PipeWire's pulse server, what the graph is asked to process at a time while a11yd's
    /// stream plays: 64 frames at 48 kHz, 1.3 ms. The server reads a stream a processing block at a
    /// time and passes it on, so a cut starts a block past where it last read and a block already
    /// in the graph plays out before it: at the server's default floor (256 frames, 5.3 ms) sound
    /// was gone much later after a cut than at 64 frames (docs/architecture.md, "Time to
    /// silence, and PipeWire's block", has the figures). The pulse server takes this floor from its client's own
    /// properties (`pipeWireClientProperties`), which PulseAudio ignores; a corked stream is not in
    /// the graph, so it costs nothing while a11yd is silent.
    static let pipeWireBlock = (frames: 64, rate: 48_000)

    /// The pulse server's floors for its client, lowered to `pipeWireBlock` (a `pulse.rules` entry
    /// of the user's PipeWire configuration still overrides them).
    static var pipeWireClientProperties: [(String, String)] {
        let block = "\(pipeWireBlock.frames)/\(pipeWireBlock.rate)"
        return [("pulse.min.req", block), ("pulse.min.quantum", block)]
    }

    let format: AudioFormat
    private let handle: OpaquePointer
    private let context: OpaquePointer
    private let onEvent: (Event) -> Void

    private(set) var isReady = false
    /// The cork state last requested from the server.
    private(set) var isCorked = true
    /// Data was written since the stream was created (so its indices are not at zero).
    private(set) var hasBeenWritten = false
    /// The server's write index, in frames, when known: where a write goes unless it names another
    /// frame. 0 for a new stream; unknown after a flush (which moves it to the read index) until
    /// the read index is known again.
    private(set) var writeFrame: Int64? = 0
    /// A drain was asked since the last flush: the server may still be draining (PipeWire's pulse
    /// server plays a partial block at the next underrun while it does, then reads past its write
    /// index, so audio written just after would be lost).
    private(set) var mayBeDraining = false
    private(set) var granted: BufferAttributes?

    private let drainOperation = StreamOperation()
    private let readIndexOperation = StreamOperation()
    private let refreshOperation = StreamOperation()

    private var frameSize: Int { 2 * format.channels }

    /// Connects a corked stream; `nil` (logged) when the format is invalid or libpulse refuses.
    init?(on connection: ServerConnection, format: AudioFormat, logger: Logger, onEvent: @escaping (Event) -> Void) {
        guard connection.isConnected, let context = connection.context else { return nil }
        // Clamping only changes values libpulse rejects anyway (rate > 384 kHz, > 32 channels).
        var spec = pa_sample_spec(
            format: PA_SAMPLE_S16LE, rate: UInt32(clamping: format.sampleRate),
            channels: UInt8(clamping: format.channels))
        guard pa_sample_spec_valid(&spec) != 0 else {
            logger.error("invalid audio format", metadata: ["format": "\(format)"])
            return nil
        }
        let made = connection.playbackIdentity.withStreamProperties { properties in
            pa_stream_new_with_proplist(context, "speech", &spec, nil, properties)
        }
        guard let handle = made else {
            logger.error("pa_stream_new failed: \(connection.lastError)")
            return nil
        }
        self.format = format
        self.handle = handle
        self.context = context
        self.onEvent = onEvent
        pa_stream_set_state_callback(handle, { _, userdata in
            PlaybackStream.from(userdata)?.stateChanged()
        }, userdata)
        pa_stream_set_write_callback(handle, { _, _, userdata in
            PlaybackStream.from(userdata)?.onEvent(.writable)
        }, userdata)
        pa_stream_set_latency_update_callback(handle, { _, userdata in
            PlaybackStream.from(userdata)?.onEvent(.timing)
        }, userdata)

        func bytes(frames: Int) -> UInt32 { UInt32(clamping: frames * frameSize) }
        // prebuf of one frame: a short chunk starts at once and the end of a track plays out,
        // yet an underrun (engine late, or a hold) pauses the stream instead of losing data.
        // No PA_STREAM_AUTO_TIMING_UPDATE: it asks for timing every 1.5 s for the stream's whole
        // life, corked or not, waking an idle daemon; timing is asked for while playing instead
        // (`refreshTiming`, at each request for data).
        // PulseAudio: its sink then mixes (tlength − 2 minreq) / 2 ahead, 10 ms, and takes back what
        // a cut rewrites. PipeWire's pulse server: with early requests it asks the graph for the
        // minimum request as its quantum, one `pipeWireBlock`; the target length stays 30 ms, so an
        // engine late by a few milliseconds is no underrun (a cut rewrites what was not read).
        let (block, latency) = connection.rewinds
            ? (format.frames(milliseconds: Self.minimumRequestMs), PA_STREAM_ADJUST_LATENCY)
            : (Self.pipeWireBlockFrames(sampleRate: format.sampleRate), PA_STREAM_EARLY_REQUESTS)
        var attr = pa_buffer_attr(
            maxlength: UInt32.max, tlength: bytes(frames: format.frames(milliseconds: Self.targetLengthMs)),
            prebuf: UInt32(clamping: frameSize), minreq: bytes(frames: block), fragsize: UInt32.max)
        let flags = pa_stream_flags_t(
            rawValue: PA_STREAM_START_CORKED.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue | latency.rawValue)
        if pa_stream_connect_playback(handle, nil, &attr, flags, nil, nil) < 0 {
            logger.error("pa_stream_connect_playback failed: \(connection.lastError)")
            close()
            return nil
        }
    }

    deinit { close() }

    /// `pipeWireBlock` in frames at `sampleRate`, rounded up (as the pulse server rounds it);
    /// saturating for a rate no sample spec holds.
    static func pipeWireBlockFrames(sampleRate: Int) -> Int {
        let (product, overflow) = pipeWireBlock.frames.multipliedReportingOverflow(by: max(sampleRate, 1))
        return overflow ? .max / pipeWireBlock.rate : (product + pipeWireBlock.rate - 1) / pipeWireBlock.rate
    }

    // libpulse gets an unretained pointer to `self`: `close()` removes every callback and cancels
    // every operation, under the mainloop lock, before `self` can go away.
    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> PlaybackStream? {
        userdata.map { Unmanaged<PlaybackStream>.fromOpaque($0).takeUnretainedValue() }
    }

    private var closed = false

    /// Disconnects and forgets the stream; nothing of it calls back afterwards.
    func close() {
        guard !closed else { return }
        closed = true
        drainOperation.cancel()
        readIndexOperation.cancel()
        refreshOperation.cancel()
        pa_stream_set_state_callback(handle, nil, nil)
        pa_stream_set_write_callback(handle, nil, nil)
        pa_stream_set_latency_update_callback(handle, nil, nil)
        if isReady { pa_stream_disconnect(handle) }
        pa_stream_unref(handle)
        isReady = false
        isCorked = true
    }

    private func stateChanged() {
        let state = pa_stream_get_state(handle)
        if state == PA_STREAM_READY {
            isReady = true
            if let a = pa_stream_get_buffer_attr(handle) {
                // UInt32 → Int cannot fail on the 64-bit platforms we build for.
                granted = BufferAttributes(
                    targetLength: Int(a.pointee.tlength), minimumRequest: Int(a.pointee.minreq),
                    prebuffer: Int(a.pointee.prebuf))
            }
            onEvent(.ready)
        } else if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
            onEvent(.failed)
        }
    }

    /// The server's index of this stream (its sink input) and of the sink it plays to; nil until ready.
    var serverIndices: (stream: UInt32, sink: UInt32)? {
        guard isReady else { return nil }
        let stream = pa_stream_get_index(handle), sink = pa_stream_get_device_index(handle)
        // PA_INVALID_INDEX ((uint32_t)-1) does not import into Swift.
        guard stream != .max, sink != .max else { return nil }
        return (stream, sink)
    }

    /// The error the context last reported (the stream's own errors are reported there).
    var lastError: PulseError { PulseError(code: pa_context_errno(context)) }

    // MARK: Controls

    func setCorked(_ corked: Bool, force: Bool = false) {
        guard isReady, force || corked != isCorked else { return }
        if isCorked && !corked { gettimeofday(&uncorkedAt, nil) }
        isCorked = corked
        if let op = pa_stream_cork(handle, corked ? 1 : 0, nil, nil) { pa_operation_unref(op) }
    }

    /// When the stream was last uncorked: a reading from before says nothing of the time it stood
    /// corked, so it is carried forward only from then.
    private var uncorkedAt = timeval()

    /// Drops what the server has not played yet.
    func flush() {
        guard isReady else { return }
        if let op = pa_stream_flush(handle, nil, nil) { pa_operation_unref(op) }
        writeFrame = nil
        mayBeDraining = false
    }

    /// Whole frames the server asks for now.
    var writableFrames: Int {
        guard isReady else { return 0 }
        return Self.wholeFrames(writableBytes: pa_stream_writable_size(handle), frameSize: frameSize)
    }

    /// `pa_stream_writable_size` returns a `size_t`, `(size_t)-1` on error; Swift sees it as an
    /// `Int`, so the error (and any size above `Int.max`) is negative: nothing writable.
    static func wholeFrames(writableBytes bytes: Int, frameSize: Int) -> Int {
        guard bytes > 0, frameSize > 0 else { return 0 }
        return bytes / frameSize
    }

    /// Writes frames `frames` of `samples` (interleaved); libpulse copies them. They go to stream
    /// frame `streamFrame` if given (replacing what was written there and after it: the server's
    /// write index ends up after them), else after what was written last.
    func write(_ samples: [Int16], frames: Range<Int>, at streamFrame: Int64? = nil) throws(PulseError) {
        let channels = format.channels
        guard isReady, !frames.isEmpty, frames.lowerBound >= 0, frames.upperBound <= samples.count / max(channels, 1)
        else { return }
        // The same frame as the write index is a plain append; another needs a seek to it, in bytes.
        var seek = PA_SEEK_RELATIVE, offset: Int64 = 0
        if let streamFrame, streamFrame != writeFrame {
            let (bytes, overflow) = streamFrame.multipliedReportingOverflow(by: Int64(frameSize))
            guard !overflow, bytes >= 0 else { throw PulseError(code: Int32(PA_ERR_INVALID.rawValue)) }
            seek = PA_SEEK_ABSOLUTE
            offset = bytes
        }
        let r = samples.withUnsafeBufferPointer { p in
            pa_stream_write(handle, p.baseAddress! + frames.lowerBound * channels, frames.count * frameSize, nil, offset, seek)
        }
        guard r == 0 else { throw PulseError(code: r) }
        hasBeenWritten = true
        if let start = streamFrame ?? writeFrame, let count = Int64(exactly: frames.count) {
            let (end, overflow) = start.addingReportingOverflow(count)
            writeFrame = overflow ? nil : end
        } else {
            writeFrame = nil
        }
    }

    // MARK: Operations

    var isDraining: Bool { drainOperation.isPending }

    /// Asks the server to play out what it has; `done(success)` when it has.
    func drain(_ done: @escaping (Bool) -> Void) {
        guard isReady, !drainOperation.isPending else { return }
        mayBeDraining = true
        drainOperation.start({ pa_stream_drain(handle, $0, $1) }, done: done)
    }

    func cancelDrain() {
        drainOperation.cancel()
    }

    var isUpdatingTiming: Bool { readIndexOperation.isPending }

    /// Asks where the read index is; `done(frame)` with it, or `nil` when there is no reading.
    /// Replaces a request still outstanding (its `done` is not called).
    func requestReadIndex(_ done: @escaping (Int64?) -> Void) {
        guard isReady else { return }
        // The completion runs only while the stream is open (`close()` cancels it first).
        readIndexOperation.start({ pa_stream_update_timing_info(handle, $0, $1) }) { [unowned self] success in
            var frame: Int64?
            if success, let info = pa_stream_get_timing_info(handle), info.pointee.read_index_corrupt == 0 {
                frame = StreamClock.frames(bytes: info.pointee.read_index, frameSize: frameSize)
            }
            // Asked after a flush, which put the write index at the read index, as the server says
            // it: PipeWire's pulse server can count a block it was reading during the flush in the
            // read index and not in the write index, and what is written next goes to the latter.
            if writeFrame == nil, success, let info = pa_stream_get_timing_info(handle) {
                writeFrame = info.pointee.write_index_corrupt == 0
                    ? StreamClock.frames(bytes: info.pointee.write_index, frameSize: frameSize) : frame
            }
            done(frame)
        }
    }

    /// Asks for fresh timing (one request at a time); `.timing` follows when it is back.
    func refreshTiming() {
        guard isReady, !refreshOperation.isPending else { return }
        refreshOperation.start({ pa_stream_update_timing_info(handle, $0, $1) }, done: { _ in })
    }

    /// Whole frames of what the server asks for at a time (its minimum request; 0 until it said):
    /// PipeWire's pulse server reads that much at once, a processing quantum.
    var blockFrames: Int64 { Int64(granted.map { $0.minimumRequest / frameSize } ?? 0) }

    /// The last timing update's reading, carried forward to now; nil without a valid one.
    func reading() -> StreamReading? {
        guard isReady, let info = pa_stream_get_timing_info(handle), info.pointee.read_index_corrupt == 0,
            let readFrame = StreamClock.frames(bytes: info.pointee.read_index, frameSize: frameSize)
        else { return nil }
        var now = timeval()
        gettimeofday(&now, nil)
        let stamp = info.pointee.timestamp
        // From the reading, or from the uncork if that came later; not at all while corked.
        let beforeUncork = stamp.tv_sec < uncorkedAt.tv_sec || stamp.tv_sec == uncorkedAt.tv_sec && stamp.tv_usec < uncorkedAt.tv_usec
        let since = beforeUncork ? uncorkedAt : stamp
        let age = isCorked ? 0 : StreamClock.microseconds(
            from: (Int(since.tv_sec), Int(since.tv_usec)), to: (Int(now.tv_sec), Int(now.tv_usec)))
        // Carried forward whatever the reading says of playing: one taken while corked, or in a brief
        // underrun, says "not playing" of a stream that plays now; too far only makes a cut later.
        return StreamReading(
            readFrame: readFrame,
            readingNow: StreamClock.frame(readFrame, carriedFor: age, sampleRate: format.sampleRate, playing: true),
            furthestRead: StreamClock.furthestRead(readFrame, carriedFor: age, sampleRate: format.sampleRate, block: blockFrames),
            sinkLatency: StreamClock.frames(microseconds: info.pointee.sink_usec, sampleRate: format.sampleRate) ?? 0)
    }

    /// Where the server is playing the stream, in frames, or `nil` when there is no reading.
    ///
    /// Normally libpulse's interpolated clock. That clock can wrap below zero after quick
    /// cork/uncork cycles (its smoother), and it never goes back, so it then stays impossible for
    /// the stream's life: the read index of the last timing update (refreshed automatically) is
    /// used instead, so that positions still move.
    func playbackFrame() -> Int64? {
        guard isReady else { return nil }
        var usec: pa_usec_t = 0
        if pa_stream_get_time(handle, &usec) == 0,
            let frame = StreamClock.frames(microseconds: usec, sampleRate: format.sampleRate)
        {
            return frame
        }
        guard let info = pa_stream_get_timing_info(handle), info.pointee.read_index_corrupt == 0 else { return nil }
        return StreamClock.frames(bytes: info.pointee.read_index, frameSize: frameSize)
    }
}

/// One kind of libpulse operation on a stream that reports success (a drain, a timing update): at
/// most one outstanding, and a cancelled one never calls back.
///
/// Used only with the mainloop lock held, as its stream. libpulse gets an unretained pointer to it:
/// its stream cancels it (`close()`) before either can go away.
final class StreamOperation {
    private var operation: OpaquePointer?
    private var done: ((Bool) -> Void)?

    var isPending: Bool { operation != nil }

    /// Cancels any outstanding one, then starts `call` (given libpulse's callback and its userdata);
    /// `done(success)` when the server answers. Nothing is outstanding if libpulse refused.
    func start(
        _ call: (pa_stream_success_cb_t, UnsafeMutableRawPointer) -> OpaquePointer?, done: @escaping (Bool) -> Void
    ) {
        cancel()
        self.done = done
        operation = call({ _, success, userdata in
            guard let userdata else { return }
            Unmanaged<StreamOperation>.fromOpaque(userdata).takeUnretainedValue().completed(success: success != 0)
        }, Unmanaged.passUnretained(self).toOpaque())
        if operation == nil { self.done = nil }
    }

    func cancel() {
        guard let operation else { return }
        pa_operation_cancel(operation)
        pa_operation_unref(operation)
        self.operation = nil
        done = nil
    }

    private func completed(success: Bool) {
        if let operation { pa_operation_unref(operation) }
        operation = nil
        let done = self.done
        self.done = nil
        done?(success)
    }
}
