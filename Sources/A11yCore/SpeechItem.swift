// SPDX-License-Identifier: GPL-3.0-or-later
/// How urgent an item is. Items are ordered by priority, then by arrival.
public enum Priority: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    case low
    case `default`
    case high

    private var rank: Int {
        switch self {
        case .low: 0
        case .default: 1
        case .high: 2
        }
    }

    public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rank < rhs.rank }
}

/// The notifications an app posts, named as in UIKit's `UIAccessibility.Notification`.
public enum NotificationKind: String, Sendable, Hashable, CaseIterable, Codable {
    case announcement
    case layoutChanged
    case screenChanged
    case pageScrolled

    /// The priority an item of this kind gets when the client names none.
    public var defaultPriority: Priority {
        self == .screenChanged ? .high : .default
    }
}

/// speech-dispatcher's five message priorities (SSIP `SET self PRIORITY`), for items posted over SSIP.
/// They bring their own rules on the one queue (docs/semantics.md, "SSIP priorities").
public enum MessagePriority: String, Sendable, Hashable, CaseIterable, Codable {
    case important, message, text, notification, progress

    /// Where such an item waits among VoiceOver's priorities.
    public var queuePriority: Priority {
        switch self {
        case .important: .high
        case .message, .text: .default
        case .notification, .progress: .low
        }
    }
}

/// Identifies one accepted post for its whole life, in replies and events.
public struct UtteranceID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: UtteranceID, rhs: UtteranceID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
}

/// One thing to say, as the queue sees it.
public struct SpeechItem: Sendable, Equatable {
    public var id: UtteranceID
    public var kind: NotificationKind
    public var priority: Priority
    /// `accessibilitySpeechQueueAnnouncement`: wait behind what is queued, never interrupt.
    public var queued: Bool
    /// Play the screen-change earcon before speaking. Decided once, where the item is made (the
    /// daemon's `SpeechService.prepare`: a `screenChanged` item, with config `earcon` on); the
    /// player only obeys it, and the rest of a parked item, past its start, loses it.
    public var playsEarcon: Bool
    public var utterance: Utterance
    /// The client that posted it, for client-scoped controls (SSIP's `CANCEL self`); nil: nobody's.
    public var owner: ClientID?
    /// Set for SSIP items: the speech-dispatcher rules apply instead of the kind's (the item then
    /// waits in arrival order at `messagePriority.queuePriority`).
    public var messagePriority: MessagePriority?
    /// What is left of an item its client paused while it spoke (SSIP's `PAUSE self`): it has
    /// started before, so playing it again is told as `resumed`.
    public var isRemainder = false

    public init(
        id: UtteranceID, kind: NotificationKind, priority: Priority? = nil, queued: Bool = false,
        playsEarcon: Bool = false, utterance: Utterance, owner: ClientID? = nil, messagePriority: MessagePriority? = nil
    ) {
        self.id = id
        self.kind = kind
        self.priority = messagePriority?.queuePriority ?? priority ?? kind.defaultPriority
        self.queued = messagePriority != nil || queued
        self.playsEarcon = playsEarcon
        self.utterance = utterance
        self.owner = owner
        self.messagePriority = messagePriority
    }

    /// The utterance as clients see it (for an element, the composed sentence).
    public var text: String { utterance.text }

    /// About how many bytes the item holds while it waits: its text, each segment's text, voice
    /// and mark name, and a fixed share for the item and for each segment. What the queue's
    /// bound counts (`SpeechQueue.pendingByteLimit`), so that memory follows what is queued,
    /// not how many messages.
    public var queueCost: Int {
        utterance.segments.reduce(256 + utterance.text.utf8.count) { cost, segment in
            let content: Int
            switch segment.content {
            case .text(let text): content = text.utf8.count
            case .phonemes(let phonemes): content = phonemes.utf8.count
            }
            return cost + 128 + content + segment.voice.utf8.count + (segment.options.markBefore?.utf8.count ?? 0)
        }
    }
}
