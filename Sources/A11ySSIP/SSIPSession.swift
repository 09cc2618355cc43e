import A11yCore

/// One SSIP connection's side of the conversation, as a pure state machine in the manner of
/// `SpeechQueue`: it takes the lines a client sends and says what to do as a list of `Action`s,
/// replies included; it never touches a socket or the speech API. Where an action needs an answer
/// from outside (an utterance id, the voice list, another connection), the front end performs it and
/// calls back the matching method, which returns what to do next.
///
/// Every input has an answer, none of them a crash: garbage gets speech-dispatcher's 5xx, bad
/// arguments its 4xx, and every buffer is bounded (`Limits`).
public struct SSIPSession: Sendable {
    public struct Limits: Sendable {
        /// Most bytes of one SPEAK body; beyond it the body is read to its end and refused whole.
        public var maximumMessageBytes: Int

        public init(maximumMessageBytes: Int = 1 << 20) {
            self.maximumMessageBytes = maximumMessageBytes
        }
    }

    /// Which control a STOP, CANCEL, PAUSE or RESUME asks for.
    public enum Control: Sendable, Equatable {
        /// STOP and CANCEL both end what is speaking and waiting in scope (docs/ssip.md says why).
        case stop
        case cancel
        case pause
        case resume
    }

    /// What the front end must do after a line, in order.
    public enum Action: Sendable, Equatable {
        /// Write this reply.
        case reply(SSIPReply)
        /// Prepare and queue this request in the client's name; its events go to the client as
        /// `notifications` says. Then call `queued(_:)` or `failed(_:)`.
        case speak(SpeechRequest, notifications: SSIPNotifications)
        /// Apply the control through the speech API, then write `reply`.
        case control(Control, ControlScope, reply: SSIPReply)
        /// Hand the change to other connections (`.all`: every other one), then call
        /// `changedOthers(_:found:)`.
        case changeOthers(SSIPSettingChange, ControlScope)
        /// Find the language of the voice `LIST SYNTHESIS_VOICES` calls `name`, then call
        /// `synthesisVoiceFound(name:language:target:)`.
        case findSynthesisVoice(name: String, target: Target)
        /// List the voices, then call `listed(_:language:variant:)`.
        case listSynthesisVoices(language: String?, variant: String?)
        /// Write everything before, then close the connection.
        case close
    }

    /// Whom a SET is for.
    public enum Target: Sendable, Hashable {
        case this
        case all
        case client(ClientID)
    }

    private enum Mode: Sendable {
        case commands
        /// Between `230 OK RECEIVING DATA` and the line holding `.`.
        case receiving(MessageBody)
        /// Waiting for the front end to say how a `.speak` went.
        case speaking(SpeechRequest)
        case closed
    }

    /// A SPEAK body as it arrives.
    private struct MessageBody: Sendable {
        var bytes: [UInt8] = []
        /// The last piece ended in a bare LF: the next one continues the same SSIP line.
        var continuesLine = false
        var tooLong = false
    }

    public let client: ClientID
    public private(set) var settings = SSIPSettings()
    public let limits: Limits
    /// What `GET LANGUAGE` says before the client sets one.
    public let defaultLanguage: String
    private var mode = Mode.commands
    private var inBlock = false
    private var blockHasMessage = false
    private var lastMessage: UtteranceID?

    public init(
        client: ClientID, defaultLanguage: String = "en-US", defaultPriority: MessagePriority = .message,
        limits: Limits = Limits()
    ) {
        self.client = client
        self.defaultLanguage = defaultLanguage
        self.limits = limits
        settings.priority = defaultPriority
    }

    /// Whether the client is sending a SPEAK body.
    public var isReceivingData: Bool {
        if case .receiving = mode { return true }
        return false
    }

    public var isClosed: Bool {
        if case .closed = mode { return true }
        return false
    }

    // MARK: - Input

    public mutating func receive(_ frame: SSIPFrame) -> [Action] {
        switch mode {
        case .closed:
            return []
        case .speaking:
            // The front end calls back before it reads the next line; a line now is its bug.
            return [.reply(.internalError)]
        case .receiving(var body):
            mode = .commands  // while `body` is out of `mode`, so that appending does not copy it
            let actions = receiveData(frame, into: &body)
            if case .commands = mode, actions.isEmpty { mode = .receiving(body) }
            return actions
        case .commands:
            switch frame {
            case .overlong:
                return [.reply(.invalidCommand)]
            case .line(let bytes, _):
                // Commands are ASCII; a stray byte only makes the command unknown.
                return command(SSIPArguments(String(decoding: bytes, as: UTF8.self)), bytes: bytes)
            }
        }
    }

    /// The client went away. A SPEAK body not ended by its `.` line is dropped, as
    /// speech-dispatcher drops it.
    public mutating func end() {
        mode = .closed
    }

    // MARK: - Answers from the front end

    /// The message of the last `.speak` is queued as `id`.
    public mutating func queued(_ id: UtteranceID) -> [Action] {
        mode = .commands
        lastMessage = id
        return [.reply(SSIPReply.messageQueued.with(lines: [String(id.rawValue)]))]
    }

    /// The message of the last `.speak` could not be prepared. A11yd would rather speak than
    /// refuse: SSML it cannot read is said as plain text, a language it has no voice for in the
    /// default voice; a message with nothing to say is answered as speech-dispatcher answers an
    /// empty one.
    public mutating func failed(_ error: SpeechError) -> [Action] {
        guard case .speaking(var request) = mode else { return [] }
        switch (error.code, request.content) {
        case (.invalidSSML, .ssml(let markup)):
            request.content = .text(SSMLText.plainText(markup))
        case (.unknownVoice, _) where request.language != nil:
            request.language = nil
        case (.invalidRequest, _):
            mode = .commands
            return [.reply(.messageCanceled)]
        default:
            mode = .commands
            return [.reply(.internalError)]
        }
        mode = .speaking(request)
        return [.speak(request, notifications: settings.notifications)]
    }

    /// How a change for other connections went: `found` is false when no connection has the id.
    public func changedOthers(_ change: SSIPSettingChange, found: Bool) -> [Action] {
        [.reply(found ? change.replies.success : change.replies.failure)]
    }

    public mutating func synthesisVoiceFound(name: String, language: String?, target: Target) -> [Action] {
        set(.synthesisVoice(name: name, language: language), for: target)
    }

    /// Answers `LIST SYNTHESIS_VOICES`, as speech-dispatcher lists them: `name<TAB>language<TAB>variant`.
    public func listed(_ voices: [VoiceInfo], language: String?, variant: String?) -> [Action] {
        // `LIST SYNTHESIS_VOICES fr` lists every French voice; `… en us` only en-us ones.
        let wanted = language.map { language in Self.normalized(variant.map { "\(language)-\($0)" } ?? language) }
        var lines: [String] = []
        for voice in voices {
            let tag = voice.languages.first ?? voice.identifier
            if let wanted {
                let normalized = Self.normalized(tag)
                guard normalized == wanted || normalized.hasPrefix(wanted + "-") else { continue }
            }
            lines.append("\(voice.name)\t\(tag)\tnone")
        }
        return [.reply(SSIPReply.voiceList.with(lines: lines))]
    }

    private static func normalized(_ tag: String) -> String {
        String(tag.lowercased().map { $0 == "_" ? "-" : $0 })
    }

    // MARK: - Commands

    /// Commands speech-dispatcher refuses inside BLOCK … END, before looking at their arguments.
    private static let refusedInBlock: Set<String> = [
        "history", "stop", "cancel", "pause", "resume", "list", "get", "help",
    ]

    private mutating func command(_ arguments: SSIPArguments, bytes: [UInt8]) -> [Action] {
        let name = arguments.command
        if inBlock, Self.refusedInBlock.contains(name) { return [.reply(.notAllowedInsideBlock)] }
        switch name {
        case "speak":
            mode = .receiving(MessageBody())
            return [.reply(.receivingData)]
        case "char", "key", "sound_icon":
            return event(name, arguments, bytes: bytes)
        case "set": return set(arguments)
        case "stop": return control(.stop, arguments, reply: .stopped)
        case "cancel": return control(.cancel, arguments, reply: .canceled)
        case "pause": return control(.pause, arguments, reply: .paused)
        case "resume": return control(.resume, arguments, reply: .resumed)
        case "block": return block(arguments)
        case "list": return list(arguments)
        case "get": return get(arguments)
        case "history": return history(arguments)
        case "help": return [.reply(.helpText)]
        case "quit", "bye":
            mode = .closed
            return [.reply(.bye), .close]
        default:
            return [.reply(.invalidCommand)]
        }
    }

    // MARK: SPEAK data

    private mutating func receiveData(_ frame: SSIPFrame, into body: inout MessageBody) -> [Action] {
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

    private mutating func endOfData(_ body: MessageBody) -> [Action] {
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
    private mutating func event(_ name: String, _ arguments: SSIPArguments, bytes: [UInt8]) -> [Action] {
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
        var request = SpeechRequest(
            content, language: settings.requestLanguage, rate: SSIPSettings.requestRate(settings.rate),
            pitch: SSIPSettings.requestPitch(settings.pitch), volume: SSIPSettings.requestVolume(settings.volume),
            messagePriority: settings.priority)
        if inBlock {
            // A block is one message in the priority system: its first message carries the
            // priority, the others follow it in order and cut nothing.
            if blockHasMessage {
                request.messagePriority = nil
                request.priority = settings.priority.queuePriority
                request.queued = true
            }
            blockHasMessage = true
        }
        mode = .speaking(request)
        return [.speak(request, notifications: settings.notifications)]
    }

    // MARK: SET

    private mutating func set(_ arguments: SSIPArguments) -> [Action] {
        guard let who = arguments.raw(1) else { return [.reply(.missingParameter)] }
        guard let target = Self.target(who) else { return [.reply(.invalidParameter)] }
        guard let setting = arguments.keyword(2) else { return [.reply(.missingParameter)] }
        switch setting {
        case "priority":
            if inBlock { return [.reply(.notAllowedInsideBlock)] }
            guard target == .this else { return [.reply(.couldNotSetPriority)] }
            guard let value = arguments.keyword(3) else { return [.reply(.missingParameter)] }
            guard let priority = MessagePriority(rawValue: value) else { return [.reply(.unknownPriority)] }
            settings.priority = priority
            return [.reply(.prioritySet)]
        case "client_name":
            if inBlock { return [.reply(.notAllowedInsideBlock)] }
            guard target == .this else { return [.reply(.invalidParameter)] }
            guard let name = arguments.keyword(3) else { return [.reply(.missingParameter)] }
            guard name.filter({ $0 == ":" }).count == 2 else { return [.reply(.couldNotSetClientName)] }
            settings.clientName = name
            return [.reply(.clientNameSet)]
        case "notification":
            guard target == .this else { return [.reply(.invalidParameter)] }
            guard let kind = arguments.keyword(3), let state = arguments.keyword(4) else {
                return [.reply(.missingParameter)]
            }
            guard let on = Self.onOff(state) else { return [.reply(.invalidParameter)] }
            guard let notifications = SSIPNotifications(name: kind) else { return [.reply(.couldNotSetNotification)] }
            if on { settings.notifications.formUnion(notifications) } else { settings.notifications.subtract(notifications) }
            return [.reply(.notificationSet)]
        case "language":
            guard let language = arguments.keyword(3) else { return [.reply(.missingParameter)] }
            return set(.language(language), for: target)
        case "synthesis_voice":
            guard let name = arguments.rest(from: 3) else { return [.reply(.couldNotSetVoice)] }
            return [.findSynthesisVoice(name: name, target: target)]
        default:
            return setMore(setting, arguments, target: target)
        }
    }

    private mutating func setMore(_ setting: String, _ arguments: SSIPArguments, target: Target) -> [Action] {
        func numeric(_ low: SSIPReply, _ high: SSIPReply, _ make: (Int) -> SSIPSettingChange) -> [Action] {
            switch Self.integer(arguments, low: low, high: high) {
            case .failure(let error): [.reply(error.reply)]
            case .success(let value): set(make(value), for: target)
            }
        }
        switch setting {
        case "rate": return numeric(.rateTooLow, .rateTooHigh) { .rate($0) }
        case "pitch": return numeric(.pitchTooLow, .pitchTooHigh) { .pitch($0) }
        case "pitch_range": return numeric(.pitchRangeTooLow, .pitchRangeTooHigh) { .pitchRange($0) }
        case "volume": return numeric(.volumeTooLow, .volumeTooHigh) { .volume($0) }
        case "pause_context":
            guard let text = arguments.raw(3) else { return [.reply(.missingParameter)] }
            guard let value = SSIPArguments.integer(text) else { return [.reply(.notANumber)] }
            return set(.pauseContext(value), for: target)
        case "voice_type":
            guard let name = arguments.raw(3) else { return [.reply(.missingParameter)] }
            guard SSIPSettings.voiceTypes.contains(name.uppercased()) else { return [.reply(.couldNotSetVoice)] }
            return set(.voiceType(name.uppercased()), for: target)
        case "punctuation":
            guard let value = arguments.keyword(3) else { return [.reply(.missingParameter)] }
            guard let mode = SSIPSettings.Punctuation(rawValue: value) else { return [.reply(.invalidParameter)] }
            return set(.punctuation(mode), for: target)
        case "cap_let_recogn":
            guard let value = arguments.keyword(3) else { return [.reply(.missingParameter)] }
            guard let mode = SSIPSettings.CapitalLetters(rawValue: value) else { return [.reply(.invalidParameter)] }
            return set(.capitalLetters(mode), for: target)
        case "output_module":
            if inBlock { return [.reply(.notAllowedInsideBlock)] }
            guard let module = arguments.keyword(3) else { return [.reply(.missingParameter)] }
            // Accepted whatever it names: a11yd is its own, only, module.
            return set(.outputModule(module), for: target)
        case "spelling":
            if inBlock { return [.reply(.notAllowedInsideBlock)] }
            return switch Self.onOff(arguments) {
            case .failure(let error): [.reply(error.reply)]
            case .success(let on): set(.spelling(on), for: target)
            }
        case "ssml_mode":
            return switch Self.onOff(arguments) {
            case .failure(let error): [.reply(error.reply)]
            case .success(let on): set(.ssmlMode(on), for: target)
            }
        case "debug", "history":
            // A11yd keeps no message history and no debug directory; accepted, as the manual asks.
            return switch Self.onOff(arguments) {
            case .failure(let error): [.reply(error.reply)]
            case .success: [.reply(.notImplementedButOK)]
            }
        default:
            return [.reply(.invalidCommand)]
        }
    }

    /// Argument 3 as `on` or `off`, or speech-dispatcher's reply for why not.
    private static func onOff(_ arguments: SSIPArguments) -> Result<Bool, ReplyError> {
        guard let value = arguments.keyword(3) else { return .failure(ReplyError(.missingParameter)) }
        guard let on = onOff(value) else { return .failure(ReplyError(.notOnOrOff)) }
        return .success(on)
    }

    /// A SET applied here, and handed on when it is for others too.
    private mutating func set(_ change: SSIPSettingChange, for target: Target) -> [Action] {
        switch target {
        case .this:
            change.apply(to: &settings)
            return [.reply(change.replies.success)]
        case .client(let other) where other == client:
            change.apply(to: &settings)
            return [.reply(change.replies.success)]
        case .all:
            change.apply(to: &settings)
            return [.changeOthers(change, .all)]
        case .client(let other):
            return [.changeOthers(change, .client(other))]
        }
    }

    /// A change another connection made for this one (`SET all …`, `SET <our id> …`).
    public mutating func apply(_ change: SSIPSettingChange) {
        change.apply(to: &settings)
    }

    // MARK: Controls, blocks, lists

    private func control(_ control: Control, _ arguments: SSIPArguments, reply: SSIPReply) -> [Action] {
        guard let who = arguments.raw(1) else { return [.reply(.missingParameter)] }
        guard let target = Self.target(who) else { return [.reply(.invalidParameter)] }
        switch target {
        case .this: return [.control(control, .client(client), reply: reply)]
        case .all: return [.control(control, .all, reply: reply)]
        case .client(let id) where id.rawValue == 0: return [.reply(.idDoesNotExist)]
        case .client(let id): return [.control(control, .client(id), reply: reply)]
        }
    }

    private mutating func block(_ arguments: SSIPArguments) -> [Action] {
        guard let what = arguments.keyword(1) else { return [.reply(.missingParameter)] }
        switch what {
        case "begin":
            guard !inBlock else { return [.reply(.alreadyInsideBlock)] }
            inBlock = true
            blockHasMessage = false
            return [.reply(.insideBlock)]
        case "end":
            guard inBlock else { return [.reply(.alreadyOutsideBlock)] }
            inBlock = false
            return [.reply(.outsideBlock)]
        default:
            return [.reply(.invalidParameter)]
        }
    }

    private func list(_ arguments: SSIPArguments) -> [Action] {
        guard let what = arguments.keyword(1) else { return [.reply(.missingParameter)] }
        switch what {
        case "voices":
            return [.reply(SSIPReply.voiceList.with(lines: SSIPSettings.voiceTypes))]
        case "output_modules":
            return [.reply(SSIPReply.moduleList.with(lines: [SSIPSettings.moduleName]))]
        case "synthesis_voices":
            return [.listSynthesisVoices(language: arguments.raw(2), variant: arguments.raw(3))]
        default:
            return [.reply(.invalidParameter)]
        }
    }

    private func get(_ arguments: SSIPArguments) -> [Action] {
        guard let what = arguments.keyword(1) else { return [.reply(.missingParameter)] }
        let value: String
        switch what {
        case "voice_type": value = settings.voiceType
        case "output_module": value = settings.outputModule
        case "language": value = settings.language ?? defaultLanguage
        case "rate": value = String(settings.rate)
        case "pitch": value = String(settings.pitch)
        case "volume": value = String(settings.volume)
        case "punctuation": value = settings.punctuation.rawValue
        default: return [.reply(.invalidParameter)]
        }
        return [.reply(SSIPReply.got.with(lines: [value]))]
    }

    private func history(_ arguments: SSIPArguments) -> [Action] {
        guard let what = arguments.keyword(1) else { return [.reply(.missingParameter)] }
        switch what {
        case "get":
            guard let item = arguments.keyword(2) else { return [.reply(.missingParameter)] }
            switch item {
            case "client_id":
                return [.reply(SSIPReply.clientID.with(lines: [String(client.rawValue)]))]
            case "last":
                guard let lastMessage else { return [.reply(.noMessage)] }
                return [.reply(SSIPReply.lastMessage.with(lines: [String(lastMessage.rawValue)]))]
            case "client_list", "client_messages", "message":
                return [.reply(.notImplemented)]
            default:
                return [.reply(.missingParameter)]
            }
        case "cursor", "say", "sort", "set", "search":
            // A11yd keeps no message history (as speech-dispatcher today, mostly).
            return [.reply(.notImplemented)]
        default:
            return [.reply(.invalidCommand)]
        }
    }

    // MARK: - Argument helpers

    private static func target(_ word: String) -> Target? {
        switch word.lowercased() {
        case "self": return .this
        case "all": return .all
        default:
            // Zero and negative ids are numbers that name no client.
            guard let number = SSIPArguments.integer(word) else { return nil }
            return .client(ClientID(rawValue: number > 0 ? UInt64(number) : 0))
        }
    }

    private static func onOff(_ word: String) -> Bool? {
        switch word {
        case "on": true
        case "off": false
        default: nil
        }
    }

    /// Argument 3 as an integer in -100...100, or speech-dispatcher's reply for why not.
    private static func integer(_ arguments: SSIPArguments, low: SSIPReply, high: SSIPReply) -> Result<Int, ReplyError> {
        guard let text = arguments.raw(3) else { return .failure(ReplyError(.missingParameter)) }
        guard let value = SSIPArguments.integer(text) else { return .failure(ReplyError(.notANumber)) }
        if value < -100 { return .failure(ReplyError(low)) }
        if value > 100 { return .failure(ReplyError(high)) }
        return .success(value)
    }

    /// A reply carried as a `Result` failure.
    private struct ReplyError: Error {
        let reply: SSIPReply
        init(_ reply: SSIPReply) { self.reply = reply }
    }
}

private extension String {
    var replacingUnderscoresAndDashes: String {
        String(map { $0 == "_" || $0 == "-" ? " " : $0 })
    }
}
