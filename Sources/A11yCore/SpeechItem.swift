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
    /// Play the screen-change earcon before speaking.
    public var playsEarcon: Bool
    public var utterance: Utterance

    public init(
        id: UtteranceID, kind: NotificationKind, priority: Priority? = nil, queued: Bool = false,
        playsEarcon: Bool = false, utterance: Utterance
    ) {
        self.id = id
        self.kind = kind
        self.priority = priority ?? kind.defaultPriority
        self.queued = queued
        self.playsEarcon = playsEarcon
        self.utterance = utterance
    }

    /// The utterance as clients see it (for an element, the composed sentence).
    public var text: String { utterance.text }
}
