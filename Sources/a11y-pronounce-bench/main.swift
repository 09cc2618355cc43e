// SPDX-License-Identifier: GPL-3.0-or-later
// a11y-pronounce-bench DATA_DIR [lang ...]
// a11y-pronounce-bench --language-cost SENTENCES.TSV (LanguageCost.swift)
// For each word of DATA_DIR/<lang>.tsv (word<TAB>dictionary IPA): the word given its IPA as an
// `ipa` span, the IPA eSpeak then pronounces, compared after `Canon` (docs/pronunciation.md);
// baseline: eSpeak reading the spelling; swap: each word given the next word's IPA.
import A11yCore
import A11yEngine
import A11yPronunciation
import Foundation
import Logging

let languages: [(file: String, voice: String)] = [
    ("fr", "fr"), ("en", "en-us"), ("de", "de"), ("es", "es"), ("it", "it"),
    ("nl", "nl"), ("pt", "pt-br"), ("ru", "ru"), ("sv", "sv"), ("cs", "cs"),
]

func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

struct Tally {
    var exact = 0, total = 0, errors = 0, symbols = 0, invalid = 0
    mutating func add(_ reference: String, _ said: String?) {
        total += 1
        let ref = Array(reference.unicodeScalars)
        symbols += ref.count
        guard let said else { invalid += 1; errors += ref.count; return }
        let d = editDistance(ref, Array(said.unicodeScalars))
        errors += d
        if d == 0 { exact += 1 }
    }
    var exactRate: Double { total == 0 ? 0 : 100 * Double(exact) / Double(total) }
    var ser: Double { symbols == 0 ? 0 : 100 * Double(errors) / Double(symbols) }
}

let arguments = CommandLine.arguments.dropFirst()
guard let dataDir = arguments.first else {
    FileHandle.standardError.write("usage: a11y-pronounce-bench DATA_DIR [lang...] [--verbose] | --language-cost SENTENCES.TSV\n".data(using: .utf8)!)
    exit(2)
}
let verbose = arguments.contains("--verbose")
if dataDir == "--language-cost", let path = arguments.dropFirst().first {
    try await languageCost(sentencesFile: path, engine: try EspeakEngine(logger: Logger(label: "bench")))
    exit(0)
}
if dataDir == "--inventory", let voice = arguments.dropFirst().first {
    let engine = try EspeakEngine(logger: Logger(label: "bench"))
    for entry in try await engine.phonemeInventory(voice: voice) {
        print(entry.mnemonic, entry.ipa, entry.stable ? "" : "(unstable)")
    }
    exit(0)
}
if dataDir == "--convert", arguments.count >= 3 {
    // a11y-pronounce-bench --convert VOICE IPA...: the mnemonics and what eSpeak then says.
    let list = Array(arguments.dropFirst())
    let engine = try EspeakEngine(logger: Logger(label: "bench"))
    let pronouncer = Pronouncer(engine: engine)
    for ipa in list.dropFirst() {
        do {
            let m = try await pronouncer.mnemonics(forIPA: ipa, voice: list[0])
            let out = try await engine.phonemes(for: "[[" + m + "]]", voice: list[0], ipa: true, separator: nil, phonemeInput: true)
            print("\(ipa)\t[[\(m)]]\t\(out)")
        } catch { print("\(ipa)\terror \(error)") }
    }
    exit(0)
}
let wanted = Set(arguments.dropFirst().filter { !$0.hasPrefix("--") })
let engine = try EspeakEngine(logger: Logger(label: "bench"))
let pronouncer = Pronouncer(engine: engine)

print("| language | voice | words | IPA span exact | IPA span SER | spelling exact | spelling SER | other word's IPA exact | invalid_ipa |")
print("|---|---|---|---|---|---|---|---|---|")
for (file, voice) in languages where wanted.isEmpty || wanted.contains(file) {
    let path = dataDir + "/" + file + ".tsv"
    guard let content = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
    let rows = content.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }.filter { $0.count == 2 }
    let canon = Canon(language: file)
    var spans = Tally(), spelling = Tally(), swapped = Tally()
    for (index, row) in rows.enumerated() {
        let (word, ipa) = (row[0], row[1])
        let reference = canon.apply(ipa, reference: ipa)
        // Baseline: eSpeak reading the spelling.
        let read = try await engine.phonemes(for: word, voice: voice, ipa: true, separator: nil, phonemeInput: false)
        spelling.add(reference, canon.apply(read, reference: ipa))
        // The word with its IPA as a span, through the planner, shown as eSpeak will say it.
        func said(_ ipa: String) async throws -> String? {
            do {
                let plan = try await pronouncer.plan(
                    text: word, spans: [SpeechSpan(start: 0, length: word.unicodeScalars.count, ipa: ipa)],
                    defaultVoice: voice)
                return try await pronouncer.showIPA(plan.segments, annotated: false)
            } catch let error as SpeechError where error.code == .invalidIPA {
                if verbose { print("  invalid \(word) /\(ipa)/: \(error.message)") }
                return nil
            }
        }
        let out = try await said(ipa)
        let canonOut = out.map { canon.apply($0, reference: ipa) }
        spans.add(reference, canonOut)
        if verbose, let canonOut, Array(canonOut.unicodeScalars) != Array(reference.unicodeScalars) { print("  \(file) \(word): want \(reference) got \(canonOut) (raw \(out!))") }
        let other = rows[(index + 1) % rows.count][1]
        swapped.add(canon.apply(other, reference: other), try await said(other).map { canon.apply($0, reference: other) })
    }
    func f(_ x: Double) -> String { String(format: "%.1f %%", x) }
    print("| \(file) | \(voice) | \(rows.count) | \(f(spans.exactRate)) | \(f(spans.ser)) | \(f(spelling.exactRate)) | \(f(spelling.ser)) | \(f(swapped.exactRate)) | \(spans.invalid) |")
}
