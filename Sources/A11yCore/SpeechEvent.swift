// SPDX-License-Identifier: GPL-3.0-or-later
/// Why an item ended. Every accepted item ends exactly once, with one of these.
public enum FinishReason: Sendable, Hashable, CaseIterable {
    /// Spoken to the end.
    case spoken
    /// Cut off while speaking by a newer item (not resumed, as on iOS).
    case interrupted
    /// Removed before it started: a `screenChanged` or a newer `pageScrolled` made it moot.
    case flushed
    /// Ended by a `stop` (or by the daemon shutting down).
    case stopped
    /// Removed before it started because the queue was full.
    case dropped
    /// The engine or the sound server failed; `message` says how.
    case error

    public var isSuccessful: Bool { self == .spoken }
}

/// Where a pause takes effect.
public enum PauseBoundary: Sendable, Hashable, CaseIterable {
    /// Silence now, mid-word if need be.
    case immediate
    /// At the end of the word being spoken.
    case word
}

/// What clients hear about an item's life, and the one queue state that belongs to no item.
public enum SpeechEvent: Sendable, Equatable {
    case started(UtteranceID)
    /// A word is about to be heard; `start`/`length` in Unicode scalars of the posted text.
    case word(UtteranceID, start: Int, length: Int)
    /// An SSML `<mark>` was reached (its place in the audio was heard).
    case mark(UtteranceID, name: String)
    case paused(UtteranceID)
    case resumed(UtteranceID)
    case finished(UtteranceID, text: String, reason: FinishReason, message: String?)
    /// The queue holds, paused, with nothing speaking: a word pause was asked and its item ended
    /// before reaching a word boundary (its `finished` came first: `finished` is always an
    /// utterance's last event). Nothing starts until `resume` (only its client's items, when the
    /// pause was that client's own). For the client whose item the pause was asked for (the
    /// `ClientEvent`'s owner), and subscribers.
    case queuePaused

    /// The utterance the event is about; nil for a queue state.
    public var utterance: UtteranceID? {
        switch self {
        case .started(let id), .word(let id, _, _), .mark(let id, _), .paused(let id), .resumed(let id): id
        case .finished(let id, _, _, _): id
        case .queuePaused: nil
        }
    }
}

/// An event as the queue emits it and every consumer receives it: with the client whose item it is
/// about (`SpeechItem.owner`; for `queuePaused`, the client whose pause it is), so that nobody
/// downstream keeps a second record of who posted what. Nil: nobody's, an item posted without a
/// client (only the core's own tests post those; the daemon names a client for every item).
public struct ClientEvent: Sendable, Equatable {
    public var event: SpeechEvent
    public var owner: ClientID?

    public init(_ event: SpeechEvent, owner: ClientID?) {
        self.event = event
        self.owner = owner
    }
}
