// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import Testing

@Suite struct ProtocolTests {
    func decode(_ line: String) -> Result<RequestLine, RequestLineError> {
        LineCodec.decodeRequest(Array(line.utf8))
    }

    /// As the daemon reads a line: decoded, then checked for the speech API.
    func decodeChecked(_ line: String) -> Result<CheckedRequest, RequestLineError> {
        LineCodec.decodeCheckedRequest(Array(line.utf8))
    }

    @Test func aPostDecodesWithEveryField() throws {
        let line = try decode(#"""
            {"op":"post","id":"a","kind":"screenChanged","text":"Réglages","queue":true,"priority":"high","lang":"fr","rate":0.7,"pitch":1.2,"volume":0.5}
            """#).get()
        guard case .post(let post) = line.request else {
            Issue.record("not a post: \(line)")
            return
        }
        #expect(line.id == .string("a") && post.kind == .screenChanged)
        #expect(post.queue == true && post.priority == .high && post.rate == 0.7)
    }

    /// A post is converted to the speech API's request once, as it is read.
    @Test func aCheckedPostIsTheSpeechRequest() throws {
        let request = try decodeChecked(#"{"op":"post","id":2,"kind":"layoutChanged","text":"trois","lang":"fr","pitch":2}"#).get()
        #expect(request == CheckedRequest(
            .post(SpeechRequest(.text("trois"), kind: .layoutChanged, urgency: .voiceOver(.default, queued: false), language: "fr", pitch: PitchShift(octaves: 1))),
            id: .number(2)))
    }

    /// AVSpeechUtterance's pitch multiplier is a shift in octaves, its base-2 logarithm: half is an
    /// octave down, double an octave up (what SSIP's PITCH -100 and 100 are).
    @Test(arguments: [(0.5, -1.0), (1, 0), (2, 1), (1.4142135623730951, 0.5)])
    func aPitchMultiplierIsAShiftInOctaves(multiplier: Double, octaves: Double) throws {
        let request = try decodeChecked(#"{"op":"post","text":"x","pitch":\#(multiplier)}"#).get()
        guard case .post(let post) = request.action else { Issue.record("not a post: \(request)"); return }
        let shift = try #require(post.pitch)
        #expect(abs(shift.octaves - octaves) < 1e-12, "pitch \(multiplier) is \(shift.octaves) octaves")
    }

    /// A post's `priority` and `queue` become one urgency under VoiceOver's rules; a post that names
    /// no priority gets its kind's, and one that does not say `queue` interrupts.
    @Test(arguments: [
        (#""text":"x""#, Urgency.voiceOver(.default, queued: false)),
        (#""text":"x","kind":"screenChanged""#, .voiceOver(.high, queued: false)),
        (#""text":"x","kind":"screenChanged","priority":"low""#, .voiceOver(.low, queued: false)),
        (#""text":"x","queue":true"#, .voiceOver(.default, queued: true)),
        (#""text":"x","queue":false,"priority":"high""#, .voiceOver(.high, queued: false)),
    ])
    func aPostsPriorityAndQueueAreItsUrgency(fields: String, urgency: Urgency) throws {
        guard case .post(let request) = try decodeChecked(#"{"op":"post",\#(fields)}"#).get().action else {
            Issue.record("not a post")
            return
        }
        #expect(request.urgency == urgency)
    }

    @Test(arguments: [
        (#"["not","an","object"]"#, "bad_json"),
        (#"{"text":"x"}"#, "invalid_request"),
        (#"{"op":"sing"}"#, "unknown_op"),
        (#"{"op":"post"}"#, "invalid_request"),
        (#"{"op":"post","text":"   "}"#, "invalid_request"),
        (#"{"op":"post","text":"x","priority":"urgent"}"#, "invalid_request"),
        (#"{"op":"post","text":"x","pitch":3}"#, "invalid_request"),
        (#"{"op":"post","text":"x","ssml":"<speak/>"}"#, "invalid_request"),
        (#"{"op":"pause","at":"sentence"}"#, "invalid_request"),
    ])
    func badRequestsGetACode(line: String, code: String) {
        switch decodeChecked(line) {
        case .success:
            Issue.record("accepted \(line)")
        case .failure(let failure):
            #expect(failure.error.code == code, "\(failure.error.message)")
            #expect(!failure.error.message.isEmpty)
        }
    }

    @Test func invalidUTF8IsRefusedNotRepaired() {
        var line = Array(#"{"op":"post","id":1,"text":"caf"#.utf8)
        line += [0xC3, 0x28]  // a lead byte followed by a byte that cannot continue it
        line += Array(#""}"#.utf8)
        guard case .failure(let failure) = LineCodec.decodeRequest(line) else {
            Issue.record("accepted invalid UTF-8")
            return
        }
        #expect(failure.error.code == "bad_utf8")
    }

    @Test func theIDOfAnUndecodableLineIsStillEchoed() {
        #expect(decodeChecked(#"{"op":"post","id":8,"text":"x","rate":2}"#).failureID == .number(8))
        #expect(decode(#"{"op":"fly","id":7}"#).failureID == .number(7))
        #expect(decode(#"{"op":"fly","id":"x"}"#).failureID == .string("x"))
        #expect(decode("garbage").failureID == nil)
    }

    /// Each error chooses its form on the wire: the speech API's codes and the protocol's own each
    /// have their name, and anything else is `internal`.
    @Test func errorsChooseTheirOwnWireForm() {
        let names = SpeechError.Code.all.map(SpeechError.wireName(of:))
        #expect(Set(names).count == names.count, "\(names)")
        #expect(ServerMessage.failure(for: SpeechError(.unknownVoice, "non"), to: nil) == .failure(.init(code: "unknown_voice", message: "non"), to: nil))
        #expect(ServerMessage.failure(for: ProtocolError(.lineTooLong, "long"), to: .number(1)) == .failure(.init(code: "line_too_long", message: "long"), to: .number(1)))
        struct Unexpected: Error {}
        guard case .failure(let wire, _) = ServerMessage.failure(for: Unexpected(), to: nil) else {
            Issue.record("not a failure")
            return
        }
        #expect(wire.code == "internal")
    }

    /// The queue's own pause is `paused` without an utterance, and reads back as such.
    @Test func theQueuesPauseIsPausedWithoutAnUtterance() throws {
        let line = LineCodec.encodeString(ServerMessage.event(.queuePaused))
        #expect(line == #"{"event":"paused"}"#)
        #expect(try LineCodec.decodeMessage(Array(line.utf8)) == .event(.queuePaused))
        let utterance = LineCodec.encodeString(ServerMessage.event(.paused(UtteranceID(rawValue: 4))))
        #expect(try LineCodec.decodeMessage(Array(utterance.utf8)) == .event(.paused(UtteranceID(rawValue: 4))))
    }

    @Test func eventsEncodeWithTheirEventKey() throws {
        let finished = ServerMessage.event(.finished(UtteranceID(rawValue: 3), text: "é", reason: .interrupted, message: "m"))
        let line = LineCodec.encodeString(finished)
        #expect(line.hasPrefix(#"{"event":"finished","#), "\(line)")
        #expect(try LineCodec.decodeMessage(Array(line.utf8)) == finished)
        #expect(!line.contains("\n"))
    }
}

extension Result where Failure == RequestLineError {
    var failureID: RequestID? {
        if case .failure(let failure) = self { return failure.id }
        return nil
    }
}
