// SPDX-License-Identifier: GPL-3.0-or-later
/// `<say-as interpret-as="telephone">`: the digits of a phone number grouped as people say them.
///
/// - French: each group of two digits is read as a number, a leading zero said ("06" → "zéro
///   six", "11" → "onze"); a longer group is cut into pairs (an odd one starts with one digit).
/// - English: digits one by one ("zero six"), grouped as written.
/// - Other languages: digits one by one as figures ("0 6"), which eSpeak names in the voice's
///   language, grouped as written.
/// Groups are the runs of digits between separators (space, `.`, `-`, `/`, `(`, `)`) and are
/// joined with ", " so eSpeak pauses between them as people do. A leading `+` is said "plus".
/// Anything else is kept as written.
enum SSMLTelephone {
    static func reading(_ number: String, language: String) -> String {
        var pieces: [String] = []
        var other = ""
        var digits = ""
        func flush() {
            if !digits.isEmpty { pieces.append(group(digits, language: language)); digits = "" }
            if !other.isEmpty { pieces.append(other); other = "" }
        }
        for character in number {
            if character.isASCII, character.isNumber {
                if !other.isEmpty { flush() }
                digits.append(character)
            } else if character == "+" {
                flush()
                pieces.append("plus")
            } else if " .-/()\u{00A0}\t\n\r".contains(character) {
                flush()
            } else {
                if !digits.isEmpty { flush() }
                other.append(character)
            }
        }
        flush()
        return pieces.joined(separator: ", ")
    }

    private static func group(_ digits: String, language: String) -> String {
        let values = digits.map { Int(String($0))! }
        switch language {
        case "fr":
            var parts: [String] = []
            var i = 0
            if values.count % 2 == 1 {
                parts.append(frenchNumber(values[0]))
                i = 1
            }
            while i + 1 < values.count {
                let (a, b) = (values[i], values[i + 1])
                parts.append(a == 0 ? "zéro " + frenchNumber(b) : frenchNumber(a * 10 + b))
                i += 2
            }
            return parts.joined(separator: ", ")
        case "en":
            let names = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
            return values.map { names[$0] }.joined(separator: " ")
        default:
            return values.map(String.init).joined(separator: " ")
        }
    }

    /// 0...99 in French words ("soixante et onze", "quatre-vingts", "quatre-vingt-dix-neuf").
    static func frenchNumber(_ n: Int) -> String {
        let units = [
            "zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
            "treize", "quatorze", "quinze", "seize",
        ]
        let tens = [2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante"]
        switch n {
        case 0...16: return units[n]
        case 17...19: return "dix-" + units[n - 10]
        case 20...69:
            let (t, u) = (n / 10, n % 10)
            if u == 0 { return tens[t]! }
            if u == 1 { return tens[t]! + " et un" }
            return tens[t]! + "-" + units[u]
        case 70...79:
            return n == 71 ? "soixante et onze" : "soixante-" + frenchNumber(n - 60)
        case 80: return "quatre-vingts"
        case 81...99: return "quatre-vingt-" + frenchNumber(n - 80)
        default: return String(n)
        }
    }
}
