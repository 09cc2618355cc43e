// SPDX-License-Identifier: GPL-3.0-or-later
// a11y-pronounce-bench --language-cost SENTENCES.TSV: what finding a sentence's language costs, on the
// sentences of bench/language/sentences.tsv posted in French with five languages listed (the
// accuracy test's setting): the detectors and the decision on each sentence alone, and the planner
// with detection against the same planner without it. Prints a line for people and a JSON line
// (`JSON {...}`) that bench/bench.py reads for its row.
import A11yCore
import A11yEngine
import A11yLanguageDetection
import A11yPronunciation
import Foundation

/// Median, 95th percentile and mean of `values` (microseconds).
private func summary(_ values: [Double]) -> (median: Double, p95: Double, mean: Double) {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return (0, 0, 0) }
    return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 95 / 100)],
            sorted.reduce(0, +) / Double(sorted.count))
}

private func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func languageCost(sentencesFile path: String, engine: some PronunciationEngine, rounds: Int = 5) async throws {
    let languages = ["fr", "en", "de", "es", "it"]
    let content = try String(contentsOfFile: path, encoding: .utf8)
    var sentences: [String] = []
    for line in content.split(separator: "\n") where !line.hasPrefix("#") {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        if fields.count == 4, fields[1] == "sentence" { sentences.append(String(fields[3])) }
    }
    let detector = LanguageDetector(languages: languages)
    let decision = LanguageDecision(listed: languages)
    let switching = LanguageSwitch(detector: detector, decision: decision, own: "fr")
    let pronouncer = Pronouncer(engine: engine)
    let clock = ContinuousClock()
    var detect: [Double] = [], planned: [Double] = [], plain: [Double] = []
    // One round first, not counted: the fingerprints' pages and the voices resolved are warm after it.
    for round in 0...rounds {
        for sentence in sentences {
            let scalars = Array(sentence.unicodeScalars)
            let words = SentenceSplitter.wordCount(scalars, in: 0..<scalars.count)
            let start = clock.now
            if let evidence = detector.evidence(for: sentence) { _ = decision.choose(evidence, own: "fr", words: words) }
            let detected = clock.now
            _ = try await pronouncer.plan(text: sentence, defaultVoice: "fr", languages: switching)
            let withDetection = clock.now
            _ = try await pronouncer.plan(text: sentence, defaultVoice: "fr")
            let without = clock.now
            guard round > 0 else { continue }
            detect.append(microseconds(detected - start))
            planned.append(microseconds(withDetection - detected))
            plain.append(microseconds(without - withDetection))
        }
    }
    let d = summary(detect), p = summary(planned), n = summary(plain)
    let added = (median: p.median - n.median, mean: p.mean - n.mean)
    print(String(
        format: "language detection, %d sentences × %d rounds: detectors and decision median %.1f µs, p95 %.1f, mean %.1f; "
            + "planning with detection median %.1f µs (without %.1f): %.1f µs added, mean %.1f",
        sentences.count, rounds, d.median, d.p95, d.mean, p.median, n.median, added.median, added.mean))
    let json: [String: Double] = [
        "sentences": Double(sentences.count), "rounds": Double(rounds),
        "detect_median_us": d.median, "detect_p95_us": d.p95, "detect_mean_us": d.mean,
        "plan_median_us": p.median, "plain_median_us": n.median,
        "added_median_us": added.median, "added_mean_us": added.mean,
    ]
    let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
    print("JSON " + String(decoding: data, as: UTF8.self))
}
