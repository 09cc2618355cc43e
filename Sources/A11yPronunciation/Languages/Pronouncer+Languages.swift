// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// What finding each sentence's language needs: the detector, the user's languages and the
/// language the text was posted in (`own`: a request's `lang`, SSIP's `SET LANGUAGE`, else the
/// default language).
public struct LanguageSwitch: Sendable {
    public var detector: any LanguageDetecting
    public var decision: LanguageDecision
    public var own: String
    /// The most bytes of one utterance the detector reads (about five pages): past them, the rest
    /// of a very long text keeps its own language, so that planning stays bounded in time (the
    /// detectors take about 45 µs a sentence).
    public static let maximumDetectedBytes = 32 * 1024

    public init(detector: any LanguageDetecting, decision: LanguageDecision, own: String) {
        self.detector = detector
        self.decision = decision
        self.own = own
    }
}

extension Pronouncer {
    /// `plan` with each sentence of its unmarked text said in its own language: the `.text`
    /// segments not spelled out and outside `marked` (spans, SSML `<lang>`/`<voice>`, `sub`,
    /// `say-as`: what the client stated wins) are read as runs, consecutive segments of one voice
    /// taken together (Orca's SSML puts a mark before every word: each word is a segment, and a
    /// sentence is many); a run is cut into sentences, long sentences into clauses, and a piece
    /// `languages.decision` places in another listed language is said by that language's voice
    /// (`resolveVoice`: its `[voices]` entry, else eSpeak's), each segment cut where its run's
    /// pieces change language. Adjacent pieces in one language stay one segment, so a text all in
    /// its own language is planned exactly as before. Offsets stay the client's; the first piece
    /// of a segment keeps its pause and mark.
    func switchingLanguages(_ plan: SpeechPlan, marked: [Range<Int>], _ languages: LanguageSwitch?) async -> SpeechPlan {
        guard let languages, !languages.decision.listed.isEmpty else { return plan }
        let scalars = Array(plan.spokenText.unicodeScalars)
        // The runs: the ranges of consecutive eligible segments of one voice, each in order.
        var runs: [(range: Range<Int>, voice: String)] = []
        var previousEligible = false
        for segment in plan.segments {
            guard let range = SpeechPlan.textRange(of: segment, in: scalars), !marked.contains(where: { $0.overlaps(range) }) else {
                previousEligible = false
                continue
            }
            if previousEligible, let last = runs.last, last.voice == segment.voice, last.range.upperBound <= range.lowerBound {
                runs[runs.count - 1].range = last.range.lowerBound..<range.upperBound
            } else {
                runs.append((range, segment.voice))
            }
            previousEligible = true
        }
        var budget = LanguageSwitch.maximumDetectedBytes
        var pieces: [(range: Range<Int>, language: String?)] = []
        for run in runs {
            let found = Self.languagePieces(scalars, in: run.range, languages, budget: &budget)
            if found.contains(where: { $0.language != nil }) { pieces += found }
        }
        guard !pieces.isEmpty else { return plan }
        var voices: [String: String?] = [:]
        return await plan.cuttingText(scalars) { segment, range in
            guard !marked.contains(where: { $0.overlaps(range) }) else { return nil }
            let overlapping = pieces.filter { $0.range.overlaps(range) }
            guard overlapping.contains(where: { $0.language != nil }) else { return nil }
            var cut: [SpeechSegment] = []
            for piece in overlapping {
                let part = max(piece.range.lowerBound, range.lowerBound)..<min(piece.range.upperBound, range.upperBound)
                var voice = segment.voice
                if let language = piece.language {
                    if voices[language] == nil {
                        voices[language] = .some(try? await engine.resolveVoice(language: language))
                    }
                    voice = voices[language]!! ?? segment.voice
                }
                var text = String.UnicodeScalarView()
                text.append(contentsOf: scalars[part])
                cut.append(segment.piece(.text(String(text)), part, voice: voice, first: cut.isEmpty))
            }
            return cut
        }
    }

    /// `range` of `scalars` as consecutive pieces, each with the listed language it is said in (nil:
    /// the text's own), adjacent pieces of one language joined.
    static func languagePieces(
        _ scalars: [Unicode.Scalar], in range: Range<Int>, _ languages: LanguageSwitch, budget: inout Int
    ) -> [(range: Range<Int>, language: String?)] {
        var pieces: [(range: Range<Int>, language: String?)] = []
        func add(_ range: Range<Int>, _ language: String?) {
            if let last = pieces.last, last.language == language, last.range.upperBound == range.lowerBound {
                pieces[pieces.count - 1].range = last.range.lowerBound..<range.upperBound
            } else {
                pieces.append((range, language))
            }
        }
        let ownBase = LanguageTag.base(languages.own)
        let sentences = SentenceSplitter.sentences(of: scalars, in: range)
        var decided = sentences.map { sentence -> (words: Int, language: String?) in
            (SentenceSplitter.wordCount(scalars, in: sentence), nil)
        }
        if decided.count > 1, decided.allSatisfy({ $0.words <= LanguageDecision.shortWords }) {
            // Short sentences alone ("File name not specified. Try again.") each say too little of
            // their language; together they are one text, decided as one.
            let language = decide(scalars, range, own: languages.own, languages, budget: &budget)
            for index in decided.indices { decided[index].language = language }
        } else {
            // A short sentence among longer ones takes a neighbour's language below: not detected.
            for (index, sentence) in sentences.enumerated() where decided.count == 1 || decided[index].words > LanguageDecision.shortWords {
                decided[index].language = decide(scalars, sentence, own: languages.own, languages, budget: &budget)
            }
        }
        // A short sentence among longer ones ("Lo salto.", "Exit status: always succeeds.") says too
        // little of its language alone: it is said in the language of the sentence before it (the
        // first one, of the longer sentence after it).
        if decided.count > 1 {
            for index in decided.indices where decided[index].words <= LanguageDecision.shortWords {
                if index > 0 {
                    decided[index].language = decided[index - 1].language
                } else if let next = decided.indices.dropFirst().first(where: { decided[$0].words > LanguageDecision.shortWords }) {
                    decided[index].language = decided[next].language
                }
            }
        }
        for (sentence, (_, language)) in zip(sentences, decided) {
            let clauses = SentenceSplitter.clauses(of: scalars, in: sentence)
            guard clauses.count > 1 else {
                add(sentence, language)
                continue
            }
            // A clause leaves its sentence's language only when it is itself clearly in another
            // (the short text's rule: its few words against the whole sentence's).
            let sentenceLanguage = language ?? languages.own
            for clause in clauses {
                var clauseLanguage = decide(scalars, clause, own: sentenceLanguage, languages, clause: true, budget: &budget) ?? language
                if let chosen = clauseLanguage, LanguageTag.base(chosen) == ownBase { clauseLanguage = nil }
                add(clause, clauseLanguage)
            }
        }
        return pieces
    }

    /// The listed language a piece is in, when another than `own`; nil when it stays, when it is too
    /// short to tell (a character, a word), or when the utterance's detection budget is spent.
    private static func decide(
        _ scalars: [Unicode.Scalar], _ range: Range<Int>, own: String, _ languages: LanguageSwitch, clause: Bool = false,
        budget: inout Int
    ) -> String? {
        let words = SentenceSplitter.wordCount(scalars, in: range)
        guard LanguageDecision.isWorthDetecting(words: words, letters: SentenceSplitter.letterCount(scalars, in: range)),
              budget > 0
        else { return nil }
        var text = String.UnicodeScalarView()
        var bytes = 0
        for scalar in scalars[range] {
            let length = UTF8.width(scalar)
            if bytes + length > LanguageDecision.maximumBytes { break }
            bytes += length
            text.append(scalar)
        }
        budget -= bytes
        guard let evidence = languages.detector.evidence(for: String(text)) else { return nil }
        return languages.decision.choose(evidence, own: own, words: words, clause: clause)
    }
}
