import A11yCore

// LIST, GET and HISTORY: what a client asks to know.
extension SSIPSession {
    // MARK: LIST SYNTHESIS_VOICES, answered

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

    // MARK: LIST, GET, HISTORY

    func list(_ arguments: SSIPArguments) -> [Action] {
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

    func get(_ arguments: SSIPArguments) -> [Action] {
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

    func history(_ arguments: SSIPArguments) -> [Action] {
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
}
