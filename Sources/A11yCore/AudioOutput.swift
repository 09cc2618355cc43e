// SPDX-License-Identifier: GPL-3.0-or-later
/// Where a track stands, as last reported by the sound server.
public struct PlaybackProgress: Sendable, Equatable {
    /// Frames of the current track that the server has played (mixed), from the track's start.
    public var playedFrames: Int
    /// Frames handed to the output for this track so far.
    public var appendedFrames: Int
    /// `end()` was called and every appended frame has been played: the track is over. (A track
    /// held before its end is not finished, however long it stands at the hold.)
    public var isFinished: Bool
    /// Where the output stands with its sound server.
    public var connection: Connection

    /// Where an output stands with its sound server, as far as an item cares.
    public enum Connection: Sendable, Equatable {
        case connected
        /// Down for now: the first attempt is under way, or the server went away and the output
        /// reconnects. An item waits for it, up to its grace.
        case reconnecting
        /// No sound server has been reached since the output began and the last attempt failed,
        /// for the reason given: nothing is worth waiting for.
        case unreachable(SpeechError)
    }

    /// True while the output has a working connection to the sound server.
    public var isConnected: Bool { connection == .connected }

    public init(playedFrames: Int, appendedFrames: Int, isFinished: Bool, connection: Connection) {
        self.playedFrames = playedFrames
        self.appendedFrames = appendedFrames
        self.isFinished = isFinished
        self.connection = connection
    }
}

/// Where an output stands with its sound server, as a person is told it (`status`).
public struct SoundServerStatus: Sendable, Equatable {
    public enum State: String, Sendable, Equatable, CaseIterable {
        /// Connected: what is played is heard.
        case connected
        /// Trying: the first attempt is under way, or the server went away and the output reconnects.
        case connecting
        /// Not reached since the output began: the last attempt failed (`reason` says why), and
        /// the output tries again.
        case unreachable
    }

    /// The server the output connects or tries to, as a libpulse server string
    /// (`unix:/run/user/1000/pulse/native`), and where it came from when not configured.
    public var server: String
    public var state: State
    /// Why the output is not connected, in a few words (`no such socket`, `refused`, …); nil when
    /// connected.
    public var reason: String?

    public init(server: String, state: State, reason: String? = nil) {
        self.server = server
        self.state = state
        self.reason = reason
    }
}

/// Names one track of an output. Each `begin` makes a new one; a call naming any other track than
/// the output's current one is ignored, so a control that arrives late can never reach the next
/// utterance.
public struct TrackID: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public var description: String { "track \(rawValue)" }
}

/// A track just begun: its id, and what the sound server says about it.
public struct PlaybackTrack: Sendable {
    public let id: TrackID
    /// The track's progress, told each time the sound server reports something new about it (it
    /// asked for data, a timing or drain answer came back, the connection went or came back), and
    /// never while nothing plays. Only the newest value matters; the stream ends when the track is
    /// dropped (`cancel`, or the next `begin`).
    public let progress: AsyncStream<PlaybackProgress>

    public init(id: TrackID, progress: AsyncStream<PlaybackProgress>) {
        self.id = id
        self.progress = progress
    }
}

/// A place that plays one track at a time, with the controls speech needs.
///
/// A track is the PCM of one utterance. The output buffers everything appended (appending never
/// blocks) and hands it to the sound server as the server asks for it, keeping the server-side
/// buffer small (about 20-50 ms) so that pause and cancel are heard within milliseconds.
/// While no track plays, the output keeps the server idle (stream corked).
/// If the server goes away the output reconnects on its own and carries on with the track from
/// the first frame the server had not yet been given; `progress().connection` says when it is down,
/// and whether a server was ever reached at all.
///
/// Every call but `begin` names its track, and is ignored unless that track is the current one.
public protocol AudioOutput: Sendable {
    /// Starts a new, empty track in this format; any previous track is dropped silently.
    func begin(format: AudioFormat) async -> PlaybackTrack
    /// Adds frames to the end of the track.
    func append(_ samples: [Int16], to track: TrackID) async
    /// The track gets no more frames; it finishes once all of them are played.
    func end(_ track: TrackID) async
    /// Frames at or beyond `frame` are not given to the server until the hold is moved or
    /// removed (`nil`). Used to pause at a word boundary without cutting a word.
    func hold(_ track: TrackID, at frame: Int?) async
    /// Pauses or resumes the track; audible within a few milliseconds. Sound that plays is ramped
    /// down over a few milliseconds, never cut from speech level to zero (a click), and a resume
    /// ramps it up again; a track standing at its hold is simply held.
    func setPaused(_ paused: Bool, _ track: TrackID) async
    /// Silences now, ramped down as a pause is, and drops the track; the next track may start right
    /// after the ramp.
    func cancel(_ track: TrackID) async
    /// Where the track stands now; `nil` when it is not the current track any more.
    func progress(of track: TrackID) async -> PlaybackProgress?
    /// Where the output stands with its sound server.
    func serverStatus() async -> SoundServerStatus
}
