// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// Turns the speech API's events into SSIP's 700–705 notifications, for clients that asked for them.
public enum SSIPEvents {
    /// `700 INDEX MARK`: the one notification that only says how far speech has got.
    public static let indexMarkCode = 700

    /// The notification for `event` of a message of `client`, or nil when the client did not ask for
    /// that kind (when the message was sent) or SSIP has none (word events, and the queue's own
    /// pause: every SSIP notification names a message).
    public static func reply(
        for event: SpeechEvent, client: ClientID, notifications: SSIPNotifications
    ) -> SSIPReply? {
        guard let id = event.utterance else { return nil }
        let head = [String(id.rawValue), String(client.rawValue)]
        switch event {
        case .started:
            return begin(id, client: client, notifications: notifications)
        case .mark(_, let name):
            return notifications.contains(.indexMarks) ? SSIPReply(indexMarkCode, "INDEX MARK", lines: head + [name]) : nil
        case .paused:
            return notifications.contains(.pause) ? SSIPReply(704, "PAUSED", lines: head) : nil
        case .resumed:
            return notifications.contains(.resume) ? SSIPReply(705, "RESUMED", lines: head) : nil
        case .finished(_, _, .spoken, _):
            return notifications.contains(.end) ? SSIPReply(702, "END", lines: head) : nil
        case .finished:
            // Interrupted, made moot, dropped, stopped or failed: SSIP knows only "canceled".
            return notifications.contains(.cancel) ? SSIPReply(703, "CANCELED", lines: head) : nil
        case .word, .queuePaused:
            return nil
        }
    }

    /// `701 BEGIN`: the message began to be spoken.
    public static func begin(_ id: UtteranceID, client: ClientID, notifications: SSIPNotifications) -> SSIPReply? {
        notifications.contains(.begin) ? SSIPReply(701, "BEGIN", lines: [String(id.rawValue), String(client.rawValue)]) : nil
    }
}
