// SPDX-License-Identifier: GPL-3.0-or-later
/// A command line split as speech-dispatcher splits it: on single spaces, so that two spaces in a
/// row make an empty argument, which counts as missing.
struct SSIPArguments: Sendable {
    private let words: [Substring]
    /// The line as sent (for SET SYNTHESIS_VOICE, whose name may hold spaces).
    let line: String

    init(_ line: String) {
        self.line = line
        words = line.split(separator: " ", omittingEmptySubsequences: false)
    }

    /// The command name, lower-cased ("" for an empty line).
    var command: String { words.first.map { $0.lowercased() } ?? "" }

    /// Argument `index` (1 is the first after the command), as sent; nil when missing or empty.
    func raw(_ index: Int) -> String? {
        guard index < words.count, !words[index].isEmpty else { return nil }
        return String(words[index])
    }

    /// Argument `index` lower-cased: SSIP keywords are case-insensitive.
    func keyword(_ index: Int) -> String? { raw(index)?.lowercased() }

    /// Everything from argument `index` on, spaces kept.
    func rest(from index: Int) -> String? {
        guard index < words.count else { return nil }
        let rest = words[index...].joined(separator: " ")
        return rest.isEmpty ? nil : rest
    }

    /// speech-dispatcher's `isanum`: an optional sign, then digits only.
    static func integer(_ text: String) -> Int? {
        var digits = Substring(text)
        var negative = false
        if let sign = digits.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        // Beyond Int: far out of every range, on the side of its sign.
        let magnitude = Int(digits) ?? Int.max
        return negative ? -magnitude : magnitude
    }
}
