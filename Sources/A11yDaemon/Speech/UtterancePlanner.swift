// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yLanguageDetection
import A11yPronunciation
import Logging
import Synchronization

/// Turns what a client asked for into what the engine will say: the voice, the element's
/// sentence, spans and SSML (through the pronouncer), and the configured voice settings.
/// The same path serves speaking, `pronounce` and `render`.
final class UtterancePlanner: Sendable {
    let engine: any SpeechEngine
    let pronouncer: Pronouncer
    /// The user's pronunciations, applied to every utterance.
    let lexicon: LexiconStore
    let configuration: Mutex<DaemonConfiguration>
    let environment: [String: String]
    let logger: Logger
    /// The detector for the configured `detect_languages`, made again when a reload changes them.
    private let detector = Mutex<(languages: [String], detector: LanguageDetector?)>(([], nil))

    init(
        engine: any SpeechEngine, pronouncer: Pronouncer, lexicon: LexiconStore, configuration: DaemonConfiguration,
        environment: [String: String], logger: Logger
    ) {
        self.engine = engine
        self.pronouncer = pronouncer
        self.lexicon = lexicon
        self.configuration = Mutex(configuration)
        self.environment = environment
        self.logger = logger
    }

    /// The voice to use when a request names no language: config, else the locale, else English.
    func defaultLanguage() -> String {
        if let language = configuration.withLock({ $0.voice.language }) { return language }
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[key], !value.isEmpty { return value }
        }
        return "en"
    }

    /// The voice for `language`. When that is the default language (no language asked for), a
    /// locale eSpeak does not know must not silence the daemon: English then.
    func voice(speaking language: String, isDefault: Bool) async throws -> String {
        do {
            return try await engine.resolveVoice(language: language)
        } catch let error as SpeechError where isDefault {
            logger.warning("no voice for the default language; using English", metadata: ["language": "\(language)", "error": "\(error.message)"])
            return try await engine.resolveVoice(language: "en")
        }
    }

    /// A voice asked for by identifier, if a11yd has it and it can speak; else `unknown_voice`
    /// with the reason (an unknown name, or a Piper voice whose model or runtime is missing).
    func voice(named identifier: String) async throws(SpeechError) -> String {
        guard let voice = await engine.voices().first(where: { $0.identifier == identifier }) else {
            throw SpeechError(.unknownVoice, "no voice '\(identifier)'; run a11ysay --list-voices")
        }
        if let problem = voice.problem {
            throw SpeechError(.unknownVoice, "voice '\(identifier)' cannot speak: \(problem)")
        }
        return voice.identifier
    }

    /// The voice for requests that name no language.
    func defaultVoice() async throws -> String {
        try await voice(speaking: defaultLanguage(), isDefault: true)
    }

    /// How sentences find their language in a text posted in `own`; nil when `detect_languages`
    /// is empty.
    func languageSwitch(own: String) -> LanguageSwitch? {
        let languages = configuration.withLock { $0.detectLanguages }
        guard !languages.isEmpty else { return nil }
        let (detector, missing) = self.detector.withLock { current -> (LanguageDetector, [String]) in
            if current.languages == languages, let detector = current.detector { return (detector, []) }
            let detector = LanguageDetector(languages: languages)
            current = (languages, detector)
            return (detector, detector.missing)
        }
        if !missing.isEmpty {
            logger.error(
                "detect_languages names languages a11yd has no fingerprint for; they are never chosen",
                metadata: ["languages": "\(missing.joined(separator: ", "))", "folder": "\(LanguageDetector.fingerprintFolder)"])
        }
        return LanguageSwitch(detector: detector, decision: LanguageDecision(listed: languages), own: own)
    }

    /// The utterance: the text clients will see in events, the segments and settings the engine gets.
    /// Throws `SpeechError` (`unknown_voice`, `invalid_ipa`, `invalid_ssml`, `invalid_request`).
    func plan(_ request: SpeechRequest) async throws -> Utterance {
        let language = request.language ?? defaultLanguage()
        let voice: String
        if let named = request.voice {
            voice = try await self.voice(named: named)
        } else {
            voice = try await self.voice(speaking: language, isDefault: request.language == nil)
        }
        let lexicon = self.lexicon.lexicon
        let languages = languageSwitch(own: language)
        let settings = SpeechSettings(
            voice: configuration.withLock { $0.voice }, rate: request.rate, pitch: request.pitch, volume: request.volume)
        func utterance(_ text: String, _ segments: [SpeechSegment]) -> Utterance {
            Utterance(text: text, segments: segments, rate: settings.rate, pitch: settings.pitch, volume: settings.volume)
        }
        switch request.content {
        case .ssml(let ssml):
            // Translated by us into segments; never handed to eSpeak as markup.
            let plan = try await pronouncer.plan(ssml: ssml, defaultVoice: voice, lexicon: lexicon, languages: languages)
            return utterance(plan.spokenText, plan.segments)
        case .element(let element):
            let text = element.utterance(language: language)
            if text.isEmpty { throw SpeechError(.invalidRequest, "'element' has nothing to say (no label, value, traits or hint)") }
            return utterance(text, try await pronouncer.plan(text: text, defaultVoice: voice, lexicon: lexicon, languages: languages).segments)
        case .text(let text, let spans):
            return utterance(text, try await pronouncer.plan(text: text, spans: spans, defaultVoice: voice, lexicon: lexicon, languages: languages).segments)
        }
    }
}
