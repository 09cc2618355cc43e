// SPDX-License-Identifier: GPL-3.0-or-later
// Records a sink's monitor through libpulse's asynchronous API, to prove sound arrived (or did not).
import A11yCore
import CPulse
import Foundation

/// What a `MonitorRecorder` captured: mono float samples in -1...1 at `sampleRate`, with the
/// moment each chunk arrived, in seconds since the recorder's zero (the moment the first data
/// arrived, at the end of `start()`; `MonitorRecorder.elapsed()` uses the same clock).
public struct Recording: Sendable {
    public let sampleRate: Int
    public let samples: [Float]
    /// (index one past the chunk's last sample, arrival time in seconds since the recorder's zero).
    public let chunkEnds: [(end: Int, time: Double)]

    public init(sampleRate: Int, samples: [Float], chunkEnds: [(end: Int, time: Double)]) {
        self.sampleRate = sampleRate
        self.samples = samples
        self.chunkEnds = chunkEnds
    }

    /// Seconds since the recorder's zero at which sample `index` was mixed (arrival of its chunk
    /// minus the samples that followed it in that chunk).
    public func time(ofSample index: Int) -> Double {
        var lo = 0, hi = chunkEnds.count - 1
        guard hi >= 0 else { return Double(index) / Double(sampleRate) }
        if index >= chunkEnds[hi].end { return chunkEnds[hi].time + Double(index - chunkEnds[hi].end) / Double(sampleRate) }
        while lo < hi {
            let mid = (lo + hi) / 2
            if chunkEnds[mid].end > index { hi = mid } else { lo = mid + 1 }
        }
        let c = chunkEnds[lo]
        return c.time - Double(c.end - index) / Double(sampleRate)
    }

    /// Index of the first sample at or after `time` seconds.
    public func index(atTime time: Double) -> Int {
        var lo = 0, hi = samples.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if self.time(ofSample: mid) < time { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Root mean square of the samples mixed between `from` and `to` seconds (0 if none).
    public func rms(from: Double = 0, to: Double = .infinity) -> Double {
        let a = index(atTime: from)
        let b = to == .infinity ? samples.count : index(atTime: to)
        return Self.rms(samples, a, b)
    }

    /// The level of a steady sound between `from` and `to` seconds whatever a short dropout in it:
    /// the median RMS of its `window`-second windows (a player starved for a moment on a loaded
    /// machine leaves a gap that an RMS over the whole span counts as a quieter sound).
    public func steadyLevel(from: Double, to: Double, window: Double = 0.05) -> Double {
        let step = max(1, Int(window * Double(sampleRate)))
        let a = max(0, index(atTime: from)), b = min(samples.count, index(atTime: to))
        let levels = stride(from: a, to: b - step + 1, by: step).map { Self.rms(samples, $0, $0 + step) }.sorted()
        return levels.isEmpty ? 0 : levels[levels.count / 2]
    }

    /// Loudness of speech whatever its pauses: the RMS of the `window`-second windows within
    /// `relativeDecibels` of the loudest (the Piper worker's `gated_rms`, which brings a natural voice to
    /// eSpeak's loudness so measured); 0 if nothing was recorded.
    public func gatedRMS(window: Double = 0.02, relativeDecibels: Double = -30) -> Double {
        let n = max(1, Int(window * Double(sampleRate)))
        let levels = stride(from: 0, to: samples.count - n + 1, by: n).map { Self.rms(samples, $0, $0 + n) }
        guard let loudest = levels.max(), loudest > 0 else { return 0 }
        let gate = loudest * pow(10, relativeDecibels / 20)
        let kept = levels.filter { $0 >= gate }
        return (kept.reduce(0) { $0 + $1 * $1 } / Double(kept.count)).squareRoot()
    }

    /// Time (seconds since the recorder's zero) of the first sample whose magnitude reaches `threshold`.
    public func firstAudibleTime(threshold: Float = 0.01, after: Double = 0) -> Double? {
        let start = index(atTime: after)
        guard start < samples.count else { return nil }
        for i in start..<samples.count where abs(samples[i]) >= threshold {
            return time(ofSample: i)
        }
        return nil
    }

    /// Time of the last sample (before `before` seconds, if given) whose magnitude reaches `threshold`.
    public func lastAudibleTime(threshold: Float = 0.01, before: Double = .infinity) -> Double? {
        let end = before == .infinity ? samples.count : index(atTime: before)
        for i in stride(from: end - 1, through: 0, by: -1) where abs(samples[i]) >= threshold {
            return time(ofSample: i)
        }
        return nil
    }

    /// Seconds of audio recorded.
    public var duration: Double { Double(samples.count) / Double(max(sampleRate, 1)) }

    /// Silences of at least `minimum` seconds with sound before and after them, as (start, end) in
    /// recording time: a pause, not the quiet before speech begins or after it ends.
    public func quietSpans(threshold: Double = 0.003, minimum: Double, window: Double = 0.005) -> [(start: Double, end: Double)] {
        let n = max(1, Int(window * Double(sampleRate)))
        var spans: [(start: Double, end: Double)] = []
        var heardBefore = false
        var quietStart: Int?
        var i = 0
        while i + n <= samples.count {
            if Self.rms(samples, i, i + n) < threshold {
                if heardBefore && quietStart == nil { quietStart = i }
            } else {
                if let start = quietStart, Double(i - start) / Double(sampleRate) >= minimum {
                    spans.append((time(ofSample: start), time(ofSample: i)))
                }
                quietStart = nil
                heardBefore = true
            }
            i += n
        }
        return spans
    }

    /// Total seconds of windows (`window` seconds each) whose RMS reaches `threshold`.
    /// Only samples mixed between `from` and `to` seconds count.
    public func audibleDuration(
        threshold: Double = 0.01, window: Double = 0.005, from: Double = 0, to: Double = .infinity
    ) -> Double {
        let n = max(1, Int(window * Double(sampleRate)))
        var audible = 0
        var i = index(atTime: from)
        let end = to == .infinity ? samples.count : index(atTime: to)
        while i + n <= end {
            if Self.rms(samples, i, i + n) >= threshold { audible += n }
            i += n
        }
        return Double(audible) / Double(sampleRate)
    }

    // MARK: Cuts: how sound ends and starts again

    /// Digital silence: a sample that is 0 at 16 bits (the null sink mixes in 16 bits).
    public static let silenceLevel: Float = 0.5 / 32_768

    /// The loudest the last millisecond before a cut's silence (or the first after a resume's) may
    /// be not to click: −27 dBFS, 1,460 of 32,767 (an abrupt cut of speech ends several times
    /// louder; docs/architecture.md, "Cuts are ramped").
    public static let clickLimit = 1_460

    /// How a cut sounded: when the sound ended, and how loud its last millisecond was.
    public struct CutSound: Sendable, CustomStringConvertible {
        /// Seconds from the cut to the first silent sample (negative when the sound had already ended).
        public var silenceAfter: Double
        /// Peak |sample| of the millisecond before the silence, in 16-bit units (of 32,767).
        public var lastMillisecondPeak: Int

        public var description: String {
            "last ms peak \(lastMillisecondPeak), silent after \(String(format: "%.1f", silenceAfter * 1000)) ms"
        }
    }

    /// The end of sound around `time` (a cut asked then): the first sample from `slack` seconds
    /// before `time` on that starts `quiet` seconds of digital silence and follows a sound; nil if
    /// none starts within `window` seconds after `time`.
    public func cut(at time: Double, within window: Double = 0.1, quiet: Double = 0.02, slack: Double = 0.01) -> CutSound? {
        let quietCount = max(1, Int(quiet * Double(sampleRate)))
        let end = min(index(atTime: time + window), samples.count - quietCount)
        var i = max(1, index(atTime: time - slack))
        while i < end {
            guard abs(samples[i - 1]) >= Self.silenceLevel, abs(samples[i]) < Self.silenceLevel else {
                i += 1
                continue
            }
            // A silent run must last `quiet`: else skip past the sound that breaks it.
            if let loud = samples[i..<i + quietCount].firstIndex(where: { abs($0) >= Self.silenceLevel }) {
                i = loud + 1
                continue
            }
            let millisecond = max(0, i - sampleRate / 1000)
            return CutSound(silenceAfter: self.time(ofSample: i) - time, lastMillisecondPeak: Self.peak(samples, millisecond, i))
        }
        return nil
    }

    /// The start of sound after `time` (a resume asked then): seconds from `time` to the first
    /// sample that is not silent, and the peak of the millisecond from it, in 16-bit units; nil if
    /// nothing sounds within `window` seconds.
    public func onset(after time: Double, within window: Double = 0.2) -> (soundAfter: Double, firstMillisecondPeak: Int)? {
        let start = index(atTime: time), end = min(index(atTime: time + window), samples.count)
        guard start < end, let first = samples[start..<end].firstIndex(where: { abs($0) >= Self.silenceLevel }) else {
            return nil
        }
        return (self.time(ofSample: first) - time, Self.peak(samples, first, min(samples.count, first + sampleRate / 1000)))
    }

    /// The sharpest bend of the waveform between `from` and `to` seconds: the largest
    /// |s[i-1] − 2 s[i] + s[i+1]|, in 16-bit units. A jump of the waveform (a click) bends it by
    /// about its height; a 440 Hz tone at half scale, ramped or not, by about 54. The edges of a
    /// dropout (`dropouts`) are not counted: they are the server's or the recorder's, not the sound's.
    public func sharpestBend(from: Double, to: Double) -> Int {
        let a = max(1, index(atTime: from)), b = min(samples.count - 1, index(atTime: to))
        guard b > a else { return 0 }
        let gaps = dropouts(in: a..<b)
        var sharpest: Float = 0
        for i in a..<b where !gaps.contains(where: { $0.lowerBound - 1 <= i && i <= $0.upperBound }) {
            sharpest = max(sharpest, abs(samples[i - 1] - 2 * samples[i] + samples[i + 1]))
        }
        return Int((sharpest * 32_768).rounded())
    }

    /// The dropouts among `range`'s samples: digital silence from a quarter millisecond to `Self.longestDropout`
    /// inside a sound that goes on at full level (a peak of `Self.dropoutEdgeLevel` or more in the
    /// half millisecond on each side). A server that missed its turn under load, or a stream it
    /// starved, leaves one; a cut or a resume never does, since each goes through a ramp, to or from
    /// a silence that lasts.
    public func dropouts(in range: Range<Int>) -> [Range<Int>] {
        let longest = Int(Self.longestDropout * Double(sampleRate)), edge = max(1, sampleRate / 2000)
        // A tone passes through zero on a sample now and then: a quarter of a millisecond at least.
        let shortest = max(2, sampleRate / 4000)
        var found: [Range<Int>] = []
        var i = max(range.lowerBound, edge)
        let end = min(range.upperBound, samples.count - edge)
        while i < end {
            guard abs(samples[i]) < Self.silenceLevel, abs(samples[i - 1]) >= Self.silenceLevel else {
                i += 1
                continue
            }
            var after = i
            while after < samples.count, after - i <= longest, abs(samples[after]) < Self.silenceLevel { after += 1 }
            if after - i >= shortest, after - i <= longest, after + edge <= samples.count,
                Self.peak(samples, i - edge, i) >= Self.dropoutEdgeLevel, Self.peak(samples, after, after + edge) >= Self.dropoutEdgeLevel
            {
                found.append(i..<after)
            }
            i = after
        }
        return found
    }

    /// The longest silence `dropouts` takes for one: a few of the blocks a server skips when it
    /// misses its turn, far shorter than the silence a cut leaves.
    public static let longestDropout = 0.004
    /// The least peak, in 16-bit units, of the sound around a dropout: a quarter of full scale,
    /// which the half-scale test tones exceed in any half millisecond and no ramp's end reaches.
    public static let dropoutEdgeLevel = 8_192

    /// Peak |sample| of `s[a..<b]` in 16-bit units.
    public static func peak(_ s: [Float], _ a: Int, _ b: Int) -> Int {
        guard b > a else { return 0 }
        let peak = s[a..<b].reduce(Float(0)) { max($0, abs($1)) }
        return Int((peak * 32_768).rounded())
    }

    static func rms(_ s: [Float], _ a: Int, _ b: Int) -> Double {
        guard b > a else { return 0 }
        var sum = 0.0
        for i in a..<b { sum += Double(s[i]) * Double(s[i]) }
        return (sum / Double(b - a)).squareRoot()
    }
}

/// Records what the null sink `nullsink` plays, with ~5 ms fragments, which also forces the null sink
/// to run at low latency: from the server's speaker source (`PrivatePulseServer.speakerSource`) where
/// it has one, else from `nullsink.monitor`, or from the source named. Own threaded mainloop; all
/// state is touched under its lock.
///
/// PulseAudio plays a stream uncorked, or a write that lands where the sink already mixed, at once
/// by rewinding its sink; its monitor passes on what the sink mixed as soon as it mixed it, so a
/// recording of the monitor keeps what was mixed before the rewind and loses the start of what is
/// mixed again, which a real sink plays. The speaker source holds back as much as the sink can
/// rewind, so what it records is what a speaker would play, rewinds included.
public final class MonitorRecorder {
    public let sampleRate = 48_000
    private let server: String
    /// The source named, or nil: the speaker if the server has one, else the null sink's monitor.
    private let named: String?
    /// The source recorded (once `start()` has chosen it).
    private var source: String
    /// The sink whose sound is recorded, woken if it sleeps.
    private static let sink = "nullsink"
    /// Fragment length: PulseAudio's null sink then mixes blocks this long, and a sample's time is
    /// known to about that (it is dated by its fragment's arrival).
    private let fragmentMilliseconds: Int
    private let mainloop: OpaquePointer
    private var context: OpaquePointer?
    private var stream: OpaquePointer?
    // Under the mainloop lock:
    private var samples: [Float] = []
    private var chunkEnds: [(end: Int, time: Double)] = []
    private var recording = false
    private var zero = MonitorRecorder.now()

    public init(server: String, source: String? = nil, fragmentMilliseconds: Int = 5) {
        self.server = server
        named = source
        self.source = source ?? "\(Self.sink).monitor"
        self.fragmentMilliseconds = max(1, fragmentMilliseconds)
        mainloop = pa_threaded_mainloop_new()
        pa_threaded_mainloop_start(mainloop)
    }

    deinit {
        pa_threaded_mainloop_lock(mainloop)
        teardown()
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    /// Now, in seconds on CLOCK_MONOTONIC.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Seconds since the recorder's zero (set by `start()`), on the clock `Recording` uses.
    public func elapsed() -> Double { Self.now() - zero }

    /// A moment taken with `MonitorRecorder.now()`, in recording time.
    public func elapsed(at moment: Double) -> Double { moment - zero }

    /// Connects, starts recording and waits until the record stream is running.
    public func start(timeout: Double = 5) throws {
        pa_threaded_mainloop_lock(mainloop)
        teardown()
        samples = []
        chunkEnds = []
        let ud = Unmanaged.passUnretained(self).toOpaque()
        guard let c = pa_context_new(pa_threaded_mainloop_get_api(mainloop), "a11y-monitor-recorder") else {
            pa_threaded_mainloop_unlock(mainloop)
            throw TestFailure("pa_context_new failed")
        }
        context = c
        // The callbacks never hold a reference of their own to `self`: if one did while the test let
        // go of the recorder (a server killed mid-test fires the state callback), the last release,
        // and so `deinit`, would run on the mainloop thread, where locking the mainloop aborts
        // ("pa_threaded_mainloop_lock ... in_worker", seen in SoundServerTests). `deinit` takes the
        // lock, which a running callback holds, before it removes them.
        pa_context_set_state_callback(c, { _, loop in
            guard let loop else { return }
            pa_threaded_mainloop_signal(OpaquePointer(loop), 0)
        }, UnsafeMutableRawPointer(mainloop))
        if pa_context_connect(c, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            let msg = String(cString: pa_strerror(pa_context_errno(c)))
            teardown()
            pa_threaded_mainloop_unlock(mainloop)
            throw TestFailure("recorder cannot connect to \(server): \(msg)")
        }
        pa_threaded_mainloop_unlock(mainloop)

        let deadline = Self.now() + timeout
        // Wait for the context.
        while true {
            pa_threaded_mainloop_lock(mainloop)
            let st = pa_context_get_state(c)
            pa_threaded_mainloop_unlock(mainloop)
            if st == PA_CONTEXT_READY { break }
            if st == PA_CONTEXT_FAILED || st == PA_CONTEXT_TERMINATED || Self.now() > deadline {
                pa_threaded_mainloop_lock(mainloop)
                teardown()
                pa_threaded_mainloop_unlock(mainloop)
                throw TestFailure("recorder context did not become ready (\(st.rawValue))")
            }
            usleep(1_000)
        }

        if named == nil {
            source = hasSource(PrivatePulseServer.speakerSource, on: c, until: deadline)
                ? PrivatePulseServer.speakerSource : "\(Self.sink).monitor"
        }
        pa_threaded_mainloop_lock(mainloop)
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(sampleRate), channels: 1)
        guard let s = pa_stream_new(c, "monitor-recorder", &spec, nil) else {
            teardown()
            pa_threaded_mainloop_unlock(mainloop)
            throw TestFailure("pa_stream_new failed")
        }
        stream = s
        pa_stream_set_read_callback(s, { s, _, ud in
            guard let s, let ud else { return }
            Unmanaged<MonitorRecorder>.fromOpaque(ud)._withUnsafeGuaranteedRef { $0.readAvailable(s) }
        }, ud)
        let fragment = UInt32(sampleRate * 4 * fragmentMilliseconds / 1000)  // float32 mono
        var attr = pa_buffer_attr(
            maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
            fragsize: fragment)
        let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue)
        if pa_stream_connect_record(s, source, &attr, flags) < 0 {
            let msg = String(cString: pa_strerror(pa_context_errno(c)))
            teardown()
            pa_threaded_mainloop_unlock(mainloop)
            throw TestFailure("recorder cannot record \(source): \(msg)")
        }
        pa_threaded_mainloop_unlock(mainloop)
        while true {
            pa_threaded_mainloop_lock(mainloop)
            let st = pa_stream_get_state(s)
            if st == PA_STREAM_READY {
                zero = Self.now()
                recording = true
            }
            pa_threaded_mainloop_unlock(mainloop)
            if st == PA_STREAM_READY { break }
            if st == PA_STREAM_FAILED || st == PA_STREAM_TERMINATED || Self.now() > deadline {
                pa_threaded_mainloop_lock(mainloop)
                teardown()
                pa_threaded_mainloop_unlock(mainloop)
                throw TestFailure("record stream on \(source) did not become ready")
            }
            usleep(1_000)
        }
        // An idle null sink of PulseAudio's renders 2 s blocks, and notices a client asking for
        // low latency only when it wakes for the next: the first data came 1.9 s after the record
        // stream was ready. Suspended and resumed, it starts again from now at the low latency
        // (first data after 7 ms). Only a sink that sent nothing for 100 ms is woken so: one that
        // plays does not sleep, and PipeWire's first data comes within 30 ms.
        let wakeAt = Self.now() + 0.1
        var woken = false
        while true {
            pa_threaded_mainloop_lock(mainloop)
            let flowing = !chunkEnds.isEmpty
            if flowing {
                samples = []
                chunkEnds = []
                zero = Self.now()
            } else if !woken, Self.now() > wakeAt {
                woken = true
                for suspend: Int32 in [1, 0] {
                    if let operation = pa_context_suspend_sink_by_name(c, Self.sink, suspend, nil, nil) { pa_operation_unref(operation) }
                }
            }
            pa_threaded_mainloop_unlock(mainloop)
            if flowing { break }
            if Self.now() > deadline {
                pa_threaded_mainloop_lock(mainloop)
                teardown()
                pa_threaded_mainloop_unlock(mainloop)
                throw TestFailure("no data from \(source) within \(timeout) s")
            }
            usleep(1_000)
        }
    }

    /// Whether the server has a source named `name` (false if it does not say by `deadline`).
    private func hasSource(_ name: String, on c: OpaquePointer, until deadline: Double) -> Bool {
        final class Answer { var found: Bool?; var done = false }
        let answer = Answer()
        pa_threaded_mainloop_lock(mainloop)
        let operation = pa_context_get_source_info_by_name(c, name, { _, info, eol, userdata in
            guard let userdata else { return }
            let answer = Unmanaged<Answer>.fromOpaque(userdata).takeUnretainedValue()
            if eol == 0, info != nil { answer.found = true }
            if eol != 0 { answer.done = true }
        }, Unmanaged.passUnretained(answer).toOpaque())
        pa_threaded_mainloop_unlock(mainloop)
        defer {
            pa_threaded_mainloop_lock(mainloop)
            if let operation {
                pa_operation_cancel(operation)
                pa_operation_unref(operation)
            }
            pa_threaded_mainloop_unlock(mainloop)
        }
        guard operation != nil else { return false }
        while true {
            pa_threaded_mainloop_lock(mainloop)
            let done = answer.done
            pa_threaded_mainloop_unlock(mainloop)
            if done || Self.now() > deadline { break }
            usleep(1_000)
        }
        return withExtendedLifetime(answer) { answer.found == true }
    }

    /// What was recorded so far, without stopping.
    public func snapshot() -> Recording {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return Recording(sampleRate: sampleRate, samples: samples, chunkEnds: chunkEnds)
    }

    /// Stops recording and returns everything recorded since `start()`.
    @discardableResult
    public func stop() -> Recording {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        if let s = stream { readAvailable(s) }
        teardown()
        return Recording(sampleRate: sampleRate, samples: samples, chunkEnds: chunkEnds)
    }

    /// Mainloop thread (or caller holding the lock).
    private func readAvailable(_ s: OpaquePointer) {
        while pa_stream_readable_size(s) > 0 {
            var data: UnsafeRawPointer?
            var bytes = 0
            guard pa_stream_peek(s, &data, &bytes) == 0 else { return }
            if bytes == 0 { return }
            if recording {
                let n = bytes / 4
                if let data {
                    let p = data.bindMemory(to: Float.self, capacity: n)
                    samples.append(contentsOf: UnsafeBufferPointer(start: p, count: n))
                } else {
                    samples.append(contentsOf: repeatElement(0, count: n))  // a hole: silence
                }
                chunkEnds.append((samples.count, Self.now() - zero))
            }
            pa_stream_drop(s)
        }
    }

    /// Caller holds the lock.
    private func teardown() {
        recording = false
        if let s = stream {
            pa_stream_set_read_callback(s, nil, nil)
            pa_stream_disconnect(s)
            pa_stream_unref(s)
            stream = nil
        }
        if let c = context {
            pa_context_set_state_callback(c, nil, nil)
            pa_context_disconnect(c)
            pa_context_unref(c)
            context = nil
        }
    }
}
