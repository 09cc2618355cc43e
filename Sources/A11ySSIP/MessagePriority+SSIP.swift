// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

// SSIP's names for speech-dispatcher's priorities, spelled as A11yProtocol spells the core's JSON
// names (`WireNamed`): an exhaustive switch, so that a new priority has no name until it is given one.
extension MessagePriority {
    /// speech-dispatcher's own name, which `SET self PRIORITY` and the configuration's
    /// `ssip.default_priority` read.
    public var ssipName: String {
        switch self {
        case .important: "important"
        case .message: "message"
        case .text: "text"
        case .notification: "notification"
        case .progress: "progress"
        }
    }

    /// The priority SSIP names so (lower case, as SSIP's keywords are read); nil for any other name.
    public init?(ssipName: String) {
        guard let priority = Self.allCases.first(where: { $0.ssipName == ssipName }) else { return nil }
        self = priority
    }
}
