// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// SSML attribute values → numbers for `SpeechSegment.Options`.
enum SSMLValues {
    /// The longest single `<break>` accepted.
    static let maxBreakMilliseconds = 60_000

    /// `time` ("500ms", "1s", "1.5s") wins over `strength` (none … x-strong); neither: medium.
    static func breakMilliseconds(_ element: MarkupElement) throws -> Int {
        if let time = element.attributes["time"] {
            let trimmed = time.trimmed
            let (number, factor): (Substring, Double)
            if trimmed.hasSuffix("ms") {
                (number, factor) = (trimmed.dropLast(2), 1)
            } else if trimmed.hasSuffix("s") {
                (number, factor) = (trimmed.dropLast(1), 1000)
            } else {
                throw SpeechError(.invalidSSML, "\(element.location) time '\(time)' needs a unit: ms or s (\"500ms\", \"1s\")")
            }
            guard let value = decimal(number), value >= 0 else {
                throw SpeechError(.invalidSSML, "\(element.location) time '\(time)' is not a non-negative duration")
            }
            let milliseconds = value * factor
            guard milliseconds <= Double(maxBreakMilliseconds) else {
                throw SpeechError(.invalidSSML, "\(element.location) time '\(time)' is over \(maxBreakMilliseconds / 1000) s")
            }
            return Int(milliseconds.rounded())
        }
        switch element.attributes["strength"]?.trimmed ?? "medium" {
        case "none": return 0
        case "x-weak": return 100
        case "weak": return 200
        case "medium": return 400
        case "strong": return 700
        case "x-strong": return 1200
        case let other:
            throw SpeechError(
                .invalidSSML, "\(element.location) strength '\(other)' is not none, x-weak, weak, medium, strong or x-strong")
        }
    }

    enum Property: String { case rate, pitch, volume }

    /// A `prosody` attribute as a multiplier of the value in force: a keyword, a percentage
    /// ("150%" absolute, "+20%"/"-20%" relative), a plain number for rate (SSML 1.1: "1.5"), or
    /// decibels for volume ("+6dB"). Hertz and semitones are refused (eSpeak's pitch is not in Hz).
    static func prosodyScale(_ value: String, _ property: Property, _ element: MarkupElement) throws -> Double {
        let v = value.trimmed
        func refuse(_ why: String) -> SpeechError {
            SpeechError(.invalidSSML, "\(element.location) \(property.rawValue) '\(value)': \(why)")
        }
        let keywords: [String: Double]
        switch property {
        case .rate: keywords = ["x-slow": 0.5, "slow": 0.75, "medium": 1, "fast": 1.3, "x-fast": 1.7, "default": 1]
        case .pitch: keywords = ["x-low": 0.5, "low": 0.75, "medium": 1, "high": 1.25, "x-high": 1.5, "default": 1]
        case .volume:
            keywords = ["silent": 0, "x-soft": 0.3, "soft": 0.6, "medium": 1, "loud": 1.4, "x-loud": 1.8, "default": 1]
        }
        if let scale = keywords[v] { return scale }
        let signed = v.hasPrefix("+") || v.hasPrefix("-")
        if v.hasSuffix("%") {
            guard let number = decimal(v.dropLast().drop { $0 == "+" }) else { throw refuse("not a percentage") }
            let scale = signed ? 1 + number / 100 : number / 100
            guard scale >= 0 else { throw refuse("below zero") }
            return scale
        }
        if property == .volume, v.lowercased().hasSuffix("db") {
            guard let number = decimal(v.dropLast(2).drop { $0 == "+" }) else { throw refuse("not a number of dB") }
            // Far past what `clamp` keeps (±6 dB), and finite: +1e11 dB was infinite, and silent × ∞ a NaN.
            return pow10(min(max(number, -200), 200) / 20)
        }
        if property == .rate, !signed, let number = decimal(Substring(v)), number >= 0 { return number }
        if v.lowercased().hasSuffix("hz") || v.hasSuffix("st") {
            throw refuse("Hz and semitones are not supported; use a percentage (\"+10%\") or x-low … x-high")
        }
        let words = keywords.keys.filter { $0 != "default" }.sorted().joined(separator: ", ")
        throw refuse("expected a percentage (\"80%\", \"+10%\")\(property == .volume ? ", dB" : "") or one of \(words)")
    }

    /// Clamped so that extreme nesting stays within what eSpeak accepts.
    static func clamp(_ scale: Double, _ property: Property) -> Double {
        switch property {
        case .rate: return min(max(scale, 0.25), 4)
        case .pitch: return min(max(scale, 0), 2)
        case .volume: return min(max(scale, 0), 2)
        }
    }

    /// "12", "1.5", "-3", ".5" (no exponent, no Foundation).
    static func decimal(_ text: Substring) -> Double? {
        var s = text
        var negative = false
        if s.first == "-" { negative = true; s = s.dropFirst() }
        guard !s.isEmpty, s.count <= 12 else { return nil }
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              !(parts.allSatisfy(\.isEmpty))
        else { return nil }
        var value = Double(Int(parts[0]) ?? 0)
        if parts.count == 2, !parts[1].isEmpty {
            value += Double(Int(parts[1])!) / pow10(Double(parts[1].count))
        }
        return negative ? -value : value
    }

    /// 10^x without Foundation.
    static func pow10(_ x: Double) -> Double {
        // e^(x ln 10) by a series on a reduced argument.
        var y = x * 2.302585092994046
        var halvings = 0
        while abs(y) > 0.5 { y /= 2; halvings += 1 }
        var term = 1.0, sum = 1.0
        for n in 1...20 {
            term *= y / Double(n)
            sum += term
        }
        for _ in 0..<halvings { sum *= sum }
        return sum
    }
}

