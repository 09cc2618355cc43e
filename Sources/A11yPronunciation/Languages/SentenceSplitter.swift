// SPDX-License-Identifier: GPL-3.0-or-later

/// Cuts a text into the pieces whose language is decided one by one: sentences, and a long
/// sentence into its clauses. Pure: ranges of Unicode scalars, no Foundation, linear in the text.
///
/// The pieces cover the range given, in order, without gaps: the spaces after a sentence belong to
/// it, so that every scalar of the client's text is still said by some segment.
public enum SentenceSplitter {
    /// A sentence ends at `.`, `!`, `?`, `…` (and their CJK and Arabic forms) followed by a space and
    /// then something that is neither a lower-case letter nor a digit ("p. 12", "e.g. this" stay whole), or
    /// at a line break.
    public static func sentences(of scalars: [Unicode.Scalar], in range: Range<Int>) -> [Range<Int>] {
        var pieces: [Range<Int>] = []
        var start = range.lowerBound
        var index = range.lowerBound
        while index < range.upperBound {
            let scalar = scalars[index]
            var end: Int?
            if scalar == "\n" || scalar == "\r" || scalar == "\u{2029}" {
                end = spaceEnd(scalars, from: index, limit: range.upperBound)
            } else if isTerminal(scalar) {
                // Closing quotes and brackets after the mark stay with the sentence.
                var after = index + 1
                while after < range.upperBound, isCloser(scalars[after]) || isTerminal(scalars[after]) { after += 1 }
                if after < range.upperBound, scalars[after].properties.isWhitespace {
                    let next = spaceEnd(scalars, from: after, limit: range.upperBound)
                    if next == range.upperBound || !(scalars[next].properties.isLowercase || ("0"..."9").contains(scalars[next])) {
                        end = next
                    }
                } else if isFullWidthTerminal(scalar) {
                    end = after
                }
            }
            if let end, end > start {
                pieces.append(start..<end)
                start = end
                index = end
            } else {
                index += 1
            }
        }
        if start < range.upperBound { pieces.append(start..<range.upperBound) }
        return pieces
    }

    /// A sentence of at least `minimumWords` words cut after its clause marks (`,` `;` `:` and
    /// dashes, brackets), each clause keeping at least `clauseWords` words (a shorter one joins the
    /// next, or the one before at the end). A shorter sentence is its one clause.
    public static func clauses(
        of scalars: [Unicode.Scalar], in range: Range<Int>, minimumWords: Int = 16, clauseWords: Int = 5
    ) -> [Range<Int>] {
        guard wordCount(scalars, in: range) >= minimumWords else { return [range] }
        var cuts: [Int] = []
        var index = range.lowerBound
        while index < range.upperBound {
            let scalar = scalars[index]
            if [",", ";", ":", "\u{2013}", "\u{2014}", "(", ")"].contains(scalar),
               index + 1 < range.upperBound, scalars[index + 1].properties.isWhitespace || scalar == "(" {
                let cut = scalar == "(" ? index : spaceEnd(scalars, from: index + 1, limit: range.upperBound)
                if cut > range.lowerBound, cut < range.upperBound { cuts.append(cut) }
            }
            index += 1
        }
        var pieces: [Range<Int>] = []
        var start = range.lowerBound
        for cut in cuts where cut > start && wordCount(scalars, in: start..<cut) >= clauseWords {
            pieces.append(start..<cut)
            start = cut
        }
        if let last = pieces.last, wordCount(scalars, in: start..<range.upperBound) < clauseWords {
            pieces[pieces.count - 1] = last.lowerBound..<range.upperBound
        } else {
            pieces.append(start..<range.upperBound)
        }
        return pieces
    }

    /// Words: runs of letters and digits (an apostrophe or hyphen inside one keeps it one word).
    public static func wordCount(_ scalars: [Unicode.Scalar], in range: Range<Int>) -> Int {
        var count = 0
        var inWord = false
        for index in range {
            let scalar = scalars[index]
            let isWordScalar = scalar.properties.isAlphabetic || scalar.properties.numericType != nil
            let joins = inWord && (scalar == "'" || scalar == "\u{2019}" || scalar == "-")
            if isWordScalar, !inWord { count += 1 }
            if !joins { inWord = isWordScalar }
        }
        return count
    }

    /// Letters: what a detector reads; digits and punctuation tell nothing of a language.
    public static func letterCount(_ scalars: [Unicode.Scalar], in range: Range<Int>) -> Int {
        var count = 0
        for index in range where scalars[index].properties.isAlphabetic { count += 1 }
        return count
    }

    private static func isTerminal(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case ".", "!", "?", "\u{2026}", "\u{061F}", "\u{06D4}", "\u{0964}": true
        default: isFullWidthTerminal(scalar)
        }
    }

    /// CJK sentence ends, which no space follows.
    private static func isFullWidthTerminal(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\u{3002}" || scalar == "\u{FF01}" || scalar == "\u{FF1F}"
    }

    private static func isCloser(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\"", "'", ")", "]", "\u{00BB}", "\u{201D}", "\u{2019}", "\u{300D}", "\u{300F}": true
        default: false
        }
    }

    private static func spaceEnd(_ scalars: [Unicode.Scalar], from index: Int, limit: Int) -> Int {
        var end = index
        while end < limit, scalars[end].properties.isWhitespace { end += 1 }
        return end
    }
}
