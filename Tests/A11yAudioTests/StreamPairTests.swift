// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yAudio
import A11yCore
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

    func writes(_ effects: [StreamFeed.Effect]) -> [Int64?] {
        effects.compactMap { if case .write(_, _, let at) = $0 { at } else { nil } }
    }

    @Test func theFirstTrackPlaysOnTheFirstStreamAndTheSecondIsOpenedForTheNext() {
        var rig = PairRig()
        let begun = rig.send(.begin(StreamFeedTests.format))
        #expect(effects(begun, on: .first).contains(.openStream(StreamFeedTests.format)))
        #expect(effects(begun, on: .second) == [.openStream(StreamFeedTests.format)], "opened, nothing written")
        rig.makeReady()
        #expect(rig.pair.current == .first)
        let written = rig.send(.append(StreamFeedTests.tone(4_800), rig.pair.trackID))
        #expect(writes(effects(written, on: .first)) == [0] && effects(written, on: .second).isEmpty)
        #expect(rig.model(.second).isCorked, "the other stream waits, corked")
    }

    /// An interrupt: the track playing is ramped down on its stream while the new one starts at once
    /// on the other, from its start, as on an idle stream (no wait for the ramp).
    @Test func aTrackBegunWhileAnotherPlaysStartsAtOnceOnTheOtherStream() {
        var rig = PairRig()
        let old = rig.begin(appending: 4_800)
        rig.play(480, on: .first)
        let begun = rig.send(.begin(StreamFeedTests.format))
        let new = rig.pair.trackID
        #expect(new != old)
        #expect(rig.pair.current == .second)
        #expect(writes(effects(begun, on: .first)) == [576], "the old track ramped down past where its server reads")
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
        let old = rig.begin(appending: 4_800)
        rig.play(480, on: .first)
        let cut = rig.send(.cancel(old))
        #expect(writes(effects(cut, on: .first)) == [576])
        #expect(effects(cut, on: .first).contains(.endProgress), "the cancelled track's progress ends")
        rig.send(.begin(StreamFeedTests.format))
        #expect(rig.pair.current == .second)
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
        #expect(rig.pair.current == .first)
    }

    /// Two interrupts in a row: the third track goes back to the first stream once its ramp was
    /// heard; while that ramp still plays, it follows the second's ramp on the second stream.
    @Test func whenTheOtherStreamStillPlaysItsRampTheTrackStaysOnTheCurrentOne() {
        var rig = PairRig()
        _ = rig.begin(appending: 4_800)
        rig.play(480, on: .first)
        _ = rig.begin(appending: 4_800)
        #expect(rig.pair.current == .second)
        rig.answerReadIndex(on: .second)
        rig.play(480, on: .second)
        #expect(!rig.pair.feed(.first).isQuiet, "the first stream's ramp not yet heard")
        rig.send(.begin(StreamFeedTests.format))
        #expect(rig.pair.current == .second, "the cut and the new track on the same stream, as with one")
        #expect(rig.pair.feed(.second).track != nil)
    }

    @Test func anotherFormatStaysOnTheCurrentStreamAndTheOtherIsReopenedInIt() {
        var rig = PairRig()
        _ = rig.begin(appending: 4_800)
        rig.play(480, on: .first)
        let other = AudioFormat(sampleRate: 22_050, channels: 1)
        let begun = rig.send(.begin(other))
        #expect(rig.pair.current == .first)
        #expect(effects(begun, on: .second).contains(.openStream(other)))
    }

    /// The ducker hears of speech while either stream is audible, and of silence once neither is.
    @Test func speechIsAudibleWhileEitherStreamIs() {
        var rig = PairRig()
        let old = rig.begin(appending: 4_800)
        rig.play(480, on: .first)
        let begun = rig.send(.begin(StreamFeedTests.format))
        let new = rig.pair.trackID
        let audible = begun.compactMap { if case .audible(let a) = $0.1 { a } else { nil } }
        #expect(audible.allSatisfy { $0 }, "the cut stream still plays its ramp: \(audible)")
        _ = old
        let cut = rig.send(.cancel(new))
        let after = cut.compactMap { if case .audible(let a) = $0.1 { a } else { nil } }
        #expect(after.last == true, "the first stream's ramp may still play")
        for lane in StreamPair.Lane.allCases {
            rig.streams[lane.rawValue].play(48_000)
            rig.send(.timing, from: lane)
        }
        let heard = rig.send(.timing, from: .second)
        let last = (cut + heard).compactMap { if case .audible(let a) = $0.1 { a } else { nil } }.last
        #expect(last == false, "silent once both ramps were heard")
    }
}
