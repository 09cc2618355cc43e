// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

extension Pronouncer {
    /// Refuses an entry that could never be said: a language no voice speaks (`unknown_voice`),
    /// IPA the entry's voice cannot say (`invalid_ipa`; entries for every voice are checked with
    /// `defaultVoice`), an empty grapheme or alias (`invalid_request`).
    public func check(_ entry: LexiconEntry, defaultVoice: String) async throws {
        guard !entry.graphemes.isEmpty, entry.graphemes.allSatisfy({ LexiconPattern($0, entry: 0, caseSensitive: false) != nil }) else {
            throw SpeechError(.invalidRequest, "a lexicon entry needs a non-empty grapheme")
        }
        let voice = try await entry.language.asyncMap { try await engine.resolveVoice(language: $0) } ?? defaultVoice
        switch entry.pronunciation {
        case .alias(let alias):
            guard !alias.trimmed.isEmpty else { throw SpeechError(.invalidRequest, "a lexicon alias may not be empty") }
        case .ipa(let ipa):
            do {
                _ = try await mnemonics(forIPA: ipa, voice: voice)
            } catch let error as SpeechError where error.code == .invalidIPA {
                throw SpeechError(.invalidIPA, "lexicon entry '\(entry.graphemes[0])': \(error.message)")
            }
        }
    }

    /// `plan` with the lexicon's words replaced: each `.text` segment that is not spelled out is
    /// cut around its matches, a match becoming a `.phonemes` segment (IPA) or a `.text` segment
    /// speaking the alias, both standing for the grapheme's range of `plan.spokenText`. Matches
    /// overlapping `explicit` ranges (SSML `sub`, `say-as`) are left alone, as are `.phonemes`
    /// and spelled segments: what a client states wins. An entry whose IPA the voice cannot say is
    /// skipped (the word is read as written): a lexicon never makes an utterance fail.
    func applying(_ lexicon: Lexicon, to plan: SpeechPlan, explicit: [Range<Int>] = []) async -> SpeechPlan {
        guard !lexicon.isEmpty else { return plan }
        let text = LexiconText(plan.spokenText)
        var takenByVoice: [String: Set<String>] = [:]
        return await plan.cuttingText(text.scalars) { segment, range in
            if takenByVoice[segment.voice] == nil {
                takenByVoice[segment.voice] = await languages(of: lexicon, applyingTo: segment.voice)
            }
            let languages = takenByVoice[segment.voice]!
            let matches = lexicon.matches(in: text, within: range) { entry in
                entry.language.map(languages.contains) ?? true
            }.filter { match in !explicit.contains { $0.overlaps(match.range) } }
            return await split(segment, at: matches, in: text)
        }
    }

    /// The pieces of `segment`: text between matches, each match as its pronunciation. The first
    /// piece keeps the segment's pause and mark; whitespace-only pieces between matches are dropped.
    private func split(_ segment: SpeechSegment, at matches: [LexiconMatch], in text: LexiconText) async -> [SpeechSegment] {
        var pieces: [SpeechSegment] = []
        var cursor = segment.sourceStart
        let end = segment.sourceStart + segment.sourceLength
        func add(_ content: SpeechSegment.Content, _ range: Range<Int>) {
            pieces.append(segment.piece(content, range, first: pieces.isEmpty))
        }
        func addText(upTo limit: Int) {
            guard limit > cursor else { return }
            let piece = String(String.UnicodeScalarView(text.scalars[cursor..<limit]))
            // Spaces between two replaced words say nothing; the first piece keeps any pause or mark.
            if piece.trimmed.isEmpty, !pieces.isEmpty { return }
            add(.text(piece), cursor..<limit)
        }
        for match in matches {
            let content: SpeechSegment.Content
            switch match.entry.pronunciation {
            case .alias(let alias):
                content = .text(alias)
            case .ipa(let ipa):
                guard let mnemonics = try? await mnemonics(forIPA: ipa, voice: segment.voice) else { continue }
                content = .phonemes(mnemonics)
            }
            addText(upTo: match.range.lowerBound)
            add(content, match.range)
            cursor = match.range.upperBound
        }
        addText(upTo: end)
        return pieces.isEmpty ? [segment] : pieces
    }

    /// The entry languages that apply to `voice`: "fr" applies to voices fr and fr-*, and any
    /// language applies to the voice it resolves to ("en-gb" to eSpeak's "en").
    private func languages(of lexicon: Lexicon, applyingTo voice: String) async -> Set<String> {
        let voice = voice.lowercased()
        var result: Set<String> = []
        for language in lexicon.languages {
            if voice == language || voice.hasPrefix(language + "-") {
                result.insert(language)
            } else if let resolved = try? await engine.resolveVoice(language: language), resolved.lowercased() == voice {
                result.insert(language)
            }
        }
        return result
    }
}
