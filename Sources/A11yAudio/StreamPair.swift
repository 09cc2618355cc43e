// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// The output's two playback streams, each fed by its own `StreamFeed`, as one pure state machine:
/// which stream a track plays on, and whose effects are whose.
///
/// A track begun while the last still sounds (an interrupt: the next item over the one speaking,
/// the next key's echo over the last) plays on the other stream, kept open and corked for it, while
/// the track it cuts ramps down on its own; the two mix at the sink. Its first sound then waits for
/// nothing but the server (PulseAudio plays an uncorked stream at once, PipeWire at its next
/// block), not for a rewrite of the cut stream far enough ahead of where the server reads. When the
/// other stream is not free (its own cut's ramp still plays, or it is not ready in that format),
/// the track begins on the same stream, behind or inside the cut's ramp, as with one stream.
///
/// Inputs and effects are `StreamFeed`'s. The track ids the output gives out are this type's own,
/// each mapped to its stream and to the id its feed knows it by; an input naming a track no longer
/// current on its stream is the feed's to ignore. The effects that tell a track's progress
/// (`publish`, `endProgress`) are kept only from the current track's stream.
struct StreamPair {
    enum Lane: Int, CaseIterable, Sendable {
        case first, second

        var other: Lane { self == .first ? .second : .first }
    }

    private var feeds = [StreamFeed(), StreamFeed()]
    /// The stream of the current track (the last begun).
    private(set) var current = Lane.first
    /// The current track's id, as the output gives it out.
    private(set) var trackID = TrackID(rawValue: 0)
    /// Where each track still current on its stream plays, and its feed's id for it: one per stream at most.
    private var placed: [TrackID: (lane: Lane, id: TrackID)] = [:]
    /// Each stream audible (ready and uncorked), as its feed last said.
    private var audible = [false, false]

    func feed(_ lane: Lane) -> StreamFeed { feeds[lane.rawValue] }

    /// Handles `input`: a call of the output (`lane` nil), or what the server said of `lane`'s
    /// stream; `streams` tells what each stream knows now. Returns the effects, each for its stream.
    mutating func handle(
        _ input: StreamFeed.Input, from lane: Lane? = nil, streams: (Lane) -> StreamFeed.Stream?
    ) -> [(Lane, StreamFeed.Effect)] {
        var effects: [(Lane, StreamFeed.Effect)] = []
        func run(_ input: StreamFeed.Input, on lane: Lane) {
            effects += feeds[lane.rawValue].handle(input, stream: streams(lane)).map { (lane, $0) }
        }
        /// The call for the track the output knows as `id`, on its stream under its feed's id.
        func route(_ id: TrackID, _ make: (TrackID) -> StreamFeed.Input) {
            guard let (lane, inner) = placed[id] else {
                effects.append((current, .ignored("a call for a track that is not current", track: id)))
                return
            }
            run(make(inner), on: lane)
        }
        switch input {
        case .begin(let format):
            let there = current.other
            if !feed(current).isQuiet, feed(there).isQuiet, let stream = streams(there), stream.isReady,
                stream.format == format
            {
                // The track playing here is cut (ramped down) here, as a new track on the same stream would cut it.
                if feed(current).track != nil { run(.cancel(feed(current).trackID), on: current) }
                current = there
            }
            run(.begin(format), on: current)
            trackID = TrackID(rawValue: trackID.rawValue &+ 1)
            placed = placed.filter { $0.value.lane != current }
            placed[trackID] = (current, feed(current).trackID)
            run(.prepare(format), on: current.other)
        case .append(let samples, let id):
            route(id) { .append(samples, $0) }
        case .end(let id):
            route(id) { .end($0) }
        case .hold(let frame, let id):
            route(id) { .hold(at: frame, $0) }
        case .setPaused(let paused, let id):
            route(id) { .setPaused(paused, $0) }
        case .cancel(let id):
            route(id) { .cancel($0) }
        case .prepare:
            break
        case .close, .connected, .connectionLost, .connectionAttemptFailed:
            for each in Lane.allCases { run(input, on: each) }
        case .streamReady, .streamFailed, .writable, .timing, .drained, .readIndex:
            run(input, on: lane ?? current)
        }
        return effects.compactMap { lane, effect in
            switch effect {
            case .publish, .endProgress:
                return lane == current ? (lane, effect) : nil
            case .audible(let isAudible):
                // Speech is audible while either stream is.
                audible[lane.rawValue] = isAudible
                let either = audible.firstIndex(of: true).flatMap { Lane(rawValue: $0) }
                return (either ?? lane, .audible(either != nil))
            default:
                return (lane, effect)
            }
        }
    }

    /// The current track's progress (nil without one), its stream playing at `position`.
    mutating func progress(playingAt position: Int64?, connection: PlaybackProgress.Connection) -> PlaybackProgress? {
        feeds[current.rawValue].progress(playingAt: position, connection: connection)
    }
}
