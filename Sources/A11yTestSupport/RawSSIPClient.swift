// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking SSIP client over a Unix socket (`RawSocketClient`): SSIP's replies, and the events
/// that come between them, read whole.
public final class RawSSIPClient: RawSocketClient, @unchecked Sendable {
    /// Events (`70x`) read while looking for a reply or another event, oldest first, each whole.
    public private(set) var events: [String] = []

    /// Sends `line` with CRLF and reads one whole reply.
    public func exchange(_ line: String) throws -> String {
        try send(line + "\r\n")
        return try readReply()
    }

    /// One reply: lines up to the one whose fourth character is a space.
    public func readReply() throws -> String {
        var reply = ""
        while true {
            let line = try readLine()
            reply += line
            let characters = Array(line.utf8)
            if characters.count >= 4, characters[3] == UInt8(ascii: " ") { return reply }
        }
    }

    /// Sends `line` and returns its reply, setting aside the events that come before it (an event
    /// may precede a reply; it never falls inside one).
    public func command(_ line: String) throws -> String {
        try send(line + "\r\n")
        while true {
            let reply = try readReply()
            guard reply.hasPrefix("7") else { return reply }
            events.append(reply)
        }
    }

    /// The first event whose last line is `name` (`"702 END"`) and whose first names `message`, if
    /// given, read within `timeout`; the events before it stay in `events`. Nil when none came.
    public func waitForEvent(_ name: String, message: String? = nil, timeout: Duration = .seconds(20)) throws -> String? {
        let matches = { (event: String) in
            event.hasSuffix(name + "\r\n") && (message.map { event.hasPrefix(name.prefix(3) + "-" + $0 + "\r\n") } ?? true)
        }
        if let index = events.firstIndex(where: matches) { return events.remove(at: index) }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let event = try? readReply() else { continue }
            if matches(event) { return event }
            events.append(event)
        }
        return nil
    }
}
