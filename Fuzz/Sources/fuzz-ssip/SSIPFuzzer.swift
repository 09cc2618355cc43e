// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yPronunciation
import A11ySSIP
import FuzzSupport
import NIOCore
import NIOEmbedded

/// An SSIP conversation: bytes through the line framing (small limits, so overlong lines and
/// messages are common) into one `SSIPSession`, with the front end's answers played back as a
/// daemon would give them (the request is checked as the speech API checks it; other connections,
/// voices and ids answer from the input's own choice bytes).
///
/// Invariants: every command line and every ended SPEAK body gets exactly one final reply (an
/// action list never waits without one); replies are CRLF lines with a 3-digit code; what the
/// session asks to speak is a valid request (spans inside the text); nothing after QUIT.
@main enum Fuzzer {
    static func main() { runFuzzer(fuzzSSIP) }
}

func fuzzSSIP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let lineLimit = 8 + Int(input.byte())
    let messageLimit = 1 + Int(input.byte())
    let answers = (0..<8).map { _ in input.byte() }
    let bytes = input.rest()

    let channel = EmbeddedChannel(handler: ByteToMessageHandler(SSIPLineDecoder(maximumLength: lineLimit)))
    var buffer = channel.allocator.buffer(capacity: bytes.count)
    buffer.writeBytes(bytes)
    try! channel.writeInbound(buffer)
    _ = try! channel.finish()
    var frames: [SSIPFrame] = []
    while let frame = try! channel.readInbound(as: SSIPFrame.self) { frames.append(frame) }

    var session = SSIPSession(client: ClientID(rawValue: 7), limits: .init(maximumMessageBytes: messageLimit))
    var turn = 0
    var nextID: UInt64 = 1
    for frame in frames {
        if case .line(let line, _) = frame {
            require(line.count <= lineLimit + 1, "a line of \(line.count) bytes passed the limit")
            require(!line.contains(UInt8(ascii: "\n")), "a line holds LF")
        }
        let wasClosed = session.isClosed
        let wasReceiving = session.isReceivingData
        var actions = session.receive(frame)
        if wasClosed { require(actions.isEmpty, "answered after QUIT: \(actions)") }
        var finalReplies = 0
        while !actions.isEmpty {
            let action = actions.removeFirst()
            let answer = answers[turn % answers.count]
            turn += 1
            var next: [SSIPSession.Action] = []
            switch action {
            case .reply(let reply):
                check(reply)
                finalReplies += 1
            case .control(_, _, let reply):
                // Nil for STOP and CANCEL: their reply came before, as a `.reply` of its own.
                if let reply {
                    check(reply)
                    finalReplies += 1
                }
            case .speak(let request, _):
                switch prepare(request) {
                case .failure(let error): next = session.failed(error)
                case .success:
                    next = answer & 1 == 0
                        ? session.queued(UtteranceID(rawValue: nextID))
                        : session.failed(SpeechError(answer & 2 == 0 ? .unknownVoice : .engineFailed, "no"))
                    nextID += 1
                }
            case .changeOthers(let change, _):
                next = session.changedOthers(change, found: answer & 1 == 0)
            case .findSynthesisVoice(let name, let target):
                next = session.synthesisVoiceFound(name: name, among: answer & 1 == 0 ? voices : [], target: target)
            case .listSynthesisVoices(let language, let variant):
                next = session.listed(voices, language: language, variant: variant)
            case .listOutputModules:
                next = session.listedModules(voices)
            case .close:
                require(session.isClosed, "close while the session is open")
            }
            actions = next + actions
        }
        if wasClosed { continue }
        if wasReceiving && session.isReceivingData {
            require(finalReplies == 0, "a reply in the middle of a SPEAK body")
        } else {
            require(finalReplies == 1, "\(finalReplies) replies to one line (\(frame))")
        }
    }
    session.end()
    return 0
}

let voices = [
    VoiceInfo(identifier: "fr", name: "French", languages: ["fr-FR"]),
    VoiceInfo(identifier: "en-us", name: "English (America)", languages: ["en-US"]),
    VoiceInfo(identifier: "pt-br", name: "Portuguese (Brazil)", languages: ["pt_BR"]),
]

/// What `SpeechService.prepare` refuses without an engine: an empty text, spans that do not fit
/// it (a bug of the session, never of the client), SSML that does not parse.
func prepare(_ request: SpeechRequest) -> Result<Void, SpeechError> {
    switch request.content {
    case .text(let text, let spans):
        if text.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
            return .failure(SpeechError(.invalidRequest, "empty"))
        }
        do {
            _ = try SpeechSpan.validate(spans, textLength: text.unicodeScalars.count)
        } catch {
            require(false, "the session built invalid spans \(spans) for \(Array(text.unicodeScalars)): \(error)")
        }
    case .ssml(let markup):
        do {
            _ = try SSMLParser.parse(markup)
        } catch {
            return .failure(SpeechError(wrapping: error))
        }
    case .element:
        require(false, "SSIP never posts an element")
    }
    for value in [request.rate, request.pitch?.octaves, request.volume].compactMap({ $0 }) {
        require(value.isFinite, "a non-finite setting in \(request)")
    }
    if let rate = request.rate { require((0...1).contains(rate), "rate \(rate)") }
    if let pitch = request.pitch { require((-1...1).contains(pitch.octaves), "pitch \(pitch.octaves) octaves") }
    if let volume = request.volume { require((0...1).contains(volume), "volume \(volume)") }
    return .success(())
}

func check(_ reply: SSIPReply) {
    let bytes = reply.wireBytes
    require((100...999).contains(reply.code), "code \(reply.code)")
    require(bytes.count >= 6 && bytes.suffix(2) == [13, 10], "a reply not ended by CRLF")
    var lines = bytes.split(separator: 10, omittingEmptySubsequences: false)
    require(lines.removeLast().isEmpty, "bytes after the last LF")
    for (index, line) in lines.enumerated() {
        require(line.last == 13 && !line.dropLast().contains(13), "a reply line with a stray CR")
        let last = index == lines.count - 1
        let prefix = Array(String(reply.code).utf8) + [UInt8(ascii: last ? " " : "-")]
        require(line.starts(with: prefix), "reply line \(index) does not start with \(reply.code)\(last ? " " : "-")")
    }
}
