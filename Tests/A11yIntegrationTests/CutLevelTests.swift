// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// A cut anywhere in speech, not only where the other cut tests aim (40 ms into a word, a steady
/// vowel): `stop`s and immediate `pause`s at random moments of a sentence said by the daemon,
/// on PulseAudio and on PipeWire's pulse server, heard at the null sink's monitor (48 kHz, 1 ms
/// fragments). Every one must end in a ramp: its last millisecond before silence under
/// `Recording.clickLimit` (−27 dBFS), whatever the speech was doing when it came.
///
/// Speech falls silent on its own too (eSpeak closes its stops to digital silence within a
/// millisecond), and a cut asked just before such a silence would be found there. So the sentence
/// is first heard whole, as a reference; each cut item is aligned with it, and a cut whose silence
/// starts where the reference is itself quiet is counted as the speech's own and not judged.
@Suite(.serialized) struct CutLevelTests {
    /// Cuts per sound server, half `stop`, half immediate `pause` (`A11YD_TEST_CUTS` for more).
    static let cuts = Int(ProcessInfo.processInfo.environment["A11YD_TEST_CUTS"] ?? "") ?? 16
    /// The moments cut: uniformly random between these seconds after the item's `started` (the
    /// sentence speaks throughout them).
    static let earliest = 0.1, latest = 1.6

    enum Cut: String { case stop, pause }

    struct Asked {
        var cut: Cut
        var delay: Double
        /// When the item was posted and the cut asked, in recording time.
        var posted: Double
        var at: Double
    }

    @Test(arguments: SoundServerKind.allCases)
    func aCutAtAnyMomentOfSpeechEndsInARamp(_ kind: SoundServerKind) async throws {
        let daemon = try await DaemonHarness(soundServer: kind)
        let recorder = MonitorRecorder(server: daemon.pulse.serverAddress, fragmentMilliseconds: 1)
        try recorder.start()
        let client = try await daemon.client()
        try await client.send(RequestLine(.subscribe(all: true), id: .string("subscribe")))
        try await client.waitFor("subscribed") { $0.id == .string("subscribe") }

        let referencePosted = recorder.elapsed()
        _ = try await client.finished(try await client.post(.say(longSentence)))
        try await Task.sleep(for: .milliseconds(100))
        let reference = try #require(Reference(recorder.snapshot(), posted: referencePosted), "the whole sentence was not heard")

        let seed = ProcessInfo.processInfo.environment["A11YD_TEST_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)

        func ask(_ cut: Cut, after delay: Double) async throws -> Asked {
            let posted = recorder.elapsed()
            let id = try await client.post(.say(longSentence))
            try await client.waitFor("started") { $0.event == "started" && $0.utterance == id }
            try await Task.sleep(for: .seconds(delay))
            let asked = Asked(cut: cut, delay: delay, posted: posted, at: recorder.elapsed())
            switch cut {
            case .stop:
                try await client.send(RequestLine(.stop))
            case .pause:
                try await client.send(RequestLine(.pause(.immediate)))
                try await client.waitFor("paused") { $0.event == "paused" && $0.utterance == id }
                try await Task.sleep(for: .milliseconds(50))
                try await client.send(RequestLine(.stop))
            }
            _ = try await client.finished(id)
            try await Task.sleep(for: .milliseconds(50))
            return asked
        }

        var asked: [Asked] = []
        for index in 0..<Self.cuts {
            let delay = Self.earliest + (Self.latest - Self.earliest) * random.unit()
            asked.append(try await ask(index % 2 == 0 ? .stop : .pause, after: delay))
        }
        let first = recorder.snapshot()
        let heard = asked.map { reference.judge($0, in: first) }
        // A loaded machine makes a server drop a block now and then (a gap amid speech): a cut heard
        // wrong is asked again once, at the same moment; a fault of the cut's shows twice.
        var again: [Asked] = []
        for (cut, verdict) in zip(asked, heard) where verdict.problem != nil { again.append(try await ask(cut.cut, after: cut.delay)) }
        try await Task.sleep(for: .milliseconds(50))
        let second = recorder.stop()
        let twice = again.compactMap { cut in
            reference.judge(cut, in: second).problem.map { "\(cut.cut.rawValue) \(String(format: "%.3f", cut.delay)) s in, twice: \($0)" }
        }

        let judged = heard.filter { $0.problem == nil && $0.lastMillisecondPeak != nil && !$0.ownPause }
        let peaks = judged.compactMap(\.lastMillisecondPeak).sorted(), times = judged.compactMap(\.silenceAfter).sorted()
        let levels = judged.compactMap(\.speechLevel).sorted()
        print("""
            \(kind), seed \(seed): \(asked.count) cuts at random moments, \(judged.count) judged in speech (its level \
            there median \(levels.isEmpty ? -1 : levels[levels.count / 2]), loudest \(levels.last ?? -1) of 32767), \
            \(heard.filter(\.ownPause).count) where the speech fell quiet on its own; last ms before silence median \
            \(peaks.isEmpty ? -1 : peaks[peaks.count / 2]), worst \(peaks.last ?? -1) of 32767; silent after median \
            \(times.isEmpty ? "-" : String(format: "%.1f", times[times.count / 2] * 1000)) ms, worst \
            \(String(format: "%.1f", (times.last ?? -1) * 1000)) ms; asked again: \
            \(zip(asked, heard).compactMap { cut, verdict in verdict.problem.map { "\(cut.cut.rawValue): \($0)" } })
            """)
        #expect(twice.isEmpty, "\(kind), seed \(seed) (A11YD_TEST_SEED repeats it): \(twice)")
        // Most moments of the sentence are speech: a run that judged few cuts judged nothing.
        #expect(heard.filter { $0.lastMillisecondPeak != nil && !$0.ownPause }.count >= Self.cuts / 2, "\(heard)")
        await daemon.shutDown()
    }

    /// What one cut sounded like.
    struct Verdict: CustomStringConvertible {
        /// Peak of the last millisecond before the cut's silence, in 16-bit units; nil if not found.
        var lastMillisecondPeak: Int?
        var silenceAfter: Double?
        /// The sentence's own peak over the 5 ms before the silence, in the reference: how loud the
        /// speech was that the cut took down.
        var speechLevel: Int?
        /// The silence starts where the sentence, heard whole, is quiet too: the speech's own.
        var ownPause = false
        var problem: String?

        var description: String {
            "last ms \(lastMillisecondPeak ?? -1), level \(speechLevel ?? -1)\(ownPause ? ", own pause" : "")\(problem.map { ": \($0)" } ?? "")"
        }
    }

    /// The sentence heard whole: its samples from its onset.
    struct Reference {
        let samples: ArraySlice<Float>
        let sampleRate: Int

        init?(_ recording: Recording, posted: Double) {
            guard let onset = recording.firstAudibleTime(after: posted),
                let end = recording.lastAudibleTime()
            else { return nil }
            let first = recording.index(atTime: onset), last = recording.index(atTime: end)
            guard last > first else { return nil }
            samples = recording.samples[first...last]
            sampleRate = recording.sampleRate
        }

        /// The offset into the reference of the item's sample `index`, for an item whose onset is
        /// at `onset`: the lag that best matches the item's 50 ms ending 10 ms before `anchor` (the
        /// cut's request: up to there the item is the sentence) with the reference, within ±10 ms
        /// of where the onsets put it (a server may drop a block before that).
        func offset(of index: Int, anchor: Int, onset: Int, in recording: Recording) -> Int? {
            let window = sampleRate / 20, maxLag = sampleRate / 100
            let start = anchor - sampleRate / 100 - window
            guard start > onset, start + window <= recording.samples.count else { return nil }
            let estimate = start - onset
            var best = (lag: 0, distance: Float.infinity)
            recording.samples.withUnsafeBufferPointer { item in
                samples.withUnsafeBufferPointer { reference in
                    for lag in -maxLag...maxLag {
                        let from = estimate + lag
                        guard from >= 0, from + window <= reference.count else { continue }
                        var distance: Float = 0
                        for i in 0..<window { distance += abs(item[start + i] - reference[from + i]) }
                        if distance < best.distance { best = (lag, distance) }
                    }
                }
            }
            return best.distance.isFinite ? index - onset + best.lag : nil
        }

        /// Peak of the reference over `range` of offsets, in 16-bit units (0 outside it).
        func peak(_ range: Range<Int>) -> Int {
            let lower = max(0, range.lowerBound), upper = min(samples.count, range.upperBound)
            return Recording.peak(Array(samples), lower, upper)
        }

        func judge(_ asked: CutLevelTests.Asked, in recording: Recording) -> Verdict {
            func problem(_ text: String) -> Verdict {
                Verdict(problem: "\(text) (\(asked.cut.rawValue) at \(String(format: "%.3f", asked.at)) s)")
            }
            guard let onsetTime = recording.firstAudibleTime(after: asked.posted), onsetTime < asked.at else {
                return problem("the item was not heard before the cut")
            }
            let millisecond = sampleRate / 1000
            let asking = recording.index(atTime: asked.at)
            // Silent as the cut came: it landed in a pause of the speech's own, with nothing to take down.
            if Recording.peak(recording.samples, max(0, asking - millisecond), asking) == 0 {
                return Verdict(ownPause: true)
            }
            guard let cut = recording.cut(at: asked.at, within: 0.05) else {
                let peaks = stride(from: asked.at - 0.02, to: asked.at + 0.06, by: 0.01).map { start in
                    Recording.peak(recording.samples, recording.index(atTime: start), recording.index(atTime: start + 0.01))
                }
                return problem("no silence within 50 ms; peaks of each 10 ms from 20 ms before: \(peaks)")
            }
            let silence = recording.index(atTime: asked.at + cut.silenceAfter)
            guard let offset = offset(of: silence, anchor: asking, onset: recording.index(atTime: onsetTime), in: recording) else {
                return problem("the item could not be aligned with the sentence heard whole")
            }
            var verdict = Verdict(lastMillisecondPeak: cut.lastMillisecondPeak, silenceAfter: cut.silenceAfter)
            verdict.speechLevel = peak(offset - 5 * millisecond..<offset)
            // The sentence heard whole is quiet from there on too: the silence is the speech's own.
            if peak(offset..<offset + 3 * millisecond) < Recording.clickLimit {
                verdict.ownPause = true
                return verdict
            }
            if cut.lastMillisecondPeak >= Recording.clickLimit || cut.silenceAfter > 0.04 {
                verdict.problem = "\(cut), where the speech peaked at \(verdict.speechLevel ?? -1) (\(asked.cut.rawValue) at \(String(format: "%.3f", asked.at)) s)"
            }
            return verdict
        }
    }
}
