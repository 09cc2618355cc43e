// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yPronunciation
import FuzzSupport

/// The SSML reader and planner: a document through `SSMLParser` and `Pronouncer.plan(ssml:)`, with a
/// small fake engine (a few voices, a few phonemes) so that millions of documents run per hour.
///
/// Invariants: refusals are `SpeechError`s with the codes SSML can earn and a message; a plan's
/// segments and marks point inside its spoken text; every reading option is finite and in the
/// range the engine is given (a NaN or infinite scale traps when the engine turns it into an Int);
/// phoneme segments cannot close eSpeak's `[[…]]`.
@main enum Fuzzer {
    static func main() { runFuzzer(fuzzSSML) }
}

func fuzzSSML(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let document = input.restAsString()
    blocking { await check(document) }
    return 0
}

let pronouncer = Pronouncer(engine: FakeVoices())

func check(_ document: String) async {
    do {
        _ = try SSMLParser.parse(document)
    } catch let error as SpeechError {
        require(error.code == .invalidSSML, "the parser refused with \(error.code)")
        require(!error.message.isEmpty, "a refusal without a message")
    } catch {
        require(false, "the parser threw a non-SpeechError: \(error)")
    }
    let plan: SpeechPlan
    do {
        plan = try await pronouncer.plan(ssml: document, defaultVoice: "en")
    } catch let error as SpeechError {
        require([.invalidSSML, .unknownVoice, .invalidIPA].contains(error.code), "plan refused with \(error.code)")
        require(!error.message.isEmpty, "a refusal without a message")
        return
    } catch {
        require(false, "plan threw a non-SpeechError: \(error)")
        return
    }
    checkPlan(plan)
}

/// What the engine is given must be in range, whatever the document said.
func checkPlan(_ plan: SpeechPlan) {
    let length = plan.spokenText.unicodeScalars.count
    for segment in plan.segments {
        require(segment.sourceStart >= 0 && segment.sourceLength >= 0, "negative source range \(segment)")
        require(segment.sourceStart <= length - segment.sourceLength, "segment past the spoken text (\(length)): \(segment)")
        let o = segment.options
        for (name, scale) in [("rate", o.rateScale), ("pitch", o.pitchScale), ("volume", o.volumeScale)] {
            require(scale.isFinite && scale >= 0 && scale <= 4, "\(name) scale \(scale) in \(segment)")
        }
        require((0...60_000).contains(o.pauseBeforeMilliseconds), "pause \(o.pauseBeforeMilliseconds) ms")
        if case .phonemes(let mnemonics) = segment.content {
            require(!mnemonics.contains("]]") && !mnemonics.contains("[["), "mnemonics break out of [[…]]: \(mnemonics)")
        }
    }
    for mark in plan.marks {
        require(mark.segmentIndex >= 0 && mark.segmentIndex < plan.segments.count, "mark past the segments: \(mark)")
        require(mark.offset >= 0 && mark.offset <= length, "mark past the text: \(mark)")
    }
}

/// Voices for a few languages, each with a handful of phonemes (mnemonic = IPA where ASCII).
struct FakeVoices: PronunciationEngine {
    static let voices = ["en", "en-us", "fr", "de", "pt", "cs"]

    func resolveVoice(language: String) async throws -> String {
        let tag = String(language.lowercased().map { $0 == "_" ? "-" : $0 })
        if let exact = Self.voices.first(where: { $0 == tag }) { return exact }
        if let base = tag.split(separator: "-").first, Self.voices.contains(String(base)) { return String(base) }
        throw SpeechError(.unknownVoice, "no voice for '\(language)'")
    }

    func phonemeInventory(voice: String) async throws -> [PhonemeEntry] {
        [("a", "a"), ("e", "e"), ("i", "i"), ("o", "o"), ("u", "u"), ("@", "ə"), ("E", "ɛ"), ("O", "ɔ"),
         ("p", "p"), ("t", "t"), ("k", "k"), ("s", "s"), ("S", "ʃ"), ("Z", "ʒ"), ("m", "m"), ("n", "n"),
         ("l", "l"), ("r", "ʁ"), ("j", "j"), ("w", "w"), ("aI", "aɪ"), ("a:", "aː"), ("i:", "iː"), ("T", "θ")]
            .map { PhonemeEntry(mnemonic: $0.0, ipa: $0.1) }
    }

    func allMnemonics() async throws -> [String] {
        try await phonemeInventory(voice: "en").map(\.mnemonic) + ["a#", "t#", "l/"]
    }

    func ipa(ofText text: String, voice: String) async throws -> String { text }
    func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String { mnemonics }
    func ipa(ofLetter character: String, voice: String) async throws -> String { character }
}
