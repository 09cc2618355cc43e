// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

extension Pronouncer {
    /// Plans an SSML document (the `ssml` field of `post`, `a11ysay --ssml`): parsed by
    /// `SSMLParser` (the safe subset; nothing is passed to eSpeak as markup), then translated into
    /// segments in document order with resolved voices and reading options.
    ///
    /// `spokenText` is the document's text as spoken: tags removed, whitespace collapsed, `sub`
    /// aliases and telephone readings in place of what they replace; segments' `sourceStart` and
    /// `sourceLength` (Unicode scalars) point into it, so word events do too. Each `<mark>` is the
    /// `markBefore` of the segment that follows it (an empty `.text("")` segment when no speech
    /// follows) and is listed in `marks`.
    /// - Parameter defaultVoice: an eSpeak voice name, used unless `xml:lang` says otherwise.
    /// - Throws: `invalid_ssml` (malformed or refused input, message naming line and column),
    ///   `unknown_voice` (a language no voice speaks), `invalid_ipa` (a `ph` the voice cannot say).
    /// The user's `lexicon` applies to the document's text, not to `phoneme`, `sub` or `say-as`.
    /// With `languages`, each sentence of text no `xml:lang` (below `<speak>`) or `<voice>` names is
    /// said in its own language when it is clearly in another listed one (`switchingLanguages`).
    public func plan(
        ssml: String, defaultVoice: String, lexicon: Lexicon = .empty, languages: LanguageSwitch? = nil
    ) async throws -> SpeechPlan {
        let root = try SSMLParser.parse(ssml)
        var builder = SSMLPlanBuilder()
        let style = SSMLStyle(voice: defaultVoice)
        try await translate(root, style: style, into: &builder)
        let plan = builder.finish(voice: style.voice)
        let switched = await switchingLanguages(plan, marked: builder.explicitRanges + builder.languageRanges, languages)
        return await applying(lexicon, to: switched, explicit: builder.explicitRanges)
    }

    private func translate(_ element: MarkupElement, style inherited: SSMLStyle, into builder: inout SSMLPlanBuilder) async throws {
        var style = inherited
        let attributes = element.attributes

        // Language first: every element that carries one switches the voice for its content.
        if let language = attributes["xml:lang"] ?? (element.name == "voice" ? voiceLanguage(attributes) : nil) {
            style.voice = try await voice(for: language, element)
            // The document's own language (`<speak xml:lang>`) is the text's; below it, stated.
            if element.name != "speak" { style.languageStated = true }
        }

        switch element.name {
        case "speak", "lang", "voice", "emphasis":
            // `emphasis` is read as plain text: eSpeak has no per-word emphasis we can drive here.
            if element.name == "lang", attributes["xml:lang"] == nil {
                throw SpeechError(.invalidSSML, "\(element.location) needs xml:lang")
            }
            if element.name == "emphasis", let level = attributes["level"],
               !["strong", "moderate", "none", "reduced"].contains(level) {
                throw SpeechError(.invalidSSML, "\(element.location) level '\(level)' is not strong, moderate, none or reduced")
            }
            try await children(element, style, &builder)

        case "p", "s", "paragraph", "sentence":
            builder.boundary()
            try await children(element, style, &builder)
            builder.boundary()

        case "prosody":
            for property in [SSMLValues.Property.rate, .pitch, .volume] {
                guard let value = attributes[property.rawValue] else { continue }
                let scale = try SSMLValues.prosodyScale(value, property, element)
                switch property {
                case .rate: style.rateScale = SSMLValues.clamp(style.rateScale * scale, .rate)
                case .pitch: style.pitchScale = SSMLValues.clamp(style.pitchScale * scale, .pitch)
                case .volume: style.volumeScale = SSMLValues.clamp(style.volumeScale * scale, .volume)
                }
            }
            try await children(element, style, &builder)

        case "break":
            builder.addBreak(milliseconds: try SSMLValues.breakMilliseconds(element), voice: style.voice)

        case "mark":
            guard let name = attributes["name"], !name.trimmed.isEmpty else {
                throw SpeechError(.invalidSSML, "\(element.location) needs a non-empty name")
            }
            builder.addMark(name, voice: style.voice)

        case "sub":
            guard let alias = attributes["alias"] else {
                throw SpeechError(.invalidSSML, "\(element.location) needs alias")
            }
            builder.addText(alias, style: style, explicit: true)

        case "say-as":
            let content = element.textContent
            switch attributes["interpret-as"]?.trimmed {
            case "characters", "spell-out", "letters":
                style.spellOut = true
                builder.addText(content, style: style, explicit: true)
            case "telephone":
                let language = LanguageTag.base(style.voice)
                builder.addText(SSMLTelephone.reading(content, language: language), style: style, explicit: true)
            case "cardinal", "number":
                // eSpeak reads numerals as numbers already.
                builder.addText(content, style: style, explicit: true)
            case nil:
                throw SpeechError(.invalidSSML, "\(element.location) needs interpret-as")
            case let other?:
                throw SpeechError(
                    .invalidSSML,
                    "\(element.location) interpret-as '\(other)' is not supported (characters, spell-out, telephone, cardinal, number)")
            }

        case "phoneme":
            let alphabet = attributes["alphabet"]?.trimmed ?? "ipa"
            guard alphabet == "ipa" else {
                throw SpeechError(.invalidSSML, "\(element.location) alphabet '\(alphabet)' is not supported: only ipa")
            }
            guard let ph = attributes["ph"], !ph.trimmed.isEmpty else {
                throw SpeechError(.invalidSSML, "\(element.location) needs a non-empty ph")
            }
            let mnemonics: String
            do {
                mnemonics = try await self.mnemonics(forIPA: ph, voice: style.voice)
            } catch let error as SpeechError where error.code == .invalidIPA {
                throw SpeechError(.invalidIPA, "\(element.location) ph: \(error.message)")
            }
            builder.addPhonemes(mnemonics, display: element.textContent, style: style)

        default:
            // The parser admits only the elements handled above.
            throw SpeechError(.invalidSSML, "\(element.location) is not supported")
        }
    }

    private func children(_ element: MarkupElement, _ style: SSMLStyle, _ builder: inout SSMLPlanBuilder) async throws {
        for child in element.children {
            switch child {
            case .text(let text): builder.addText(text, style: style)
            case .element(let child): try await translate(child, style: style, into: &builder)
            }
        }
    }

    /// `<voice>`: `language`/`languages` (first listed), else `name` read as a language or eSpeak
    /// voice name ("en-us", "fr"). Gender, age and variant are accepted and ignored.
    private func voiceLanguage(_ attributes: [String: String]) -> String? {
        if let language = attributes["language"] ?? attributes["languages"] {
            return language.split(whereSeparator: { $0 == " " || $0 == "," }).first.map(String.init) ?? language
        }
        return attributes["name"]
    }

    private func voice(for language: String, _ element: MarkupElement) async throws -> String {
        guard !language.trimmed.isEmpty else {
            throw SpeechError(.invalidSSML, "\(element.location) has an empty language")
        }
        do {
            return try await engine.resolveVoice(language: language)
        } catch let error as SpeechError where error.code == .unknownVoice {
            throw SpeechError(.unknownVoice, "\(element.location): \(error.message)")
        }
    }
}
