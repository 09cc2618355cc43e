// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

extension Pronouncer {
    /// Turns a `post`'s text and spans into segments for `defaultVoice` (an eSpeak voice name).
    /// Text outside spans is one `.text` segment per gap, spoken literally. Offsets stay those
    /// of `text`, so word events point into what the client sent.
    /// The user's `lexicon` applies to the gaps and to spans that only set `lang` or
    /// `punctuation`; IPA and spelled spans are the client's word and stay as they are.
    /// - Throws: `invalid_request` (bad spans), `unknown_voice` (a `lang` no voice speaks),
    ///   `invalid_ipa` (a symbol the span's voice cannot say; the message names the span).
    /// With `languages`, each sentence outside the spans is said in its own language when it is
    /// clearly in another listed one (`switchingLanguages`); a span is the client's and is left alone.
    public func plan(
        text: String, spans: [SpeechSpan] = [], defaultVoice: String, lexicon: Lexicon = .empty,
        languages: LanguageSwitch? = nil
    ) async throws -> SpeechPlan {
        let scalars = Array(text.unicodeScalars)
        let sorted = try SpeechSpan.validate(spans, textLength: scalars.count)
        func slice(_ start: Int, _ length: Int) -> String {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[start..<start + length])
            return String(view)
        }
        var segments: [SpeechSegment] = []
        var cursor = 0
        func addGap(upTo end: Int) {
            if end > cursor {
                segments.append(SpeechSegment(
                    content: .text(slice(cursor, end - cursor)), voice: defaultVoice,
                    sourceStart: cursor, sourceLength: end - cursor))
            }
        }
        for span in sorted {
            addGap(upTo: span.start)
            let voice = try await span.lang.asyncMap { try await engine.resolveVoice(language: $0) } ?? defaultVoice
            let content: SpeechSegment.Content
            if let ipa = span.ipa {
                do {
                    content = .phonemes(try await mnemonics(forIPA: ipa, voice: voice))
                } catch let error as SpeechError where error.code == .invalidIPA {
                    throw SpeechError(.invalidIPA, "span at \(span.start): \(error.message)")
                }
            } else {
                content = .text(slice(span.start, span.length))
            }
            segments.append(SpeechSegment(
                content: content, voice: voice, sourceStart: span.start, sourceLength: span.length,
                options: .init(spellOut: span.spellOut ?? false, punctuation: span.punctuation ?? false)))
            cursor = span.start + span.length
        }
        addGap(upTo: scalars.count)
        let switched = await switchingLanguages(
            SpeechPlan(segments: segments, spokenText: text), marked: sorted.map { $0.start..<$0.start + $0.length }, languages)
        return await applying(lexicon, to: switched)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        switch self {
        case .some(let value): return try await transform(value)
        case .none: return nil
        }
    }
}
