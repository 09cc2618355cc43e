// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11ySSIP
import Testing

/// The protocol without I/O: each command's reply as speech-dispatcher words it.
@Suite struct SSIPSessionTests {
    let me = ClientID(rawValue: 7)

    func session() -> SSIPSession { SSIPSession(client: me) }

    /// Feeds CRLF-ended lines and collects every action.
    func send(_ session: inout SSIPSession, _ lines: String...) -> [SSIPSession.Action] {
        lines.flatMap { session.receive(.line(Array($0.utf8), crlf: true)) }
    }

    /// The wire text of the replies among `actions`.
    func wire(_ actions: [SSIPSession.Action]) -> String {
        actions.compactMap { if case .reply(let reply) = $0 { reply.description } else { nil } }.joined()
    }

    func reply(_ line: String, on session: inout SSIPSession) -> String {
        wire(send(&session, line))
    }

    @Test func aClientThatSetsNoPriorityOrLanguageGetsSpeechDispatchersDefaults() {
        var s = session()
        #expect(reply("GET LANGUAGE", on: &s) == "251-en-US\r\n251 OK GET RETURNED\r\n")
        #expect(s.settings.priority == .message)
        guard case .speak(let request, _)? = send(&s, "CHAR a").first else { Issue.record("no speak"); return }
        #expect(request.urgency == .speechDispatcher(.message))
        // The daemon's configured default (ssip.default_priority) instead.
        var configured = SSIPSession(client: me, defaultPriority: .text)
        guard case .speak(let text, _)? = send(&configured, "KEY a").first else { Issue.record("no speak"); return }
        #expect(text.urgency == .speechDispatcher(.text))
    }

    @Test func repliesAreCRLFLinesWithDashesBeforeTheLast() {
        #expect(SSIPReply(245, "OK CLIENT ID SENT", lines: ["12"]).description == "245-12\r\n245 OK CLIENT ID SENT\r\n")
        #expect(SSIPReply(700, "INDEX MARK", lines: ["a\r\nb"]).description == "700-a  b\r\n700 INDEX MARK\r\n")
    }

    @Test func orcasSetUpIsAnsweredAsSpeechDispatcherAnswersIt() {
        var s = session()
        let exchange: [(String, String)] = [
            ("SET self CLIENT_NAME unknown:Orca:default", "208 OK CLIENT NAME SET\r\n"),
            ("HISTORY GET CLIENT_ID", "245-7\r\n245 OK CLIENT ID SENT\r\n"),
            ("SET self NOTIFICATION index_marks on", "220 OK NOTIFICATION SET\r\n"),
            ("SET self NOTIFICATION begin on", "220 OK NOTIFICATION SET\r\n"),
            ("SET self PRIORITY message", "202 OK PRIORITY SET\r\n"),
            ("SET self PUNCTUATION most", "205 OK PUNCTUATION SET\r\n"),
            ("SET self SSML_MODE on", "219 OK SSML MODE SET\r\n"),
            ("SET self CAP_LET_RECOGN none", "206 OK CAP LET RECOGNITION SET\r\n"),
            ("SET self RATE 2", "203 OK RATE SET\r\n"),
            ("SET self PITCH 10", "204 OK PITCH SET\r\n"),
            ("SET self VOLUME 100", "218 OK VOLUME SET\r\n"),
            ("SET self LANGUAGE en-US", "201 OK LANGUAGE SET\r\n"),
            ("SET self PITCH_RANGE -5", "263 OK PITCH RANGE SET\r\n"),
            ("SET self SPELLING off", "207 OK SPELLING SET\r\n"),
            ("SET self VOICE_TYPE female1", "209 OK VOICE SET\r\n"),
            ("SET self OUTPUT_MODULE espeak-ng", "216 OK OUTPUT MODULE SET\r\n"),
            ("SET self PAUSE_CONTEXT 2", "217 OK PAUSE CONTEXT SET\r\n"),
            ("SET self HISTORY on", "299 OK BUT NOT IMPLEMENTED -- DOES NOTHING\r\n"),
            ("GET RATE", "251-2\r\n251 OK GET RETURNED\r\n"),
            ("GET VOICE_TYPE", "251-FEMALE1\r\n251 OK GET RETURNED\r\n"),
            ("GET LANGUAGE", "251-en-us\r\n251 OK GET RETURNED\r\n"),
            ("GET PUNCTUATION", "251-most\r\n251 OK GET RETURNED\r\n"),
            ("GET OUTPUT_MODULE", "251-espeak-ng\r\n251 OK GET RETURNED\r\n"),
            ("HISTORY GET LAST", "403 ERR NO MESSAGE\r\n"),
            ("HISTORY GET CLIENT_LIST", "380 ERR NOT YET IMPLEMENTED\r\n"),
        ]
        for (line, expected) in exchange {
            #expect(reply(line, on: &s) == expected, "\(line)")
        }
        #expect(s.settings.notifications == [.indexMarks, .begin])
        #expect(s.settings.priority == .message)
    }

    @Test func commandsAndKeywordsAreCaseInsensitive() {
        var s = session()
        #expect(reply("set SELF priority IMPORTANT", on: &s) == "202 OK PRIORITY SET\r\n")
        #expect(s.settings.priority == .important)
    }

    @Test func badArgumentsGetSpeechDispatchersAnswers() {
        var s = session()
        let exchange: [(String, String)] = [
            ("", "500 ERR INVALID COMMAND\r\n"),
            ("FROBNICATE", "500 ERR INVALID COMMAND\r\n"),
            ("SET", "510 ERR MISSING PARAMETER\r\n"),
            ("SET self", "510 ERR MISSING PARAMETER\r\n"),
            ("SET nobody RATE 1", "514 ERR PARAMETER INVALID\r\n"),
            ("SET self RATE", "510 ERR MISSING PARAMETER\r\n"),
            ("SET self RATE fast", "511 ERR PARAMETER NOT A NUMBER\r\n"),
            ("SET self RATE 101", "409 ERR RATE TOO HIGH\r\n"),
            ("SET self RATE -101", "410 ERR RATE TOO LOW\r\n"),
            ("SET self RATE 99999999999999999999999", "409 ERR RATE TOO HIGH\r\n"),
            ("SET self PITCH 200", "411 ERR PITCH TOO HIGH\r\n"),
            ("SET self VOLUME -200", "414 ERR PITCH TOO LOW\r\n"),
            ("SET self PITCH_RANGE 101", "415 ERR PITCH RANGE TOO HIGH\r\n"),
            ("SET self PRIORITY urgent", "408 ERR UNKNOWN PRIORITY\r\n"),
            ("SET all PRIORITY text", "301 ERR COULDNT SET PRIORITY\r\n"),
            ("SET self CLIENT_NAME orca", "311 ERR COULDNT SET CLIENT_NAME\r\n"),
            ("SET all CLIENT_NAME a:b:c", "514 ERR PARAMETER INVALID\r\n"),
            ("SET self PUNCTUATION loud", "514 ERR PARAMETER INVALID\r\n"),
            ("SET self SPELLING maybe", "513 ERR PARAMETER NOT ON OR OFF\r\n"),
            ("SET self NOTIFICATION everything on", "316 ERR COULDNT SET NOTIFICATION\r\n"),
            ("SET self NOTIFICATION begin maybe", "514 ERR PARAMETER INVALID\r\n"),
            ("SET all NOTIFICATION begin on", "514 ERR PARAMETER INVALID\r\n"),
            ("SET self VOICE_TYPE robot", "309 ERR COULDNT SET VOICE\r\n"),
            ("SET self COLOUR blue", "500 ERR INVALID COMMAND\r\n"),
            ("SET  self RATE 1", "510 ERR MISSING PARAMETER\r\n"),
            ("STOP", "510 ERR MISSING PARAMETER\r\n"),
            ("CANCEL everyone", "514 ERR PARAMETER INVALID\r\n"),
            ("PAUSE 0", "406 ERR ID DOESNT EXIST\r\n"),
            ("RESUME -3", "406 ERR ID DOESNT EXIST\r\n"),
            ("LIST", "510 ERR MISSING PARAMETER\r\n"),
            ("LIST FONTS", "514 ERR PARAMETER INVALID\r\n"),
            ("GET COLOUR", "514 ERR PARAMETER INVALID\r\n"),
            ("HISTORY", "510 ERR MISSING PARAMETER\r\n"),
            ("HISTORY FORGET", "500 ERR INVALID COMMAND\r\n"),
            ("BLOCK", "510 ERR MISSING PARAMETER\r\n"),
            ("BLOCK END", "331 ERR ALREADY OUTSIDE BLOCK\r\n"),
            ("BLOCK SIDEWAYS", "514 ERR PARAMETER INVALID\r\n"),
            ("CHAR", "510 ERR MISSING PARAMETER\r\n"),
        ]
        for (line, expected) in exchange {
            #expect(reply(line, on: &s) == expected, "\(line)")
        }
        #expect(s.settings == SSIPSettings(), "nothing bad changed a setting")
    }

    @Test func speakReceivesDataUntilTheDotLineUnstuffsDotsAndQueues() {
        var s = session()
        #expect(reply("SPEAK", on: &s) == "230 OK RECEIVING DATA\r\n")
        #expect(s.isReceivingData)
        // Data lines get no reply, even when they look like commands.
        #expect(send(&s, "Hello,", "..a dot line", "QUIT").isEmpty)
        let end = send(&s, ".")
        guard case .speak(let request, let notifications)? = end.first else {
            Issue.record("expected .speak, got \(end)")
            return
        }
        #expect(request.content == .text("Hello,\n.a dot line\nQUIT", spans: []))
        #expect(request.urgency == .speechDispatcher(.message), "speech-dispatcher's default priority")
        #expect(notifications == [])
        #expect(wire(s.queued(UtteranceID(rawValue: 42))) == "225-42\r\n225 OK MESSAGE QUEUED\r\n")
        #expect(reply("HISTORY GET LAST", on: &s) == "242-42\r\n242 OK LAST MSG SAID\r\n")
    }

    @Test func aBareLFInsideDataBelongsToTheLine() {
        var s = session()
        _ = send(&s, "SPEAK")
        #expect(s.receive(.line(Array("one".utf8), crlf: false)).isEmpty)
        // "." after a bare LF is not a line of its own.
        #expect(s.receive(.line(Array(".".utf8), crlf: true)).isEmpty)
        guard case .speak(let request, _)? = send(&s, ".").first else { Issue.record("no speak"); return }
        #expect(request.content == .text("one\n.", spans: []))
    }

    @Test func emptyInvalidAndOverlongMessagesAreRefusedAndTheSessionGoesOn() {
        var s = SSIPSession(client: me, limits: .init(maximumMessageBytes: 8))
        _ = send(&s, "SPEAK")
        #expect(wire(send(&s, ".")) == "227 OK MESSAGE CANCELED\r\n")
        _ = send(&s, "SPEAK")
        _ = s.receive(.line([0xC3, 0x28], crlf: true))
        #expect(wire(send(&s, ".")) == "501 ERR INVALID ENCODING\r\n")
        _ = send(&s, "SPEAK", "far more than eight bytes")
        #expect(wire(send(&s, ".")) == "417 ERR MESSAGE TOO LONG\r\n")
        _ = send(&s, "SPEAK")
        _ = s.receive(.overlong)
        #expect(wire(send(&s, ".")) == "417 ERR MESSAGE TOO LONG\r\n")
        #expect(wire(s.receive(.overlong)) == "500 ERR INVALID COMMAND\r\n", "an overlong command")
        #expect(reply("HISTORY GET CLIENT_ID", on: &s) == "245-7\r\n245 OK CLIENT ID SENT\r\n")
    }

    @Test func settingsShapeTheRequest() {
        var s = session()
        _ = send(&s, "SET self RATE -100", "SET self PITCH 100", "SET self VOLUME 0", "SET self LANGUAGE fr",
                 "SET self PRIORITY progress", "SET self SPELLING on", "SET self PUNCTUATION all")
        _ = send(&s, "SPEAK", "abc")
        guard case .speak(let request, _)? = send(&s, ".").first else { Issue.record("no speak"); return }
        #expect(request.rate == 0)
        #expect(request.pitch == PitchShift(octaves: 1), "PITCH 100 is an octave up")
        #expect(request.volume == 0.5)
        #expect(request.language == "fr")
        #expect(request.urgency == .speechDispatcher(.progress))
        #expect(request.content == .text("abc", spans: [SpeechSpan(start: 0, length: 3, spellOut: true, punctuation: true)]))
    }

    @Test func ssmlModeSendsSSMLAndFailsOverToPlainText() {
        var s = session()
        _ = send(&s, "SET self SSML_MODE on", "SPEAK", #"<speak><mark name="0:6"/>Screen &amp; reader</speak>"#)
        guard case .speak(let request, _)? = send(&s, ".").first else { Issue.record("no speak"); return }
        #expect(request.content == .ssml(#"<speak><mark name="0:6"/>Screen &amp; reader</speak>"#))
        let retry = s.failed(SpeechError(.invalidSSML, "bad"))
        guard case .speak(let plain, _)? = retry.first else { Issue.record("no retry"); return }
        #expect(plain.content == .text("Screen & reader", spans: []))
        #expect(wire(s.failed(SpeechError(.engineFailed, "no"))) == "300 ERR INTERNAL\r\n")
    }

    @Test func charKeyAndSoundIconAreMessagesOfTheirOwn() {
        var s = session()
        guard case .speak(let char, _)? = send(&s, "CHAR space").first else { Issue.record("no char"); return }
        #expect(char.content == .text(" ", spans: [SpeechSpan(start: 0, length: 1, spellOut: true)]))
        _ = s.queued(UtteranceID(rawValue: 1))
        guard case .speak(let key, _)? = send(&s, "KEY control_alt_a").first else { Issue.record("no key"); return }
        #expect(key.content == .text("control alt a", spans: [SpeechSpan(start: 12, length: 1, spellOut: true)]))
        _ = s.queued(UtteranceID(rawValue: 2))
        guard case .speak(let icon, _)? = send(&s, "SOUND_ICON message-new").first else { Issue.record("no icon"); return }
        #expect(icon.content == .text("message new", spans: []))
    }

    /// STOP and CANCEL are answered first, as speech-dispatcher answers them (before they take
    /// effect); PAUSE and RESUME once in force.
    @Test func controlsCarryTheirScopeAndReply() {
        var s = session()
        #expect(send(&s, "CANCEL self") == [.reply(SSIPReply(213, "OK CANCELED")), .control(.cancel, .client(me), reply: nil)])
        #expect(send(&s, "STOP all") == [.reply(SSIPReply(210, "OK STOPPED")), .control(.stop, .all, reply: nil)])
        #expect(send(&s, "PAUSE 3") == [.control(.pause, .client(ClientID(rawValue: 3)), reply: SSIPReply(211, "OK PAUSED"))])
        #expect(send(&s, "RESUME self") == [.control(.resume, .client(me), reply: SSIPReply(212, "OK RESUMED"))])
    }

    @Test func setForOthersIsHandedOnAndAnsweredByWhetherTheyExist() {
        var s = session()
        #expect(send(&s, "SET all RATE 50") == [.changeOthers(.rate(50), .all)])
        #expect(s.settings.rate == 50, "all includes self")
        #expect(send(&s, "SET 9 VOLUME 10") == [.changeOthers(.volume(10), .client(ClientID(rawValue: 9)))])
        #expect(wire(s.changedOthers(.volume(10), found: false)) == "314 ERR COULDNT SET VOLUME\r\n")
        #expect(reply("SET 7 PITCH 5", on: &s) == "204 OK PITCH SET\r\n", "our own id is self")
        s.apply(.language("de"))
        #expect(s.settings.language == "de")
    }

    /// Piper is a module beside eSpeak once one of its voices can speak; its voices are
    /// listed by file name under `OUTPUT_MODULE piper`, and one chosen by name is asked for by
    /// identifier (its language alone would be said by eSpeak).
    @Test func piperIsAnOutputModuleWhoseVoicesAreListedAndChosenByFileName() {
        var s = session()
        let espeak = [VoiceInfo(identifier: "en-us", name: "English (America)", languages: ["en-us"])]
        let joe = VoiceInfo(identifier: "piper:en_US-joe-medium", name: "Joe (English, United States)", languages: ["en-us", "en"], engine: "piper", quality: "medium")
        var broken = VoiceInfo(identifier: "piper:fr_FR-broken", name: "Broken", languages: ["fr-fr", "fr"], engine: "piper")
        broken.problem = "fr_FR-broken.onnx.json cannot be read"
        #expect(send(&s, "LIST OUTPUT_MODULES") == [.listOutputModules])
        #expect(wire(s.listedModules(espeak)) == "250-espeak-ng\r\n250 OK MODULE LIST SENT\r\n")
        #expect(wire(s.listedModules(espeak + [broken])) == "250-espeak-ng\r\n250 OK MODULE LIST SENT\r\n")
        #expect(wire(s.listedModules(espeak + [joe, broken])) == "250-espeak-ng\r\n250-piper\r\n250 OK MODULE LIST SENT\r\n")
        let all = espeak + [joe, broken]
        #expect(wire(s.listed(all, language: nil, variant: nil)) == "249-English (America)\ten-us\tnone\r\n249 OK VOICE LIST SENT\r\n")
        #expect(reply("SET self OUTPUT_MODULE piper", on: &s) == "216 OK OUTPUT MODULE SET\r\n")
        #expect(wire(s.listed(all, language: nil, variant: nil)) == "249-en_US-joe-medium\ten-us\tnone\r\n249 OK VOICE LIST SENT\r\n")
        #expect(wire(s.listed(all, language: "en", variant: "none")) == "249-en_US-joe-medium\ten-us\tnone\r\n249 OK VOICE LIST SENT\r\n")
        #expect(wire(s.synthesisVoiceFound(name: "en_US-joe-medium", among: all, target: .this)) == "209 OK VOICE SET\r\n")
        _ = send(&s, "SPEAK", "hello")
        guard case .speak(let request, _)? = send(&s, ".").first else { Issue.record("no speak"); return }
        #expect(request.voice == "piper:en_US-joe-medium")
        #expect(request.language == "en-us")
        _ = s.queued(UtteranceID(rawValue: 1))
        // Back to an eSpeak voice: chosen through its language, as before.
        #expect(wire(s.synthesisVoiceFound(name: "English (America)", among: all, target: .this)) == "209 OK VOICE SET\r\n")
        _ = send(&s, "SPEAK", "hello")
        guard case .speak(let second, _)? = send(&s, ".").first else { Issue.record("no speak"); return }
        #expect(second.voice == nil)
        #expect(second.language == "en-us")
    }

    @Test func synthesisVoicesAreListedAsSpeechDispatcherListsThemAndChosenByName() {
        var s = session()
        #expect(send(&s, "LIST SYNTHESIS_VOICES") == [.listSynthesisVoices(language: nil, variant: nil)])
        let voices = [
            VoiceInfo(identifier: "fr", name: "French (France)", languages: ["fr-fr"]),
            VoiceInfo(identifier: "en-us", name: "English (America)", languages: ["en-us"]),
            VoiceInfo(identifier: "en", name: "English (Great Britain)", languages: ["en-gb", "en"]),
        ]
        #expect(wire(s.listed(voices, language: nil, variant: nil)) ==
            "249-French (France)\tfr-fr\tnone\r\n249-English (America)\ten-us\tnone\r\n249-English (Great Britain)\ten-gb\tnone\r\n249 OK VOICE LIST SENT\r\n")
        #expect(wire(s.listed(voices, language: "en-US", variant: "none")) == "249-English (America)\ten-us\tnone\r\n249 OK VOICE LIST SENT\r\n")
        #expect(wire(s.listed(voices, language: "xx", variant: nil)) == "249 OK VOICE LIST SENT\r\n")
        #expect(send(&s, "SET self SYNTHESIS_VOICE French (France)") == [.findSynthesisVoice(name: "French (France)", target: .this)])
        #expect(wire(s.synthesisVoiceFound(name: "French (France)", among: voices, target: .this)) == "209 OK VOICE SET\r\n")
        _ = send(&s, "SPEAK", "bonjour")
        guard case .speak(let request, _)? = send(&s, ".").first else { Issue.record("no speak"); return }
        #expect(request.language == "fr-fr")
        _ = s.queued(UtteranceID(rawValue: 1))
        _ = send(&s, "SET self LANGUAGE de")
        _ = send(&s, "SPEAK", "hallo")
        guard case .speak(let after, _)? = send(&s, ".").first else { Issue.record("no speak"); return }
        #expect(after.language == "de", "a language set later wins over the voice")
    }

    @Test func listVoicesGivesTheStandardSymbolicNames() {
        var s = session()
        #expect(reply("LIST VOICES", on: &s) ==
            "249-MALE1\r\n249-MALE2\r\n249-MALE3\r\n249-FEMALE1\r\n249-FEMALE2\r\n249-FEMALE3\r\n249-CHILD_MALE\r\n249-CHILD_FEMALE\r\n249 OK VOICE LIST SENT\r\n")
    }

    @Test func aBlockIsOneMessageInThePrioritySystem() {
        var s = session()
        _ = send(&s, "SET self PRIORITY text")
        #expect(reply("BLOCK BEGIN", on: &s) == "260 OK INSIDE BLOCK\r\n")
        #expect(reply("BLOCK BEGIN", on: &s) == "330 ERR ALREADY INSIDE BLOCK\r\n")
        #expect(reply("CANCEL self", on: &s) == "332 ERR NOT ALLOWED INSIDE BLOCK\r\n")
        #expect(reply("SET self PRIORITY important", on: &s) == "332 ERR NOT ALLOWED INSIDE BLOCK\r\n")
        #expect(reply("SET self RATE 10", on: &s) == "203 OK RATE SET\r\n")
        _ = send(&s, "SPEAK", "one")
        guard case .speak(let first, _)? = send(&s, ".").first else { Issue.record("no speak"); return }
        _ = s.queued(UtteranceID(rawValue: 1))
        guard case .speak(let second, _)? = send(&s, "CHAR x").first else { Issue.record("no char"); return }
        _ = s.queued(UtteranceID(rawValue: 2))
        #expect(first.urgency == .speechDispatcher(.text))
        #expect(second.urgency == .voiceOver(.default, queued: true))
        #expect(reply("BLOCK END", on: &s) == "261 OK OUTSIDE BLOCK\r\n")
    }

    @Test func helpAndQuit() {
        var s = session()
        let help = reply("HELP", on: &s)
        #expect(help.hasPrefix("248-  SPEAK           -- say text \r\n"))
        #expect(help.hasSuffix("248-  QUIT            -- close the connection \r\n248 OK HELP SENT\r\n"))
        #expect(send(&s, "QUIT") == [.reply(SSIPReply(231, "HAPPY HACKING")), .close])
        #expect(send(&s, "HELP").isEmpty, "nothing after QUIT")
    }

    @Test func eventsAreSentOnlyWhenAskedAndInSpeechDispatchersForm() {
        let id = UtteranceID(rawValue: 16)
        #expect(SSIPEvents.reply(for: .started(id), client: me, notifications: [.begin])?.description
            == "701-16\r\n701-7\r\n701 BEGIN\r\n")
        #expect(SSIPEvents.reply(for: .mark(id, name: "5:16"), client: me, notifications: .all)?.description
            == "700-16\r\n700-7\r\n700-5:16\r\n700 INDEX MARK\r\n")
        #expect(SSIPEvents.reply(for: .finished(id, text: "", reason: .spoken, message: nil), client: me, notifications: .all)?.code == 702)
        for reason in FinishReason.allCases where reason != .spoken {
            #expect(SSIPEvents.reply(for: .finished(id, text: "", reason: reason, message: nil), client: me, notifications: .all)?.description
                == "703-16\r\n703-7\r\n703 CANCELED\r\n")
        }
        #expect(SSIPEvents.reply(for: .paused(id), client: me, notifications: .all)?.code == 704)
        #expect(SSIPEvents.reply(for: .resumed(id), client: me, notifications: .all)?.code == 705)
        #expect(SSIPEvents.reply(for: .word(id, start: 0, length: 3), client: me, notifications: .all) == nil)
        #expect(SSIPEvents.reply(for: .started(id), client: me, notifications: [.end]) == nil)
    }

    @Test func aClientVanishingMidSpeakLeavesNothingToDo() {
        var s = session()
        _ = send(&s, "SPEAK", "half a message")
        s.end()
        #expect(send(&s, ".").isEmpty)
        #expect(s.isClosed)
    }

    @Test func scalesMapOntoTheSpeechAPIs() {
        #expect(SSIPSettings.requestRate(0) == 0.5)
        #expect(SSIPSettings.requestRate(100) == 1)
        #expect(SSIPSettings.requestPitch(0) == .normal)
        #expect(SSIPSettings.requestPitch(-100) == PitchShift(octaves: -1))
        #expect(SSIPSettings.requestPitch(50) == PitchShift(octaves: 0.5))
        #expect(SSIPSettings.requestVolume(100) == 1)
        #expect(SSIPSettings.requestVolume(-100) == 0)
    }
}
