import A11yCore
import A11yProtocol
import Testing

@Suite struct ProtocolTests {
    @Test func aPostDecodesWithEveryField() throws {
        let request = try LineCodec.decodeRequest(#"""
            {"op":"post","id":"a","kind":"screenChanged","text":"Réglages","queue":true,"priority":"high","lang":"fr","rate":0.7,"pitch":1.2,"volume":0.5}
            """#)
        #expect(request.op == .post && request.id == .string("a") && request.kind == .screenChanged)
        #expect(request.queue == true && request.priority == .high && request.rate == 0.7)
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
        do {
            _ = try LineCodec.decodeRequest(line)
            Issue.record("accepted \(line)")
        } catch {
            #expect(error.code.rawValue == code, "\(error.message)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test func theIDOfAnUndecodableLineIsStillEchoed() {
        #expect(LineCodec.requestID(in: #"{"op":"fly","id":7}"#) == .number(7))
        #expect(LineCodec.requestID(in: #"{"op":"fly","id":"x"}"#) == .string("x"))
        #expect(LineCodec.requestID(in: "garbage") == nil)
    }

    @Test func eventsEncodeWithTheirEventKey() throws {
        let line = LineCodec.encode(ServerMessage(.finished(UtteranceID(rawValue: 3), text: "é", reason: .interrupted, message: "m")))
        let decoded = try LineCodec.decodeMessage(line)
        #expect(decoded.event == "finished" && decoded.utterance == 3 && decoded.successful == false)
        #expect(decoded.reason == .interrupted && decoded.text == "é" && decoded.message == "m")
        #expect(!line.contains("\n"))
    }
}
