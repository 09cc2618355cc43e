// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

// SPEAK and its body, CHAR, KEY and SOUND_ICON: what becomes a message to say.
extension SSIPSession {
    // MARK: SPEAK data

    mutating func receiveData(_ frame: SSIPFrame, into body: inout MessageBody) -> [Action] {
        guard case .line(var line, let crlf) = frame else {
            body.tooLong = true
            return []
        }
        let startsLine = !body.continuesLine
        if startsLine, crlf, line == [UInt8(ascii: ".")] {
            return endOfData(body)
        }
        // A line starting with a dot was sent with one more (the manual's dot-stuffing).
        if startsLine, line.starts(with: [UInt8(ascii: "."), UInt8(ascii: ".")]) { line.removeFirst() }
        if !body.bytes.isEmpty || !startsLine { body.bytes.append(UInt8(ascii: "\n")) }
        if body.bytes.count + line.count > limits.maximumMessageBytes { body.tooLong = true }
        if !body.tooLong { body.bytes += line }
        body.continuesLine = !crlf
        return []
    }

    mutating func endOfData(_ body: MessageBody) -> [Action] {
        if body.tooLong {
            mode = .commands
            return [.reply(.messageTooLong)]
        }
        if body.bytes.isEmpty {
            mode = .commands
            return [.reply(.messageCanceled)]
        }
        guard let text = String(validating: body.bytes, as: UTF8.self) else {
            mode = .commands
            return [.reply(.invalidEncoding)]
        }
        var content: SpeechRequest.Content
        if settings.ssml {
            content = .ssml(text)
        } else {
            var spans: [SpeechSpan] = []
            let length = text.unicodeScalars.count
            if settings.spelling || settings.punctuation == .all {
                spans.append(SpeechSpan(
                    start: 0, length: length, spellOut: settings.spelling ? true : nil,
                    punctuation: settings.punctuation == .all ? true : nil))
            }
            content = .text(text, spans: spans)
        }
        return speak(content)
    }

    /// CHAR, KEY and SOUND_ICON: one argument, said at once as its own message.
    mutating func event(_ name: String, _ arguments: SSIPArguments, bytes: [UInt8]) -> [Action] {
        guard let argument = arguments.raw(1) else { return [.reply(.missingParameter)] }
        guard String(validating: bytes, as: UTF8.self) != nil else { return [.reply(.invalidEncoding)] }
        switch name {
        case "char":
            let character = argument == "space" ? " " : argument
            return speak(.text(character, spans: [SpeechSpan(start: 0, length: character.unicodeScalars.count, spellOut: true)]))
        case "key":
            let (text, spans) = SSIPKeyName.utterance(argument == "space" ? "space" : argument)
            return speak(.text(text, spans: spans))
        default:
            // A11yd has no sound icons: the icon's name is said instead, so the message still has
            // its events.
            return speak(.text(argument.replacingUnderscoresAndDashes))
        }
    }

    private mutating func speak(_ content: SpeechRequest.Content) -> [Action] {
        // A block is one message in the priority system: its first message carries the priority,
        // the others follow it in order and cut nothing (VoiceOver's queued rule, where the
        // priority places them).
        let urgency: Urgency = inBlock && blockHasMessage
            ? .voiceOver(settings.priority.queuePriority, queued: true)
            : .speechDispatcher(settings.priority)
        if inBlock { blockHasMessage = true }
        let request = SpeechRequest(
            content, urgency: urgency, language: settings.requestLanguage, rate: SSIPSettings.requestRate(settings.rate),
            pitch: SSIPSettings.requestPitch(settings.pitch), volume: SSIPSettings.requestVolume(settings.volume),
            voice: settings.synthesisVoice?.identifier)
        mode = .speaking(request)
        return [.speak(request, notifications: settings.notifications)]
    }
}

private extension String {
    var replacingUnderscoresAndDashes: String {
        String(map { $0 == "_" || $0 == "-" ? " " : $0 })
    }
}
