// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

// SET: the connection's settings, and those of others.
extension SSIPSession {
    // MARK: SET

    mutating func set(_ arguments: SSIPArguments) -> [Action] {
        guard let who = arguments.raw(1) else { return [.reply(.missingParameter)] }
        guard let target = Self.target(who) else { return [.reply(.invalidParameter)] }
        guard let setting = arguments.keyword(2) else { return [.reply(.missingParameter)] }
        switch setting {
        case "priority":
            if inBlock { return [.reply(.notAllowedInsideBlock)] }
            guard target == .this else { return [.reply(.couldNotSetPriority)] }
            guard let value = arguments.keyword(3) else { return [.reply(.missingParameter)] }
            guard let priority = MessagePriority(ssipName: value) else { return [.reply(.unknownPriority)] }
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
    mutating func set(_ change: SSIPSettingChange, for target: Target) -> [Action] {
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
