/// Where a track stands, as last reported by the sound server.
public struct PlaybackProgress: Sendable, Equatable {
    /// Frames of the current track that the server has played (mixed), from the track's start.
    public var playedFrames: Int
    /// Frames handed to the output for this track so far.
    public var appendedFrames: Int
    /// `end()` was called and every appended frame has been played (or, when held, every frame
    /// up to the hold point has been played and nothing more will be written until released).
    public var isFinished: Bool
    /// True while the output has a working connection to the sound server.
    public var isConnected: Bool

    public init(playedFrames: Int, appendedFrames: Int, isFinished: Bool, isConnected: Bool) {
        self.playedFrames = playedFrames
        self.appendedFrames = appendedFrames
        self.isFinished = isFinished
        self.isConnected = isConnected
    }
}

/// A place that plays one track at a time, with the controls speech needs.
///
/// A track is the PCM of one utterance. The output buffers everything appended (appending never
/// blocks) and hands it to the sound server as the server asks for it, keeping the server-side
/// buffer small (about 20-50 ms) so that pause and cancel are heard within milliseconds.
/// While no track plays, the output keeps the server idle (stream corked).
/// If the server goes away the output reconnects on its own and carries on with the track from
/// the first frame the server had not yet been given; `progress().isConnected` says when it is down.
public protocol AudioOutput: Sendable {
    /// Starts a new, empty track in this format; any previous track is dropped silently.
    func begin(format: AudioFormat) async
    /// Adds frames to the end of the current track.
    func append(_ samples: [Int16]) async
    /// The current track gets no more frames; it finishes once all of them are played.
    func end() async
    /// Frames at or beyond `frame` are not given to the server until the hold is moved or
    /// removed (`nil`). Used to pause at a word boundary without cutting a word.
    func hold(at frame: Int?) async
    /// Pauses (cork) or resumes (uncork) the current track; audible within a few milliseconds.
    func setPaused(_ paused: Bool) async
    /// Silences now (flush and cork) and drops the current track.
    func cancel() async
    /// Where the current track stands.
    func progress() async -> PlaybackProgress
}
