// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yAudio
import A11yCore
import A11yTestSupport
import Testing

/// The pair and two model streams, each effect carried out on its stream's model.
struct PairRig {
    var pair = StreamPair()
    var streams: [ModelStream]

    init(rewinds: Bool = true) {
        var stream = ModelStream(format: StreamFeedTests.format)
        stream.serverRewinds = rewinds
        stream.exists = false
        streams = [stream, stream]
    }

    func model(_ lane: StreamPair.Lane) -> ModelStream { streams[lane.rawValue] }

    @discardableResult
    mutating func send(_ input: StreamFeed.Input, from lane: StreamPair.Lane? = nil) -> [(StreamPair.Lane, StreamFeed.Effect)] {
        let now = streams
        let effects = pair.handle(input, from: lane, streams: { now[$0.rawValue].values })
        for each in StreamPair.Lane.allCases {
            streams[each.rawValue].carryOut(effects.filter { $0.0 == each }.map(\.1))
        }
        return effects
    }

    /// Every stream opened is made ready.
    mutating func makeReady() {
        for lane in StreamPair.Lane.allCases where model(lane).exists && !model(lane).isReady {
            streams[lane.rawValue].isReady = true
            send(.streamReady, from: lane)
        }
    }

    /// Begins a track with `frames` of a tone; returns its id.
    mutating func begin(appending frames: Int) -> TrackID {
        send(.begin(StreamFeedTests.format))
        let id = pair.trackID
        makeReady()
        send(.append(StreamFeedTests.tone(frames), id))
        return id
    }

    /// A track playing on the first stream, 10 ms of it read; returns its id.
    mutating func playing() -> TrackID {
        let id = begin(appending: 4_800)
        play(480, on: .first)
        return id
    }

    /// `lane`'s server plays `frames` and asks for more.
    mutating func play(_ frames: Int64, on lane: StreamPair.Lane) {
        streams[lane.rawValue].play(frames)
        send(.writable, from: lane)
    }

    mutating func answerReadIndex(on lane: StreamPair.Lane) {
        streams[lane.rawValue].awaitsReadIndex = false
        if streams[lane.rawValue].knownWriteFrame == nil { streams[lane.rawValue].knownWriteFrame = streams[lane.rawValue].serverWriteFrame }
        send(.readIndex(model(lane).readFrame), from: lane)
    }
}

/// Which stream a track plays on (`StreamPair`), one test per rule against two model streams.
@Suite struct StreamPairTests {
    /// What `lane`'s stream is asked to do (the ducker's `audible`, which is of both, left out).
    func effects(_ all: [(StreamPair.Lane, StreamFeed.Effect)], on lane: StreamPair.Lane) -> [StreamFeed.Effect] {
        all.compactMap { each, effect in
            if case .audible = effect { return nil }
            return each == lane ? effect : nil
        }
    }

    /// What the ducker is told, in order.
    func audible(_ all: [(StreamPair.Lane, StreamFeed.Effect)]) -> [Bool] {
        all.compactMap { if case .audible(let audible) = $0.1 { audible } else { nil } }
    }

    func writes(_ effects: [StreamFeed.Effect]) -> [Int64?] {
        effects.compactMap { if case .write(_, _, let at) = $0 { at } else { nil } }
    }

    @Test func theFirstTrackPlaysOnTheFirstStreamAndTheSecondIsOpenedForTheNext() {
        var rig = PairRig()
        let begun = rig.send(.begin(StreamFeedTests.format))
        #expect(effects(begun, on: .first).contains(.openStream(StreamFeedTests.format)))
        #expect(same(effects(begun, on: .second), [.openStream(StreamFeedTests.format)]), "opened, nothing written")
        rig.makeReady()
        #expect(same(rig.pair.current, .first))
        let written = rig.send(.append(StreamFeedTests.tone(4_800), rig.pair.trackID))
        #expect(writes(effects(written, on: .first)) == [0] && effects(written, on: .second).isEmpty)
        #expect(rig.model(.second).isCorked, "the other stream waits, corked")
    }

    /// An interrupt: the track playing is ramped down on its stream while the new one starts at once
    /// on the other, from its start, as on an idle stream (no wait for the ramp).
    @Test func aTrackBegunWhileAnotherPlaysStartsAtOnceOnTheOtherStream() {
        var rig = PairRig()
        let old = rig.playing()
        let begun = rig.send(.begin(StreamFeedTests.format))
        let new = rig.pair.trackID
        #expect(new != old)
        #expect(same(rig.pair.current, .second))
        #expect(same(writes(effects(begun, on: .first)), [576]), "the old track ramped down past where its server reads")
        #expect(rig.pair.feed(.first).track == nil, "and cut")
        let written = rig.send(.append(StreamFeedTests.tone(4_800), new))
        let second = effects(written, on: .second)
        #expect(!writes(second).isEmpty && second.contains(.uncork), "the new track written and uncorked at once")
        #expect(effects(written, on: .first).isEmpty)
        #expect(!effects(begun, on: .first).contains(.endProgress), "the cut track's end is not the new track's")
        // The old track's own calls reach its stream, whose feed no longer plays it: ignored there.
        let late = rig.send(.cancel(old))
        #expect(late.allSatisfy { lane, effect in lane == .first && { if case .ignored = effect { true } else { false } }() })
        #expect(rig.pair.feed(.second).track != nil, "the new track plays on")
    }

    /// The same when the old track was cancelled first (the player's order): its ramp plays on its
    /// stream, the next begins on the other.
    @Test func aTrackBegunDuringTheLastOnesRampStartsOnTheOtherStream() {
        var rig = PairRig()
        let old = rig.playing()
        let cut = rig.send(.cancel(old))
        #expect(same(writes(effects(cut, on: .first)), [576]))
        #expect(effects(cut, on: .first).contains(.endProgress), "the cancelled track's progress ends")
        rig.send(.begin(StreamFeedTests.format))
        #expect(same(rig.pair.current, .second))
    }

    /// After a track played to its end, the next plays on the same stream: nothing to cut.
    @Test func aTrackBegunAfterTheLastEndedStaysOnItsStream() {
        var rig = PairRig()
        let first = rig.begin(appending: 480)
        rig.send(.end(first))
        rig.play(480, on: .first)
        if let through = rig.model(.first).drainingThrough {
            rig.streams[0].drainingThrough = nil
            rig.send(.drained(through: through, success: true), from: .first)
        }
        #expect(rig.pair.feed(.first).isQuiet)
        rig.send(.begin(StreamFeedTests.format))
        #expect(same(rig.pair.current, .first))
    }

    /// Two interrupts in a row: the third track goes back to the first stream once its ramp was
    /// heard; while that ramp still plays, it follows the second's ramp on the second stream.
    @Test func whenTheOtherStreamStillPlaysItsRampTheTrackStaysOnTheCurrentOne() {
        var rig = PairRig()
        _ = rig.playing()
        _ = rig.begin(appending: 4_800)
        #expect(same(rig.pair.current, .second))
        rig.answerReadIndex(on: .second)
        rig.play(480, on: .second)
        #expect(!rig.pair.feed(.first).isQuiet, "the first stream's ramp not yet heard")
        rig.send(.begin(StreamFeedTests.format))
        #expect(same(rig.pair.current, .second), "the cut and the new track on the same stream, as with one")
        #expect(rig.pair.feed(.second).track != nil)
    }

    @Test func anotherFormatStaysOnTheCurrentStreamAndTheOtherIsReopenedInIt() {
        var rig = PairRig()
        _ = rig.playing()
        let other = AudioFormat(sampleRate: 22_050, channels: 1)
        let begun = rig.send(.begin(other))
        #expect(same(rig.pair.current, .first))
        #expect(effects(begun, on: .second).contains(.openStream(other)))
    }

    /// The ducker hears of speech while either stream is audible, and of silence once neither is.
    @Test func speechIsAudibleWhileEitherStreamIs() {
        var rig = PairRig()
        _ = rig.playing()
        let begun = rig.send(.begin(StreamFeedTests.format))
        let new = rig.pair.trackID
        #expect(audible(begun).allSatisfy { $0 }, "the cut stream still plays its ramp: \(audible(begun))")
        let cut = rig.send(.cancel(new))
        #expect(same(audible(cut).last, true), "the first stream's ramp may still play")
        for lane in StreamPair.Lane.allCases {
            rig.streams[lane.rawValue].play(48_000)
            rig.send(.timing, from: lane)
        }
        let heard = rig.send(.timing, from: .second)
        #expect(same(audible(cut + heard).last, false), "silent once both ramps were heard")
    }

    // MARK: Random runs

    /// Random calls and server events on both streams, on both kinds of server; after each: no
    /// write to a stream whose read index is awaited, none before what its server read; only the
    /// current track plays (the other stream holds no track but one played to its end); a call
    /// naming a track no longer current writes nothing on the current track's stream; progress is
    /// told only from the current track's stream.
    @Test(arguments: [false, true]) func theRulesHoldOverRandomRuns(rewinds: Bool) {
        var switched = 0
        defer { #expect(switched > 100, "the runs interrupt on the other stream: \(switched) times") }
        for seed in UInt64(1)...60 {
            var random = SplitMix64(seed: seed)
            var rig = PairRig(rewinds: rewinds)
            var issued: [TrackID] = []
            for step in 0..<250 {
                let (input, lane) = randomInput(&rig, issued, &random)
                let before = rig.streams
                let current = rig.pair.trackID, laneBefore = rig.pair.current
                let effects = rig.send(input, from: lane)
                if case .begin = input {
                    issued.append(rig.pair.trackID)
                    if rig.pair.current != laneBefore { switched += 1 }
                }
                // Described only when an expectation fails (its comment is an autoclosure).
                func context() -> String { "seed \(seed), step \(step), \(input) from \(String(describing: lane))" }
                for (each, effect) in effects {
                    guard case .write(_, _, let at) = effect else { continue }
                    let stream = before[each.rawValue]
                    let answered: Bool = if case .readIndex = input, lane == each { true } else { false }
                    if stream.awaitsReadIndex, !answered { Issue.record("a write while the read index was awaited: \(context())") }
                    #expect((at ?? stream.serverWriteFrame) >= stream.readFrame, "written before what the server read: \(context())")
                }
                let other = rig.pair.feed(rig.pair.current.other)
                #expect(other.track.map(\.isPlayedToTheEnd) ?? true, "a track plays on the other stream: \(context())")
                if let named = Self.trackNamed(input), named != current {
                    let onCurrent = effects.contains { each, effect in
                        if case .write = effect { each == rig.pair.current } else { false }
                    }
                    #expect(!onCurrent, "a call for an earlier track wrote on the current one's stream: \(context())")
                }
                for (each, effect) in effects {
                    switch effect {
                    case .publish, .endProgress: #expect(same(each, rig.pair.current), "progress from the other stream: \(context())")
                    default: break
                    }
                }
                if Task.isCancelled { return }
            }
        }
    }

    static func trackNamed(_ input: StreamFeed.Input) -> TrackID? {
        switch input {
        case .append(_, let id), .end(let id), .hold(_, let id), .setPaused(_, let id), .cancel(let id): id
        default: nil
        }
    }

    /// One input a caller or a server could give now, and the stream it is about (server events);
    /// what the server did first (played, answered, drained, became ready) is done on the model.
    func randomInput(
        _ rig: inout PairRig, _ issued: [TrackID], _ random: inout SplitMix64
    ) -> (StreamFeed.Input, StreamPair.Lane?) {
        // Mostly the current track, now and then one before it (a player that has not yet heard).
        let id = issued.isEmpty || Int.random(in: 0..<5, using: &random) > 0
            ? rig.pair.trackID : issued[Int.random(in: 0..<issued.count, using: &random)]
        let lane = StreamPair.Lane.allCases[Int.random(in: 0..<2, using: &random)]
        var stream: ModelStream {
            get { rig.streams[lane.rawValue] }
            set { rig.streams[lane.rawValue] = newValue }
        }
        while true {
            switch Int.random(in: 0..<15, using: &random) {
            case 0:
                return (.begin(StreamFeedTests.format), nil)
            case 1, 2:
                return (.append(StreamFeedTests.tone(Int.random(in: 1...2_000, using: &random)), id), nil)
            case 3:
                return (.end(id), nil)
            case 4:
                return (.setPaused(Bool.random(using: &random), id), nil)
            case 5:
                return (.cancel(id), nil)
            case 6, 7, 8:
                guard stream.exists, stream.isReady else { continue }
                stream.play(Int64.random(in: 0...600, using: &random))
                return (Bool.random(using: &random) ? .writable : .timing, lane)
            case 9:
                guard stream.awaitsReadIndex else { continue }
                stream.awaitsReadIndex = false
                if stream.knownWriteFrame == nil { stream.knownWriteFrame = stream.serverWriteFrame }
                return (.readIndex(stream.readFrame), lane)
            case 10:
                guard let through = stream.drainingThrough else { continue }
                stream.drainingThrough = nil
                return (.drained(through: through, success: stream.readFrame >= stream.serverWriteFrame), lane)
            case 11, 12:
                guard stream.exists, !stream.isReady else { continue }
                stream.isReady = true
                return (.streamReady, lane)
            case 13:
                guard stream.exists, Int.random(in: 0..<6, using: &random) == 0 else { continue }
                return (.streamFailed, lane)
            default:
                guard Int.random(in: 0..<8, using: &random) == 0 else { continue }
                return (rig.model(.first).exists ? .connectionLost : .connected, nil)
            }
        }
    }
}
