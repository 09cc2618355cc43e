// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

// LIST, GET and HISTORY: what a client asks to know.
extension SSIPSession {
    // MARK: LIST SYNTHESIS_VOICES, answered

    /// Answers `LIST SYNTHESIS_VOICES [language [variant]]` as speech-dispatcher 0.12 does: one
    /// `name<TAB>language<TAB>variant` line per voice its filter keeps (`SSIPVoiceFilter`).
    public func listed(_ voices: [VoiceInfo], language: String?, variant: String?) -> [Action] {
        let filter = SSIPVoiceFilter(language: language, variant: variant)
        let lines = voicesOfOutputModule(voices).compactMap { voice -> String? in
            // A voice is listed by its preferred language, as speech-dispatcher's espeak-ng module lists
            // eSpeak's, and without a variant: a11yd offers none.
            let tag = voice.languages.first ?? voice.identifier
            guard filter.admits(language: tag, variant: SSIPVoiceFilter.noVariant) else { return nil }
            return "\(Self.listedName(of: voice))\t\(tag)\t\(SSIPVoiceFilter.noVariant)"
        }
        // Nothing kept is still a list: speech-dispatcher's module says `304 CANT LIST VOICES`, but its
        // server reads that as the end of an empty list (`output_get_voices`) and answers `249` alone.
        return [.reply(SSIPReply.voiceList.with(lines: lines))]
    }

    /// Answers `LIST OUTPUT_MODULES`: every engine with a voice that can speak, eSpeak first.
    public func listedModules(_ voices: [VoiceInfo]) -> [Action] {
        let speaking = Set(voices.filter { $0.problem == nil }.map(\.engine))
        let modules = SpeechEngineName.allCases.map(\.rawValue).filter { $0 == SSIPSettings.moduleName || speaking.contains($0) }
        return [.reply(SSIPReply.moduleList.with(lines: modules))]
    }

    /// The voices of this connection's output module (`SET self OUTPUT_MODULE piper`); a module
    /// a11yd does not have lists eSpeak's, which speak for it.
    func voicesOfOutputModule(_ voices: [VoiceInfo]) -> [VoiceInfo] {
        let module = SpeechEngineName(rawValue: settings.outputModule.lowercased()) ?? .espeak
        return voices.filter { $0.engine == module.rawValue && $0.problem == nil }
    }

    /// How `LIST SYNTHESIS_VOICES` names a voice: eSpeak's by their name ("French (France)"), as
    /// speech-dispatcher's espeak-ng module does; Piper's by file name ("en_US-joe-medium"), as its
    /// piper module does.
    static func listedName(of voice: VoiceInfo) -> String {
        SpeechEngineName(voice: voice.identifier) == .piper
            ? String(voice.identifier.dropFirst(SpeechEngineName.piperPrefix.count)) : voice.name
    }

    // MARK: LIST, GET, HISTORY

    func list(_ arguments: SSIPArguments) -> [Action] {
        guard let what = arguments.keyword(1) else { return [.reply(.missingParameter)] }
        switch what {
        case "voices":
            return [.reply(SSIPReply.voiceList.with(lines: SSIPSettings.voiceTypes))]
        case "output_modules":
            return [.listOutputModules]
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
