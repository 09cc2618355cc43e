// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

extension MessagePriority {
    /// speech-dispatcher's names for its priorities, which `SET self PRIORITY` and the configuration's
    /// `ssip.default_priority` read, in its order.
    public static let ssipNames: [(String, MessagePriority)] = [
        ("important", .important), ("message", .message), ("text", .text), ("notification", .notification), ("progress", .progress),
    ]

    /// The priority SSIP names so (lower case, as SSIP's keywords are read); nil for any other name.
    public init?(ssipName: String) {
        guard let priority = Self.ssipNames.first(where: { $0.0 == ssipName })?.1 else { return nil }
        self = priority
    }
}
