// SPDX-License-Identifier: GPL-3.0-or-later
/// Where an item waits (`Urgency.queuePriority`): items are ordered by priority, then by arrival.
public enum Priority: Sendable, Hashable, CaseIterable, Comparable {
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
public enum NotificationKind: Sendable, Hashable, CaseIterable {
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
/// They bring their own rules on the one queue (docs/semantics.md, "SSIP priorities"). Their names
/// are SSIP's, spelled in A11ySSIP (`MessagePriority.ssipName`); the JSON protocol never carries one.
public enum MessagePriority: Sendable, Hashable, CaseIterable {
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

/// How urgent an item is, under the one set of rules that applies to it: VoiceOver's or
/// speech-dispatcher's (docs/semantics.md). One value, so that a priority, a "queued" flag and an
/// SSIP priority that disagree cannot be written; where the item waits and whether it waits its turn
/// are read from it (`queuePriority`, `isQueued`).
public enum Urgency: Sendable, Hashable {
    /// VoiceOver's rules: the priority, and whether the item waits behind what is queued and never
    /// interrupts (`accessibilitySpeechQueueAnnouncement`).
    case voiceOver(Priority, queued: Bool)
    /// speech-dispatcher's rules for this SSIP priority (`SET self PRIORITY`): what it cuts, what it
    /// makes moot, when it is itself thrown away.
    case speechDispatcher(MessagePriority)

    /// What a client that names no priority gets: the kind's priority, interrupting by VoiceOver's rules.
    public static func `default`(for kind: NotificationKind) -> Urgency {
        .voiceOver(kind.defaultPriority, queued: false)
    }

    /// Where the item waits: items are ordered by it, then by arrival.
    public var queuePriority: Priority {
        switch self {
        case .voiceOver(let priority, _): priority
        case .speechDispatcher(let priority): priority.queuePriority
        }
    }

    /// Whether the item goes behind everything waiting at its priority or above, instead of in front
    /// of its priority class. speech-dispatcher's messages always wait in arrival order: their own
    /// rules, not their place, decide what they cut.
    public var isQueued: Bool {
        switch self {
        case .voiceOver(_, let queued): queued
        case .speechDispatcher: true
        }
    }

    /// The SSIP priority whose rules apply; nil under VoiceOver's.
    public var messagePriority: MessagePriority? {
        if case .speechDispatcher(let priority) = self { return priority }
        return nil
    }
}

/// Identifies one accepted post for its whole life, in replies and events.
public struct UtteranceID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: UtteranceID, rhs: UtteranceID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
}

/// One thing to say, as the queue sees it.
public struct SpeechItem: Sendable, Equatable {
    public var id: UtteranceID
    public var kind: NotificationKind
    /// Which rules order it on the queue, and where it waits.
    public var urgency: Urgency
    /// Play the screen-change earcon before speaking. Decided once, where the item is made (the
    /// daemon's `SpeechService.prepare`: a `screenChanged` item, with config `earcon` on); the
    /// player only obeys it, and the rest of a parked item, past its start, loses it.
    public var playsEarcon: Bool
    public var utterance: Utterance
    /// The client that posted it, for client-scoped controls (SSIP's `CANCEL self`); nil: nobody's.
    public var owner: ClientID?
    /// What is left of an item its client paused while it spoke (SSIP's `PAUSE self`): it has
    /// started before, so playing it again is told as `resumed`.
    public var isRemainder = false

    /// `urgency` nil: the kind's (`Urgency.default(for:)`).
    public init(
        id: UtteranceID, kind: NotificationKind, urgency: Urgency? = nil,
        playsEarcon: Bool = false, utterance: Utterance, owner: ClientID? = nil
    ) {
        self.id = id
        self.kind = kind
        self.urgency = urgency ?? .default(for: kind)
        self.playsEarcon = playsEarcon
        self.utterance = utterance
        self.owner = owner
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
