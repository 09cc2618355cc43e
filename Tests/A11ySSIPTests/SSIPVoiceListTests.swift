// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11ySSIP
import Testing

/// `LIST SYNTHESIS_VOICES [language [variant]]` filtered as speech-dispatcher 0.12 filters it (its
/// output modules' `cmd_list_voices`, src/modules/module_process.c), one row per rule.
@Suite struct SSIPVoiceListTests {
    /// eSpeak NG's own tags (a11yd lists a voice by its first language), plus a voice tagged with a
    /// bare language, as some engines tag theirs.
    static let voices = [
        VoiceInfo(identifier: "fr", name: "French (France)", languages: ["fr-fr", "fr"]),
        VoiceInfo(identifier: "fr-be", name: "French (Belgium)", languages: ["fr-be", "fr"]),
        VoiceInfo(identifier: "mb-fr1", name: "French", languages: ["fr"]),
        VoiceInfo(identifier: "en-us", name: "English (America)", languages: ["en-us", "en"]),
        VoiceInfo(identifier: "en", name: "English (Great Britain)", languages: ["en-gb", "en"]),
        VoiceInfo(identifier: "en-gb-x-rp", name: "English (Received Pronunciation)", languages: ["en-gb-x-rp", "en"]),
        VoiceInfo(identifier: "de", name: "German", languages: ["de"]),
    ]
    static let everyName = voices.map(\.name)
    static let french = ["French (France)", "French (Belgium)", "French"]

    struct Row: Sendable, CustomTestStringConvertible {
        var language: String?
        var variant: String?
        var listed: [String]
        var why: String
        var testDescription: String { "LIST SYNTHESIS_VOICES \(language ?? "") \(variant ?? ""): \(why)" }
    }

    static let rows: [Row] = [
        Row(language: nil, variant: nil, listed: everyName, why: "no language: every voice"),
        Row(language: "fr-FR", variant: "none", listed: ["French (France)"],
            why: "Orca's first ask: the region's voice, case ignored, none the variant of every voice"),
        Row(language: "fr", variant: "none", listed: french, why: "Orca's second ask: every voice of the language"),
        Row(language: "fr-FR", variant: nil, listed: ["French (France)"], why: "not the voice tagged plain fr"),
        Row(language: "FR-fr", variant: "NONE", listed: ["French (France)"], why: "language and variant ignore case"),
        Row(language: "FR", variant: nil, listed: french, why: "the language before the first dash, case ignored"),
        Row(language: "fr-CA", variant: "none", listed: [], why: "no voice of that region: none, no fallback to fr"),
        Row(language: "de-DE", variant: nil, listed: [], why: "a voice tagged de is no voice of de-DE"),
        Row(language: "de", variant: "none", listed: ["German"], why: "a bare tag is matched whole"),
        Row(language: "en", variant: nil, listed: ["English (America)", "English (Great Britain)", "English (Received Pronunciation)"],
            why: "by each voice's first language only"),
        Row(language: "en-gb", variant: nil, listed: ["English (Great Britain)"], why: "en-gb-x-rp is cut at its first dash only"),
        Row(language: "en", variant: "US", listed: [], why: "the variant is not a region: no voice has variant US"),
        Row(language: "fr", variant: "Annie", listed: [], why: "no a11yd voice has a variant"),
        Row(language: "fr_FR", variant: nil, listed: [], why: "an underscore is not a dash"),
        Row(language: "f", variant: nil, listed: [], why: "a prefix of a language is not the language"),
    ]

    @Test(arguments: rows) func listsWhatSpeechDispatcherListsForTheArguments(_ row: Row) {
        let session = SSIPSession(client: ClientID(rawValue: 7))
        let replies = session.listed(Self.voices, language: row.language, variant: row.variant)
        // On the wire: one `249-name<TAB>language<TAB>none` line per voice listed, in the voices' order.
        let expected = replyLines(row.listed).map { "249-\($0)\r\n" }.joined() + "249 OK VOICE LIST SENT\r\n"
        #expect(replies.map { if case .reply(let reply) = $0 { reply.description } else { "" } } == [expected])
    }

    /// The data lines `name<TAB>language<TAB>none` for `names`, in the voices' order.
    func replyLines(_ names: [String]) -> [String] {
        Self.voices.filter { names.contains($0.name) }.map { "\($0.name)\t\($0.languages[0])\tnone" }
    }

    @Test func theArgumentsAreHandedOnAsSentAndAVariantWithoutALanguageIsIgnored() {
        var session = SSIPSession(client: ClientID(rawValue: 7))
        #expect(session.receive(.line(Array("LIST SYNTHESIS_VOICES fr-FR none".utf8), crlf: true))
            == [.listSynthesisVoices(language: "fr-FR", variant: "none")])
        // Two spaces: an empty language, which speech-dispatcher reads as none given.
        let actions = session.receive(.line(Array("LIST SYNTHESIS_VOICES  Annie".utf8), crlf: true))
        #expect(actions == [.listSynthesisVoices(language: nil, variant: "Annie")])
        #expect(session.listed(Self.voices, language: nil, variant: "Annie")
            == [.reply(SSIPReply(249, "OK VOICE LIST SENT", lines: replyLines(Self.everyName)))])
    }

    /// speech-dispatcher's module answers an empty match `304 CANT LIST VOICES` (and the manual shows
    /// that), but its server reads the 304 as the end of an empty list and answers `249` alone.
    @Test func anEmptyMatchIsAnEmptyListNotAnError() {
        let session = SSIPSession(client: ClientID(rawValue: 7))
        #expect(session.listed(Self.voices, language: "fr-CA", variant: nil) == [.reply(SSIPReply(249, "OK VOICE LIST SENT"))])
        #expect(session.listed([], language: nil, variant: nil) == [.reply(SSIPReply(249, "OK VOICE LIST SENT"))])
    }
}
