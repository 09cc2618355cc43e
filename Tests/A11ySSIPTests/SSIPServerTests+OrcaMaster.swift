// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11ySSIP
import A11yTestSupport
import Foundation
import Testing

/// Orca master's conversation (GNOME/orca, 2026-08, src/orca/speechdispatcherfactory.py), line by line
/// as python3-speechd 0.12 writes it (speech-dispatcher's src/api/python/speechd/client.py), replayed
/// against the listener over a real socket, each reply checked as speech-dispatcher 0.12 words it.
///
/// How the lines follow from Orca's source (default settings, an en_US locale):
/// - `SSIPClient("Orca")` sends `CLIENT_NAME unknown:Orca:default`, `HISTORY GET CLIENT_ID` and turns on
///   the six notifications; `_init` then sets the priority, the punctuation (Orca's default, `most`) and
///   SSML mode. The speech manager's start then sends the punctuation again and the capitalization
///   style, which is `none` on the connection for every style but `icon` (spelling a capital is asked
///   per character).
/// - Before every utterance, `_apply_voice_to_backend` sends the whole voice: `LANGUAGE` (the language,
///   then language-dialect), `SYNTHESIS_VOICE` when the family names a voice, then `RATE`, `PITCH`,
///   `PITCH_RANGE`, `VOLUME`, mapped from Orca's defaults (50, 5, 5, 10: 0, 0, 0, 100).
/// - Speech is SSML with a `<mark name="start:end"/>` before each word (`SSML.markup_text`); an
///   interruption is `CANCEL self`; a typed letter is `CHAR`, and a capital with the `spell` style is
///   `CAP_LET_RECOGN spell`, `CHAR`, `CAP_LET_RECOGN none` (`speak_character`).
/// - Automatic language switching (`get_voice_families_for_language`) asks `LIST SYNTHESIS_VOICES
///   fr-FR none` (the variant is the chosen family's, the third column of an earlier listing), and only
///   if that lists nothing, `LIST SYNTHESIS_VOICES fr none`; it then names the first voice listed.
/// - `is_responsive` opens a second connection, `Orca-probe`, once, and asks `GET OUTPUT_MODULE` on it
///   at every check.
/// - Orca closes its socket without QUIT right after its last message.
extension SSIPServerTests {
    /// A command and the reply it must get; `#` in a reply stands for a number the server chose (a
    /// client id, a message id).
    typealias Exchange = (command: String, reply: String)

    enum OrcaMaster {
        static func connection(named name: String) -> [Exchange] {
            [
                ("SET self CLIENT_NAME unknown:\(name):default", "208 OK CLIENT NAME SET\r\n"),
                ("HISTORY GET CLIENT_ID", "245-#\r\n245 OK CLIENT ID SENT\r\n"),
            ] + ["index_marks", "begin", "end", "cancel", "pause", "resume"].map {
                ("SET self NOTIFICATION \($0) on", "220 OK NOTIFICATION SET\r\n")
            }
        }

        static let setUp: [Exchange] = connection(named: "Orca") + [
            ("SET self PRIORITY message", "202 OK PRIORITY SET\r\n"),
            ("SET self PUNCTUATION most", "205 OK PUNCTUATION SET\r\n"),
            ("SET self SSML_MODE on", "219 OK SSML MODE SET\r\n"),
            ("SET self PUNCTUATION most", "205 OK PUNCTUATION SET\r\n"),
            ("SET self CAP_LET_RECOGN none", "206 OK CAP LET RECOGNITION SET\r\n"),
        ]

        static func voice(_ language: String, _ dialect: String, name: String? = nil) -> [Exchange] {
            var exchanges: [Exchange] = [
                ("SET self LANGUAGE \(language)", "201 OK LANGUAGE SET\r\n"),
                ("SET self LANGUAGE \(language)-\(dialect)", "201 OK LANGUAGE SET\r\n"),
            ]
            if let name { exchanges.append(("SET self SYNTHESIS_VOICE \(name)", "209 OK VOICE SET\r\n")) }
            return exchanges + [
                ("SET self RATE 0", "203 OK RATE SET\r\n"),
                ("SET self PITCH 0", "204 OK PITCH SET\r\n"),
                ("SET self PITCH_RANGE 0", "263 OK PITCH RANGE SET\r\n"),
                ("SET self VOLUME 100", "218 OK VOLUME SET\r\n"),
            ]
        }

        static func speak(_ ssml: String, in voice: [Exchange]) -> [Exchange] {
            voice + [("SPEAK", "230 OK RECEIVING DATA\r\n"), (ssml + "\r\n.", "225-#\r\n225 OK MESSAGE QUEUED\r\n")]
        }

        static func char(_ character: String, in voice: [Exchange]) -> [Exchange] {
            voice + [("CHAR \(character)", "225-#\r\n225 OK MESSAGE QUEUED\r\n")]
        }

        static func spelledCapital(_ letter: String, in voice: [Exchange]) -> [Exchange] {
            voice + [
                ("SET self CAP_LET_RECOGN spell", "206 OK CAP LET RECOGNITION SET\r\n"),
                ("CHAR \(letter)", "225-#\r\n225 OK MESSAGE QUEUED\r\n"),
                ("SET self CAP_LET_RECOGN none", "206 OK CAP LET RECOGNITION SET\r\n"),
            ]
        }

        static let interruption: Exchange = ("CANCEL self", "213 OK CANCELED\r\n")
        static let probe: Exchange = ("GET OUTPUT_MODULE", "251-espeak-ng\r\n251 OK GET RETURNED\r\n")
        static let french = "249-French (France)\tfr-fr\tnone\r\n249 OK VOICE LIST SENT\r\n"
        static let noVoice = "249 OK VOICE LIST SENT\r\n"
    }

    /// Plays `exchanges` on `client`, checking each reply (events that come between are set aside),
    /// and returns the replies.
    @discardableResult
    func play(_ exchanges: [Exchange], on client: RawSSIPClient) throws -> [String] {
        try exchanges.map { exchange in
            let reply = try client.command(exchange.command)
            #expect(Self.reply(reply, matches: exchange.reply), "\(exchange.command.debugDescription) answered \(reply.debugDescription)")
            return reply
        }
    }

    /// Whether `reply` is `pattern` with each `#` standing for one or more digits.
    static func reply(_ reply: String, matches pattern: String) -> Bool {
        var rest = Substring(reply)
        for (index, piece) in pattern.split(separator: "#", omittingEmptySubsequences: false).enumerated() {
            if index > 0 {
                let digits = rest.prefix { $0.isASCII && $0.isNumber }
                guard !digits.isEmpty else { return false }
                rest = rest.dropFirst(digits.count)
            }
            guard rest.hasPrefix(piece) else { return false }
            rest = rest.dropFirst(piece.count)
        }
        return rest.isEmpty
    }

    /// The number a `245-…`/`225-…` reply carries.
    static func number(in reply: String) -> String { String(reply.dropFirst(4).prefix { $0.isASCII && $0.isNumber }) }

    @Test func orcaMastersConversationIsAnsweredReplyByReply() async throws {
        try await withServer { path, speech, _ in
            typealias Orca = OrcaMaster
            let english = Orca.voice("en", "US")
            let orca = try RawSSIPClient(path: path)
            let setUp = try play(Orca.setUp, on: orca)
            let orcaID = ClientID(rawValue: try #require(UInt64(Self.number(in: setUp[1]))))

            // "Screen reader on.", then the watchdog's first check on a connection of its own.
            try play(Orca.speak(
                #"<speak><mark name="0:6"/>Screen <mark name="7:13"/>reader <mark name="14:17"/>on.</speak>"#,
                in: english), on: orca)
            let probe = try RawSSIPClient(path: path)
            try play(Orca.connection(named: "Orca-probe") + [Orca.probe], on: probe)

            // Typing "a", a space and a capital spelled: each key interrupts, then is echoed.
            try play([Orca.interruption] + Orca.char("a", in: english), on: orca)
            try play([Orca.interruption] + Orca.char("space", in: english), on: orca)
            try play([Orca.interruption] + Orca.spelledCapital("A", in: english), on: orca)

            // French content: the region's voice is found at once.
            try play([("LIST SYNTHESIS_VOICES fr-FR none", Orca.french)], on: orca)
            let bonjour = try play(Orca.speak(
                #"<speak><mark name="0:7"/>Bonjour <mark name="8:12"/>tout <mark name="13:15"/>le <mark name="16:21"/>monde</speak>"#,
                in: Orca.voice("fr", "FR", name: "French (France)")), on: orca)
            // Canadian French: no voice of that region, so Orca asks for the language.
            try play([("LIST SYNTHESIS_VOICES fr-CA none", Orca.noVoice), ("LIST SYNTHESIS_VOICES fr none", Orca.french)], on: orca)
            try play(Orca.speak(
                #"<speak><mark name="0:7"/>Bonjour <mark name="8:10"/>la <mark name="11:17"/>visite</speak>"#,
                in: Orca.voice("fr", "CA", name: "French (France)")), on: orca)

            // The French message's progress reached Orca, whole, after the replies.
            let bonjourID = Self.number(in: try #require(bonjour.last))
            #expect(try orca.waitForEvent("702 END", message: bonjourID) != nil, "\(orca.events)")
            #expect(orca.events.contains { $0.hasPrefix("700-\(bonjourID)\r\n700-\(orcaID.rawValue)\r\n700-16:21\r\n") }, "\(orca.events)")

            // The watchdog again, on the same connection; then "Screen reader off." and Orca goes, without QUIT.
            try play([Orca.probe], on: probe)
            try play(Orca.speak(
                #"<speak><mark name="0:6"/>Screen <mark name="7:13"/>reader <mark name="14:18"/>off.</speak>"#,
                in: english), on: orca)
            orca.close()
            try await waitUntil("Orca's leaving is told") { speech.left.contains(orcaID) }

            let posted = speech.posted.filter { $0.client == orcaID }
            #expect(posted.count == 7, "four messages and three keys")
            #expect(posted.first?.request.language?.lowercased() == "en-us")
            // The named voice chooses its own language: both French messages are said with French (France).
            let french = posted.filter { if case .ssml(let markup) = $0.request.content { markup.contains("Bonjour") } else { false } }
            #expect(french.map(\.request.language) == ["fr-fr", "fr-fr"])
            #expect(posted.allSatisfy { $0.request.urgency == .speechDispatcher(.message) })
            // A CANCEL is carried out on its own turn of the session's loop: the last may still be under way
            // when the leaving is told.
            try await waitUntil("Orca's three CANCELs carried out") { speech.controls.count >= 3 }
            #expect(speech.controls == Array(repeating: FakeSpeech.Control(name: "stop", scope: .client(orcaID)), count: 3))
        }
    }
}
