// SPDX-License-Identifier: GPL-3.0-or-later
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
        /// Apply the control through the speech API, then write `reply`; nil: the line's reply came
        /// before it (STOP and CANCEL: see `control(_:_:reply:)`).
        case control(Control, ControlScope, reply: SSIPReply?)
        /// Hand the change to other connections (`.all`: every other one), then call
        /// `changedOthers(_:found:)`.
        case changeOthers(SSIPSettingChange, ControlScope)
        /// Find the language of the voice `LIST SYNTHESIS_VOICES` calls `name`, then call
        /// `synthesisVoiceFound(name:language:target:)`.
        case findSynthesisVoice(name: String, target: Target)
        /// List the voices, then call `listed(_:language:variant:)`.
        case listSynthesisVoices(language: String?, variant: String?)
        /// List the voices, then call `listedModules(_:)`.
        case listOutputModules
        /// Write everything before, then close the connection.
        case close
    }

    /// Whom a SET is for.
    public enum Target: Sendable, Hashable {
        case this
        case all
        case client(ClientID)
    }

    enum Mode: Sendable {
        case commands
        /// Between `230 OK RECEIVING DATA` and the line holding `.`.
        case receiving(MessageBody)
        /// Waiting for the front end to say how a `.speak` went.
        case speaking(SpeechRequest)
        case closed
    }

    /// A SPEAK body as it arrives.
    struct MessageBody: Sendable {
        var bytes: [UInt8] = []
        /// The last piece ended in a bare LF: the next one continues the same SSIP line.
        var continuesLine = false
        var tooLong = false
    }

    public let client: ClientID
    public internal(set) var settings = SSIPSettings()
    public let limits: Limits
    /// What `GET LANGUAGE` says before the client sets one.
    public let defaultLanguage: String
    var mode = Mode.commands
    var inBlock = false
    var blockHasMessage = false
    var lastMessage: UtteranceID?

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

    /// `SET … SYNTHESIS_VOICE name`, answered from every voice a11yd has: the voice of this
    /// connection's output module that `LIST SYNTHESIS_VOICES` names so, else any voice of that name
    /// (an unknown name keeps only the name, as speech-dispatcher does).
    public mutating func synthesisVoiceFound(name: String, among voices: [VoiceInfo], target: Target) -> [Action] {
        let named = { (voice: VoiceInfo) in Self.listedName(of: voice) == name || voice.identifier == name }
        let voice = voicesOfOutputModule(voices).first(where: named) ?? voices.first(where: named)
        let identifier = voice.flatMap { SpeechEngineName(voice: $0.identifier) == .piper ? $0.identifier : nil }
        return set(.synthesisVoice(name: name, language: voice?.languages.first ?? voice?.identifier, identifier: identifier), for: target)
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

    // MARK: Controls, blocks

    /// STOP and CANCEL are answered before they take effect, as speech-dispatcher answers them: the
    /// reply leads the line's actions, so it is written on the event loop at once (Orca sends its
    /// SETs and SPEAK on that reply, while the stop is carried out), and the client's next line waits
    /// for the stop all the same, and so do the events it ends (held until the line is answered).
    /// PAUSE and RESUME are answered once in force.
    private func control(_ control: Control, _ arguments: SSIPArguments, reply: SSIPReply) -> [Action] {
        guard let who = arguments.raw(1) else { return [.reply(.missingParameter)] }
        guard let target = Self.target(who) else { return [.reply(.invalidParameter)] }
        let scope: ControlScope
        switch target {
        case .this: scope = .client(client)
        case .all: scope = .all
        case .client(let id) where id.rawValue == 0: return [.reply(.idDoesNotExist)]
        case .client(let id): scope = .client(id)
        }
        switch control {
        case .stop, .cancel: return [.reply(reply), .control(control, scope, reply: nil)]
        case .pause, .resume: return [.control(control, scope, reply: reply)]
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

    // MARK: - Argument helpers

    static func target(_ word: String) -> Target? {
        switch word.lowercased() {
        case "self": return .this
        case "all": return .all
        default:
            // Zero and negative ids are numbers that name no client.
            guard let number = SSIPArguments.integer(word) else { return nil }
            return .client(ClientID(rawValue: number > 0 ? UInt64(number) : 0))
        }
    }

    static func onOff(_ word: String) -> Bool? {
        switch word {
        case "on": true
        case "off": false
        default: nil
        }
    }

}
