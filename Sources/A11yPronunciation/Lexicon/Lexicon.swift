// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// The user's pronunciations, ready to match: entries in precedence order (earlier wins a tie)
/// and an index by first word. A value: the daemon swaps a whole new one in on a change.
public struct Lexicon: Sendable, Equatable {
    public private(set) var entries: [LexiconEntry]
    /// Folded first token of each grapheme → the patterns starting with it, in entry order.
    private let index: [String: [LexiconPattern]]

    public static let empty = Lexicon()

    public init(entries: [LexiconEntry] = []) {
        self.entries = entries
        var index: [String: [LexiconPattern]] = [:]
        for (order, entry) in entries.enumerated() {
            for grapheme in entry.graphemes {
                guard let pattern = LexiconPattern(grapheme, entry: order, caseSensitive: entry.caseSensitive) else { continue }
                index[pattern.key, default: []].append(pattern)
            }
        }
        self.index = index
    }

    /// Several lexicons as one; on a tie the earlier lexicon's entry wins.
    public init(merging lexicons: [Lexicon]) {
        self.init(entries: lexicons.flatMap(\.entries))
    }

    public static func == (a: Lexicon, b: Lexicon) -> Bool { a.entries == b.entries }

    public var isEmpty: Bool { entries.isEmpty }

    /// The languages entries are limited to.
    var languages: Set<String> { Set(entries.compactMap(\.language)) }

    // MARK: Editing (pure: the store writes the result)

    /// `entry` added; an entry with one of its graphemes and the same language loses that grapheme
    /// (and goes when none is left): the newest pronunciation of a word wins.
    public func adding(_ entry: LexiconEntry) -> Lexicon {
        var result = self
        for grapheme in entry.graphemes { result = result.removing(grapheme: grapheme, language: entry.language).lexicon }
        result.entries.append(entry)
        return Lexicon(entries: result.entries)
    }

    /// `grapheme` removed from the entries of exactly `language` (nil: those for every voice).
    public func removing(grapheme: String, language: String?) -> (lexicon: Lexicon, removed: [LexiconEntry]) {
        let language = language.flatMap(LanguageTag.normalized)
        var kept: [LexiconEntry] = []
        var removed: [LexiconEntry] = []
        for var entry in entries {
            guard entry.language == language, entry.hasGrapheme(grapheme) else {
                kept.append(entry)
                continue
            }
            removed.append(entry)
            let wanted = grapheme.trimmed.lowercased()
            entry.graphemes.removeAll { entry.caseSensitive ? $0 == grapheme.trimmed : $0.lowercased() == wanted }
            if !entry.graphemes.isEmpty { kept.append(entry) }
        }
        return (Lexicon(entries: kept), removed)
    }

    // MARK: Matching

    /// Non-overlapping whole-word matches inside `region` of `text`, left to right, the longest at
    /// each place; ties go to a case-sensitive entry, then to a language-limited one, then to the
    /// earlier entry. `applies` says which entries the voice in force takes.
    func matches(in text: LexiconText, within region: Range<Int>, where applies: (LexiconEntry) -> Bool) -> [LexiconMatch] {
        var result: [LexiconMatch] = []
        var k = text.tokens.firstIndex { $0.range.lowerBound >= region.lowerBound } ?? text.tokens.count
        while k < text.tokens.count, text.tokens[k].range.lowerBound < region.upperBound {
            let token = text.tokens[k]
            var best: (match: LexiconMatch, next: Int, rank: (Int, Int, Int, Int))?
            if token.kind != .space {
                for pattern in index[token.key] ?? [] where applies(entries[pattern.entry]) {
                    guard let next = pattern.match(text.tokens, at: k) else { continue }
                    let range = token.range.lowerBound..<text.tokens[next - 1].range.upperBound
                    guard range.upperBound <= region.upperBound, text.isWholeWord(range) else { continue }
                    let entry = entries[pattern.entry]
                    let rank = (range.count, entry.caseSensitive ? 1 : 0, entry.language?.count ?? 0, -pattern.entry)
                    if best == nil || rank > best!.rank {
                        best = (LexiconMatch(range: range, entry: entry), next, rank)
                    }
                }
            }
            if let best {
                result.append(best.match)
                k = best.next
            } else {
                k += 1
            }
        }
        return result
    }
}

/// A grapheme found in a text: where (Unicode scalars of the text) and whose entry.
struct LexiconMatch: Sendable, Equatable {
    var range: Range<Int>
    var entry: LexiconEntry
}
