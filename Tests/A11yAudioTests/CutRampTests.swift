// SPDX-License-Identifier: GPL-3.0-or-later
import A11yAudio
import A11yCore
import A11yTestSupport
import Foundation
import Logging
import Testing

/// Issue 29: a cut takes the sound down over a few milliseconds instead of from full level to zero
/// in one sample (a click), and a resume brings it up again the same way. Heard at the sink: the
/// null sink's monitor recorded at 48 kHz, on PulseAudio and on PipeWire's pulse server, each kind
/// of cut at many moments of a half-scale tone (so that each lands at another phase of it and of
/// the server's blocks).
@Suite("Cuts ramp down, resumes ramp up", .serialized)
struct CutRampTests {
    /// Moments per kind of cut, staggered by 13.7 ms (about 6 periods of the tone and 2.6 of a
    /// server's 5 ms block, so that no two land alike).
    static let moments = 8

    /// The sharpest bend a ramped tone may show (`Recording.sharpestBend`): the tone alone bends
    /// by 54 (78 on PipeWire, whose monitor is 3 dB louder); a cut from its full level by 16,000.
    static let smoothBend = 600

    enum Cut: String, CaseIterable {
        /// `cancel` while it plays.
        case stop
        /// `cancel`, then the next track at once (its sound after 60 ms of silence).
        case interrupt
        /// `cancel`, then at once the next track, sounding from its start (a 660 Hz tone fading in
        /// and out over 1 ms, as eSpeak's speech starts and ends): a key's echo cutting the last.
        /// It may begin inside the ramp, mixed with it: no click, no silence needed between them.
        case echo
        /// The same, with the tone cut 15-20 ms before its end: written to its end, its drain asked
        /// (a short echo cut by the next key). On PulseAudio the next follows as at once: no silence
        /// between them.
        case echoNearTheEnd
        /// An immediate pause, resumed 60 ms later.
        case pause
        /// An immediate pause resumed at once, while its ramp down plays: down, then up, no gap.
        case quickResume
    }

    /// One cut as it was asked, in recording time.
    struct Asked {
        var cut: Cut
        var moment: Int
        var at: Double
        var resumedAt: Double?
    }

    /// What the recording says of one cut, and what is wrong with it (nil: nothing).
    struct Heard {
        var lastMillisecondPeak: Int?
        var silenceAfter: Double?
        var firstMillisecondPeak: Int?
        var bend: Int
        var problem: String?
    }

    /// How many times a cut heard wrong is asked again at the same moment before the test fails.
    static let reasks = 4

    /// Every cut, on one server; if some stay wrong, once more on a fresh server: a private
    /// PipeWire on a loaded machine now and then runs a whole run late, reading in bursts far ahead
    /// of its clock, and then most cuts of that run lose their ramp's start, however often asked
    /// again. A fault of the cuts' shows on both servers.
    @Test(arguments: SoundServerKind.allCases)
    func everyCutRampsDownAndEveryResumeRampsUp(_ kind: SoundServerKind) async throws {
        var wrong = try await cutsStillWrong(on: kind)
        if !wrong.isEmpty {
            print("\(kind): \(wrong.count) cuts still wrong; the run again, on a fresh server")
            wrong = try await cutsStillWrong(on: kind)
        }
        #expect(wrong.isEmpty, "\(kind): \(wrong)")
    }

    /// One server, one recorder and one output for every cut (a fresh server costs its null sink's
    /// first 2 s block before the recorder hears anything). A cut heard wrong is asked again at
    /// the same moment, at the end, up to `reasks` times, after a pause: a loaded machine makes the
    /// servers skip a block now and then, in bursts; a fault of the cut's shows each time. Returns
    /// the cuts heard wrong every time.
    func cutsStillWrong(on kind: SoundServerKind) async throws -> [String] {
        let server = try kind.make()
        // 1 ms fragments: each sample dated to a millisecond.
        let recorder = MonitorRecorder(server: server.serverAddress, fragmentMilliseconds: 1)
        try recorder.start()
        let output = PulseOutput(server: server.serverAddress, logger: Logger(label: "test.cut"))
        try await output.waitUntilConnected()

        func ask(_ cut: Cut, at moment: Int) async -> Asked {
            let track = output.begin(format: mono22k).id
            let nearTheEnd = cut == .echoNearTheEnd
            output.append(tone(seconds: nearTheEnd ? 0.15 : 0.6), to: track)
            output.end(track)
            await sleep(seconds: nearTheEnd ? 0.13 + Double(moment) * 0.0007 : 0.06 + Double(moment) * 0.0137)
            var asked = Asked(cut: cut, moment: moment, at: recorder.elapsed())
            switch cut {
            case .stop:
                output.cancel(track)
            case .interrupt:
                output.cancel(track)
                let next = output.begin(format: mono22k).id
                output.append([Int16](repeating: 0, count: mono22k.frames(milliseconds: 60)) + tone(seconds: 0.05), to: next)
                output.end(next)
                await sleep(seconds: 0.11)
            case .echo, .echoNearTheEnd:
                output.cancel(track)
                let next = output.begin(format: mono22k).id
                var echo = tone(seconds: 0.05, frequency: 660)
                let fade = mono22k.frames(milliseconds: 1)
                for i in 0..<fade {
                    echo[i] = Int16(Double(echo[i]) * Double(i) / Double(fade))
                    echo[echo.count - 1 - i] = Int16(Double(echo[echo.count - 1 - i]) * Double(i) / Double(fade))
                }
                output.append(echo, to: next)
                output.end(next)
                await sleep(seconds: 0.06)
            case .pause:
                output.setPaused(true, track)
                await sleep(seconds: 0.06)
                asked.resumedAt = recorder.elapsed()
                output.setPaused(false, track)
                await sleep(seconds: 0.04)
                output.cancel(track)
            case .quickResume:
                output.setPaused(true, track)
                output.setPaused(false, track)
                await sleep(seconds: 0.05)
                output.cancel(track)
            }
            await sleep(seconds: 0.04)
            return asked
        }

        var asked: [Asked] = []
        for moment in 0..<Self.moments {
            for cut in Cut.allCases { asked.append(await ask(cut, at: moment)) }
        }
        let first = recorder.snapshot()
        let heard = asked.map { judge($0, in: first, on: kind) }
        var again: [(Asked, Heard)] = zip(asked, heard).filter { $0.1.problem != nil }
        for _ in 1...Self.reasks where !again.isEmpty {
            // Past the burst of load that spoiled them, if it was one.
            await sleep(seconds: 0.5)
            var retried: [Asked] = []
            for (cut, _) in again { retried.append(await ask(cut.cut, at: cut.moment)) }
            await sleep(seconds: 0.05)
            let recording = recorder.snapshot()
            again = retried.map { ($0, judge($0, in: recording, on: kind)) }.filter { $0.1.problem != nil }
        }
        recorder.stop()

        let firstTries = zip(asked, heard).compactMap { cut, heard in heard.problem.map { "\(cut.cut.rawValue) \(cut.moment): \($0)" } }
        func median<T: Comparable>(_ values: [T]) -> T? { values.sorted().dropFirst(values.count / 2).first }
        func ms(_ seconds: Double?) -> String { seconds.map { String(format: "%.1f ms", $0 * 1000) } ?? "-" }
        let cutPeaks = heard.compactMap(\.lastMillisecondPeak), silentAfter = heard.compactMap(\.silenceAfter)
        let onsets = heard.compactMap(\.firstMillisecondPeak), bends = heard.map(\.bend)
        print("""
            \(kind): \(cutPeaks.count) cuts, last ms before silence: median \(median(cutPeaks) ?? -1), worst \(cutPeaks.max() ?? -1) \
            of 32767; silent after median \(ms(median(silentAfter))), worst \(ms(silentAfter.max())); sharpest bend median \
            \(median(bends) ?? -1), worst \(bends.max() ?? -1); \(onsets.count) resumes judged, first ms peak median \
            \(median(onsets) ?? -1), worst \(onsets.max() ?? -1); \(again.count) still wrong when asked again: \
            \(firstTries)
            """)
        withExtendedLifetime(server) {}
        return again.compactMap { cut, heard in
            heard.problem.map { "\(cut.cut.rawValue) at moment \(cut.moment), \(Self.reasks + 1) times: \($0)" }
        }
    }

    /// What `recording` says of `asked`.
    func judge(_ asked: Asked, in recording: Recording, on kind: SoundServerKind) -> Heard {
        let at = asked.at
        func problem(_ text: String) -> String { "\(text) (at \(String(format: "%.3f", at)) s)" }
        switch asked.cut {
        case .stop, .interrupt, .pause:
            guard let cut = recording.cut(at: at, within: 0.05) else {
                return Heard(bend: 0, problem: problem("no silence within 50 ms"))
            }
            // From the cut asked on: a gap before it is none of the cut's doing.
            let bend = recording.sharpestBend(from: at, to: at + cut.silenceAfter + 0.002)
            var heard = Heard(lastMillisecondPeak: cut.lastMillisecondPeak, silenceAfter: cut.silenceAfter, bend: bend)
            // Timings are the benchmark's to report; this only bounds them loosely.
            if cut.lastMillisecondPeak >= Recording.clickLimit || cut.silenceAfter > 0.04 || bend > Self.smoothBend {
                heard.problem = problem("\(cut), sharpest bend \(bend)")
            }
            if asked.cut == .interrupt, recording.onset(after: at + 0.045, within: 0.1) == nil {
                heard.problem = problem("the next track was not heard")
            }
            guard asked.cut == .pause, heard.problem == nil, let resumed = asked.resumedAt else { return heard }
            guard let onset = recording.onset(after: resumed) else {
                heard.problem = problem("never heard again after the resume")
                return heard
            }
            // Judged on PulseAudio too: it rewinds its sink to play what follows an uncork at once,
            // and the recorder hears that as a speaker does (`PrivatePulseServer.speakerSource`).
            heard.firstMillisecondPeak = onset.firstMillisecondPeak
            let resumeBend = recording.sharpestBend(from: resumed, to: resumed + onset.soundAfter + 0.01)
            heard.bend = max(heard.bend, resumeBend)
            if onset.firstMillisecondPeak >= Recording.clickLimit || resumeBend > Self.smoothBend {
                heard.problem = problem("resumed with first ms peak \(onset.firstMillisecondPeak), sharpest bend \(resumeBend)")
            }
            return heard
        case .echo, .echoNearTheEnd:
            // The old tone ramps down as the new one comes in, mixed or one after the other:
            // smooth throughout, the new one heard, then silence once it ends. (How the new one
            // ends is not judged: PulseAudio's null sink monitor was measured to lose up to a
            // millisecond of a track's end.)
            let bend = recording.sharpestBend(from: at, to: at + 0.04)
            let next = Recording.peak(recording.samples, recording.index(atTime: at + 0.025), recording.index(atTime: at + 0.045))
            var heard = Heard(bend: bend)
            if bend > Self.smoothBend || next < 8_000 || recording.cut(at: at + 0.05, within: 0.05) == nil {
                heard.problem = problem("sharpest bend \(bend), the next track's peak \(next)")
            }
            // PipeWire's pulse server may still be draining the old track: the next waits there.
            if kind == .pulseAudio, let gap = recording.cut(at: at, within: 0.03, quiet: 0.005, slack: 0) {
                heard.problem = problem("silence between the two: \(gap)")
            }
            return heard
        case .quickResume:
            // Down and up again within 30 ms, smoothly: a dip, no step.
            let bend = recording.sharpestBend(from: at, to: at + 0.04)
            let dip = stride(from: at, to: at + 0.03, by: 0.0005).map { start in
                Recording.peak(recording.samples, recording.index(atTime: start), recording.index(atTime: start + 0.001))
            }.min() ?? .max
            var heard = Heard(bend: bend)
            if bend > Self.smoothBend || dip >= Recording.clickLimit {
                heard.problem = problem("sharpest bend \(bend), quietest ms \(dip)")
            }
            return heard
        }
    }
}
