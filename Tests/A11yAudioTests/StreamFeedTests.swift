// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yAudio
import A11yCore
import A11yTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A model of one stream as the server and `PlaybackStream` keep it: what the server has read and
/// holds, and what the client knows of it. It carries out the feed's effects as they would.
struct ModelStream {
    var format: AudioFormat
    var serverRewinds = true
    var exists = true
    var isReady = true
    var isCorked = true
    var hasBeenWritten = false
    /// What the server has read (played).
    var readFrame: Int64 = 0
    /// The server's write index, and what the client knows of it (nothing after a flush until it
    /// asked the read index).
    var serverWriteFrame: Int64 = 0
    var knownWriteFrame: Int64? = 0
    /// The track frame an outstanding drain was asked through.
    var drainingThrough: Int?
    var mayBeDraining = false
    var awaitsReadIndex = false
    var targetLength = 1_440
    var blockFrames: Int64 = 240

    init(format: AudioFormat) { self.format = format }

    var values: StreamFeed.Stream? {
        guard exists else { return nil }
        let held = Int(serverWriteFrame - readFrame)
        return StreamFeed.Stream(
            format: format, isReady: isReady, isCorked: isCorked, hasBeenWritten: hasBeenWritten,
            writeFrame: knownWriteFrame, writableFrames: isReady ? max(0, targetLength - held) : 0,
            isDraining: drainingThrough != nil, mayBeDraining: mayBeDraining, awaitsReadIndex: awaitsReadIndex,
            reading: isReady
                ? StreamReading(readFrame: readFrame, readingNow: readFrame, furthestRead: readFrame + blockFrames, sinkLatency: 0)
                : nil,
            blockFrames: blockFrames, serverRewinds: serverRewinds)
    }

    mutating func carryOut(_ effects: [StreamFeed.Effect]) {
        for effect in effects {
            switch effect {
            case .write(_, let frames, let at):
                let count = Int64(frames.count)
                serverWriteFrame = (at ?? serverWriteFrame) + count
                knownWriteFrame = at.map { $0 + count } ?? knownWriteFrame.map { $0 + count }
                hasBeenWritten = true
            case .cork: isCorked = true
            case .uncork: isCorked = false
            case .flush:
                serverWriteFrame = readFrame
                knownWriteFrame = nil
                mayBeDraining = false
            case .drain(let through):
                drainingThrough = through
                mayBeDraining = true
            case .cancelDrain: drainingThrough = nil
            case .askReadIndex: awaitsReadIndex = true
            case .openStream(let format):
                // A new stream, its indices at zero, on the same server.
                var new = ModelStream(format: format)
                new.serverRewinds = serverRewinds
                new.blockFrames = blockFrames
                new.isReady = false
                self = new
            case .dropStream: exists = false
            case .refreshTiming, .attemptConnection, .audible, .publish, .endProgress, .ignored, .warning: break
            }
        }
    }

    /// The server plays `frames` more, if uncorked, up to what it holds.
    mutating func play(_ frames: Int64) {
        guard exists, isReady, !isCorked else { return }
        readFrame = min(readFrame + frames, max(serverWriteFrame, readFrame))
    }
}

/// The feed and a model stream, each input's effects carried out on the model.
struct FeedRig {
    var feed = StreamFeed()
    var stream: ModelStream

    init(rewinds: Bool = true, blockFrames: Int64 = 240) {
        stream = ModelStream(format: StreamFeedTests.format)
        stream.serverRewinds = rewinds
        stream.blockFrames = blockFrames
    }

    var id: TrackID { feed.trackID }

    @discardableResult
    mutating func send(_ input: StreamFeed.Input) -> [StreamFeed.Effect] {
        let effects = feed.handle(input, stream: stream.values)
        stream.carryOut(effects)
        return effects
    }

    /// The server answers the read-index question (and, after a flush, the write index with it).
    @discardableResult
    mutating func answerReadIndex() -> [StreamFeed.Effect] {
        stream.awaitsReadIndex = false
        if stream.knownWriteFrame == nil { stream.knownWriteFrame = stream.serverWriteFrame }
        return send(.readIndex(stream.readFrame))
    }

    /// The server plays `frames` and asks for more.
    @discardableResult
    mutating func play(_ frames: Int64) -> [StreamFeed.Effect] {
        stream.play(frames)
        return send(.writable)
    }

    @discardableResult
    mutating func finishDrain() -> [StreamFeed.Effect] {
        guard let through = stream.drainingThrough else { return [] }
        stream.drainingThrough = nil
        return send(.drained(through: through, success: true))
    }

    mutating func begin(appending frames: Int = 0, ending: Bool = false) -> [StreamFeed.Effect] {
        var effects = send(.begin(StreamFeedTests.format))
        if frames > 0 { effects += send(.append(StreamFeedTests.tone(frames), id)) }
        if ending { effects += send(.end(id)) }
        return effects
    }
}

/// The output's rules (`StreamFeed`), one test per rule against a model stream, then random runs
/// that check the invariant after every input.
@Suite struct StreamFeedTests {
    /// 48 frames a millisecond: a ramp is 192 frames, the silence after it 1,440, a new track's
    /// lead 24 frames and a ramp's lead on PulseAudio 96.
    static let format = AudioFormat(sampleRate: 48_000, channels: 1)
    static let ramp: Int64 = 192

    /// A steady tone at half scale, `frames` long (at most a second).
    static func tone(_ frames: Int) -> [Int16] { Array(second[..<min(frames, second.count)]) }
    static let second: [Int16] = (0..<48_000).map { Int16(16_000 * sin(Double($0) * 0.05)) }

    struct Write: Equatable {
        var samples: [Int16]
        var frames: Range<Int>
        var at: Int64?
    }

    func writes(_ effects: [StreamFeed.Effect]) -> [Write] {
        effects.compactMap { if case .write(let s, let f, let at) = $0 { Write(samples: s, frames: f, at: at) } else { nil } }
    }

    func tail(_ feed: StreamFeed) -> StreamTail? {
        if case .tail(let tail) = feed.stage { tail } else { nil }
    }

    @Test func aTrackIsWrittenFromItsStartAtOnceThenUncorked() {
        var rig = FeedRig()
        _ = rig.begin()
        let effects = rig.send(.append(Self.tone(4_800), rig.id))
        #expect(same(writes(effects).map(\.frames), [0..<1_440]), "what the server asks for, no more")
        #expect(same(writes(effects).map(\.at), [0]), "a fresh stream: the track starts at its frame 0")
        let refresh = effects.firstIndex(of: .refreshTiming), uncork = effects.firstIndex(of: .uncork)
        #expect(refresh != nil && uncork != nil && refresh! < uncork!, "a reading is asked as it starts playing")
        #expect(effects.last == .publish && effects.contains(.audible(true)))
    }

    @Test func aCutWhilePlayingRewritesWhatIsUnreadAsARampThenSilence() {
        var rig = FeedRig()
        _ = rig.begin(appending: 4_800)
        rig.play(480)
        #expect(same(rig.stream.serverWriteFrame, 1_920))
        let effects = rig.send(.cancel(rig.id))
        // Past where the server reads (480) by a ramp's lead on a server that rewinds (96).
        let ramp = writes(effects)
        #expect(ramp.map(\.at) == [576] && ramp.first?.frames == 0..<(192 + 1_440), "the ramp, then 30 ms of silence")
        let samples = ramp.first?.samples ?? []
        #expect(samples.count == 1_632 && abs(Int(samples[0]) - Int(Self.tone(577)[576])) < 20, "from the track's own sample")
        #expect(samples[192...].allSatisfy { $0 == 0 })
        #expect(!effects.contains(.cork) && !effects.contains(.flush), "a cork or a flush is itself the cut")
        #expect(effects.contains(.refreshTiming), "a reading soon says when the ramp is heard")
        #expect(same(tail(rig.feed), StreamTail(rampEnd: 768, end: 2_208, ramp: Array(samples[..<192]), channels: 1)))
        #expect(rig.feed.track == nil)
        // Heard: the server read past its end, a block and the margin: the silence left is dropped.
        rig.stream.play(768 + 240 + 96 - 480 - 1)
        #expect(!rig.send(.timing).contains(.flush), "not yet heard")
        rig.stream.play(1)
        let heard = rig.send(.timing)
        #expect(heard.contains(.cork) && heard.contains(.flush) && rig.feed.stage == .clear)
    }

    @Test func aNewTrackWithAudioToCoverTheRestOfTheRampStartsInsideItMixed() {
        var rig = FeedRig()
        _ = rig.begin(appending: 4_800)
        rig.play(480)
        let rampSamples = writes(rig.send(.cancel(rig.id))).first?.samples ?? []
        let effects = rig.begin(appending: 4_800)
        // Inside the ramp, from its start (576; a new track's lead, 504, is earlier), over what
        // the server holds after it: not bounded by what it asks for.
        let write = writes(effects)
        #expect(write.map(\.at) == [576] && write.first?.frames == 0..<1_632)
        let tone = Self.tone(200)
        #expect(same(write.first.map { $0.samples[0] == Int16(clamping: Int(tone[0]) + Int(rampSamples[0])) }, true), "mixed")
        #expect(same(write.first.map { $0.samples[192] == tone[192] }, true), "past the ramp: the track alone")
        #expect(rig.feed.stage == .clear && rig.feed.track?.segment == StreamSegment(trackFrame: 0, streamFrame: 576))
    }

    @Test func aNewTrackWithLittleAudioFollowsTheRamp() {
        var rig = FeedRig()
        _ = rig.begin(appending: 4_800)
        rig.play(480)
        rig.send(.cancel(rig.id))
        #expect(writes(rig.begin()).isEmpty, "nothing to write yet: it waits")
        let effects = rig.send(.append(Self.tone(100), rig.id))
        #expect(writes(effects).map(\.at) == [768] && writes(effects).first?.samples == Self.tone(100))
    }

    /// On PipeWire nothing follows a tail while the server may be draining: the new track waits
    /// until the ramp has been heard, then starts afresh after a flush, written at once, and is
    /// placed by the server's answer.
    @Test func onPipeWireATrackBehindADrainingTailWaitsForTheRampThenStartsAfresh() {
        var rig = FeedRig(rewinds: false, blockFrames: 64)
        let first = rig.begin(appending: 480, ending: true)
        #expect(first.contains(.drain(through: 480)))
        rig.play(240)
        let cut = writes(rig.send(.cancel(rig.id)))
        // Past the furthest it may have read: a block more (64) and the lead (24).
        #expect(same(cut.map(\.at), [328]))
        #expect(writes(rig.begin(appending: 4_800)).isEmpty, "the server may still be draining")
        #expect(writes(rig.play(100)).isEmpty)
        rig.stream.play(1_000)
        let heard = rig.send(.timing)
        #expect(heard.contains(.cork) && heard.contains(.flush) && rig.feed.stage == .landing(trackFrame: 0))
        let start = rig.send(.writable)
        #expect(writes(start).map(\.at) == [nil] && writes(start).first?.frames == 0..<1_440, "where the flush left the writer")
        #expect(start.contains(.askReadIndex) && start.contains(.uncork))
        #expect(writes(rig.play(240)).isEmpty, "nothing more until the server said where it landed")
        let placed = rig.answerReadIndex()
        // Where the flush left the writer: the server's write index less the 1,440 frames written since.
        #expect(same(rig.feed.track?.segment, StreamSegment(trackFrame: 0, streamFrame: 1_340)))
        let afterTheFirstWrite: Int64 = 1_340 + 1_440
        #expect(same(writes(placed).map(\.at), [afterTheFirstWrite]), "the rest follows, where the segment says")
    }

    @Test func aPauseRampsDownAndAResumeRampsUpRightAfterTheRamp() {
        var rig = FeedRig()
        _ = rig.begin(appending: 4_800)
        rig.play(480)
        let pause = rig.send(.setPaused(true, rig.id))
        #expect(writes(pause).map(\.at) == [576] && rig.feed.track?.cutAt == 576)
        #expect(!pause.contains(.cork), "the ramp plays out; the stream is corked once it is heard")
        #expect(writes(rig.play(48)).isEmpty, "cut: nothing more until it resumes")
        let resume = rig.send(.setPaused(false, rig.id))
        let up = writes(resume)
        #expect(same(up.map(\.at), [768]), "right after the ramp")
        #expect(same(up.first.map { $0.frames == 0..<(2_208 - 768) && abs($0.samples[0]) < 20 }, true), "ramping up from the cut")
        #expect(rig.feed.track?.segment == StreamSegment(trackFrame: 576, streamFrame: 768) && rig.feed.stage == .clear)
    }

    @Test func aResumeAfterTheRampWasHeardStartsWhereTheFlushLeftTheWriter() {
        var rig = FeedRig()
        _ = rig.begin(appending: 4_800)
        rig.play(480)
        rig.send(.setPaused(true, rig.id))
        rig.stream.play(1_000)
        let heard = rig.send(.timing)
        #expect(heard.contains(.cork) && heard.contains(.flush))
        let resume = rig.send(.setPaused(false, rig.id))
        #expect(writes(resume).map(\.at) == [nil] && resume.contains(.askReadIndex) && resume.contains(.uncork))
        rig.answerReadIndex()
        #expect(same(rig.feed.track?.segment, StreamSegment(trackFrame: 576, streamFrame: 1_480)))
    }

    @Test func aHoldBehindWhatTheServerHasRewindsAndWritesAgainOnlyOnceTheServerSaidWhereItReads() {
        var rig = FeedRig()
        _ = rig.begin(appending: 4_800)
        rig.play(100)
        let hold = rig.send(.hold(at: 500, rig.id))
        #expect(writes(hold).isEmpty && hold.contains(.cork) && hold.contains(.flush) && hold.contains(.askReadIndex))
        #expect(writes(rig.send(.writable)).isEmpty, "no write while the read index is awaited")
        let answer = rig.answerReadIndex()
        #expect(writes(answer).map(\.frames) == [100..<500] && writes(answer).map(\.at) == [100])
        #expect(answer.contains(.uncork) && answer.contains(.drain(through: 500)), "played to the hold, then drained")
    }

    /// A stream kept ready for the next track (`StreamPair`'s other stream): opened without a
    /// track, reopened in another format, opened again after a reconnect; left alone while a track
    /// or a cut's ramp plays on it.
    @Test func aPreparedStreamIsKeptOpenInItsFormatWithoutATrack() {
        var rig = FeedRig()
        rig.stream.exists = false
        let opened = rig.send(.prepare(Self.format))
        #expect(opened.contains(.openStream(Self.format)) && writes(opened).isEmpty)
        rig.stream.isReady = true
        #expect(rig.send(.prepare(Self.format)).isEmpty, "open already")
        let stereo = AudioFormat(sampleRate: 48_000, channels: 2)
        let reopened = rig.send(.prepare(stereo))
        #expect(reopened.contains(.dropStream) && reopened.contains(.openStream(stereo)))
        rig.stream.isReady = true
        rig.send(.connectionLost)
        #expect(rig.send(.connected).contains(.openStream(stereo)), "the connection back, the stream too")
        var playing = FeedRig()
        _ = playing.begin(appending: 4_800)
        #expect(!playing.feed.isQuiet)
        #expect(playing.send(.prepare(stereo)).isEmpty, "not while a track plays")
        playing.play(480)
        playing.send(.cancel(playing.id))
        #expect(!playing.feed.isQuiet, "its ramp plays")
        #expect(playing.send(.prepare(stereo)).isEmpty, "nor while a cut's ramp plays")
    }

    @Test func theTrackDrainsAtItsEndAndIsCorkedOnceDrained() {
        var rig = FeedRig()
        let effects = rig.begin(appending: 480, ending: true)
        #expect(effects.contains(.drain(through: 480)))
        rig.stream.play(480)
        let drained = rig.finishDrain()
        #expect(drained.contains(.cork))
        let progress = rig.feed.progress(playingAt: 480, connection: .connected)
        #expect(same(progress, PlaybackProgress(playedFrames: 480, appendedFrames: 480, isFinished: true, connection: .connected)))
    }

    @Test func aLostStreamIsOpenedAgainAndTheTrackGoesOnFromTheFirstFrameNotGiven() {
        var rig = FeedRig()
        _ = rig.begin(appending: 4_800)
        let lost = rig.send(.streamFailed)
        #expect(lost.contains(.dropStream) && lost.contains(.openStream(Self.format)))
        #expect(lost.firstIndex(of: .dropStream)! < lost.firstIndex(of: .openStream(Self.format))!)
        rig.stream.isReady = true
        let ready = rig.send(.streamReady)
        #expect(writes(ready).map(\.frames) == [1_440..<2_880] && writes(ready).map(\.at) == [0], "the new stream starts at 0")
        #expect(same(rig.feed.progress(playingAt: nil, connection: .connected)?.playedFrames, 1_440), "what the old stream had counts as played")
    }

    @Test func aCancelWhileCorkedCorksAndFlushesWithoutARamp() {
        var rig = FeedRig()
        _ = rig.begin()
        rig.send(.setPaused(true, rig.id))
        let append = rig.send(.append(Self.tone(4_800), rig.id))
        #expect(writes(append).count == 1 && !append.contains(.uncork), "written, not heard while paused")
        let cancel = rig.send(.cancel(rig.id))
        #expect(writes(cancel).isEmpty && cancel.contains(.cork) && cancel.contains(.flush) && rig.feed.stage == .clear)
        #expect(cancel.contains(.endProgress) && cancel.last == .audible(false), "told nothing more, and not heard")
        #expect(writes(rig.send(.writable)).isEmpty && rig.feed.track == nil)
    }

    @Test func callsForAnotherTrackAreIgnored() {
        var rig = FeedRig()
        _ = rig.begin(appending: 480)
        let old = rig.id
        _ = rig.begin()
        #expect(same(rig.send(.append(Self.tone(480), old)), [.ignored("append for a track that is not current", track: old)]))
        #expect(same(rig.send(.cancel(old)), [.ignored("cancel for a track that is not current", track: old)]))
    }

    // MARK: The invariant over random runs

    /// Random inputs, as an output's caller and a server would give them, on both kinds of server;
    /// after each: no write while a read index is awaited, none before what the server surely read,
    /// none for a track cancelled or cut (until it is resumed), a cut track resumed from the frame it
    /// was cut at, and the stage agrees with the track.
    @Test(arguments: [false, true]) func theInvariantHoldsOverRandomRuns(rewinds: Bool) {
        for seed in UInt64(1)...80 {
            var random = SplitMix64(seed: seed)
            var rig = FeedRig(rewinds: rewinds, blockFrames: rewinds ? 240 : 64)
            // Whether a track was begun and not cancelled since, as the caller knows it.
            var trackLive = false
            for step in 0..<300 {
                let input = randomInput(&rig, &random)
                let before = rig.stream.values
                let wasIdle = !trackLive
                if case .begin = input { trackLive = true }
                if case .cancel(let id) = input, id == rig.id { trackLive = false }
                let cutAt = rig.feed.track?.cutAt
                let wasCut = cutAt != nil
                let serverRead = rig.stream.readFrame, serverWrite = rig.stream.serverWriteFrame
                let effects = rig.send(input)
                let written = writes(effects)
                // Described only when an expectation fails (its comment is an autoclosure): describing
                // every step's input, passed or not, was most of this test's time.
                func context() -> String { "seed \(seed), step \(step), \(input)" }
                if before?.awaitsReadIndex == true, !isAnswer(input) {
                    #expect(written.isEmpty, "a write while the read index was awaited: \(context())")
                }
                if wasIdle, !isBegin(input) { #expect(written.isEmpty, "a write with no track, or a cancelled one: \(context())") }
                if wasCut, !isBegin(input), !isResume(input), !isCancel(input) {
                    #expect(written.isEmpty, "a cut track written before it resumed: \(context())")
                }
                if isCancel(input) { #expect(written.count <= 1, "at most the cut's ramp: \(context())") }
                // A cut track resumes from the frame it was cut at, ramping up from there.
                if let cutAt, isResume(input), let track = rig.feed.track, track.cutAt == nil {
                    #expect(same(track.rampUpFrom, cutAt), "resumed ramping up from \(String(describing: track.rampUpFrom)), cut at \(cutAt): \(context())")
                    let writtenNow = written.reduce(0) { $0 + $1.frames.count }
                    #expect(same(track.writtenFrames - writtenNow, cutAt), "resumed from frame \(track.writtenFrames - writtenNow), cut at \(cutAt): \(context())")
                }
                // Where the first write of this input landed: at or after what the server surely read.
                if let first = written.first {
                    let landsAt = first.at ?? serverWrite
                    #expect(landsAt >= serverRead, "written before what the server read (\(landsAt) < \(serverRead)): \(context())")
                }
                for write in written {
                    #expect(write.frames.upperBound <= write.samples.count, "\(context())")
                }
                switch rig.feed.stage {
                case .tail:
                    if let t = rig.feed.track { #expect(t.cutAt != nil || !t.knowsPosition, "a tail beside a placed track: \(context())") }
                case .landing, .asking(.landing):
                    #expect(rig.feed.track.map { !$0.knowsPosition } ?? true, "a landing for a placed track: \(context())")
                case .clear, .asking(.rewind):
                    break
                }
                if Task.isCancelled { return }
            }
        }
    }

    func isAnswer(_ input: StreamFeed.Input) -> Bool { if case .readIndex = input { true } else { false } }
    func isBegin(_ input: StreamFeed.Input) -> Bool { if case .begin = input { true } else { false } }
    func isResume(_ input: StreamFeed.Input) -> Bool { if case .setPaused(false, _) = input { true } else { false } }
    func isCancel(_ input: StreamFeed.Input) -> Bool { if case .cancel = input { true } else { false } }

    /// One input a caller or the server could give now; what the server did first (played, answered,
    /// drained, became ready) is done on the model.
    func randomInput(_ rig: inout FeedRig, _ random: inout SplitMix64) -> StreamFeed.Input {
        let id = rig.id
        let track = rig.feed.track
        while true {
            switch Int.random(in: 0..<16, using: &random) {
            case 0:
                return .begin(Self.format)
            case 1, 2:
                guard let track, !track.ended else { continue }
                return .append(Self.tone(Int.random(in: 1...2_000, using: &random)), id)
            case 3:
                guard track != nil else { continue }
                return .end(id)
            case 4:
                guard let track else { continue }
                return .hold(at: Bool.random(using: &random) ? nil : Int.random(in: 0...max(track.appendedFrames, 1), using: &random), id)
            case 5:
                return .setPaused(Bool.random(using: &random), id)
            case 6:
                return .cancel(id)
            case 7, 8, 9:
                guard rig.stream.exists, rig.stream.isReady else { continue }
                rig.stream.play(Int64.random(in: 0...600, using: &random))
                // The server's reading moves as it plays: handed over through a timing or a request.
                return Bool.random(using: &random) ? .writable : .timing
            case 10:
                guard rig.stream.awaitsReadIndex else { continue }
                rig.stream.awaitsReadIndex = false
                if rig.stream.knownWriteFrame == nil { rig.stream.knownWriteFrame = rig.stream.serverWriteFrame }
                return .readIndex(rig.stream.readFrame)
            case 11:
                guard let through = rig.stream.drainingThrough else { continue }
                rig.stream.drainingThrough = nil
                return .drained(through: through, success: rig.stream.readFrame >= rig.stream.serverWriteFrame)
            case 12:
                guard rig.stream.exists, !rig.stream.isReady else { continue }
                rig.stream.isReady = true
                return .streamReady
            case 13:
                guard rig.stream.exists, Int.random(in: 0..<4, using: &random) == 0 else { continue }
                return .streamFailed
            case 14:
                guard Int.random(in: 0..<6, using: &random) == 0 else { continue }
                return rig.stream.exists ? .connectionLost : .connected
            default:
                return .timing
            }
        }
    }
}
