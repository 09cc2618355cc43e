// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yEngine
import Testing

/// Numbers and bytes libespeak-ng hands back, at their extremes: never a trap, never a read past
/// the end.
@Suite struct EspeakValueTests {
    /// The byte checks that spare a long text the scalar passes agree with them: a text is broken
    /// or rewritten exactly when they say it may need to be.
    @Test(arguments: [
        String(repeating: "mot ", count: 50_000),
        String(repeating: "x", count: 100), String(repeating: "x", count: 101),
        String(repeating: "é", count: 50) + " " + String(repeating: "é", count: 51),
        // Runs broken only by spaces that are not ASCII: the bytes say maybe, the scalars say no.
        Array(repeating: "mot", count: 60).joined(separator: "\u{3000}"),
        "prix ৫৬ taka", String(repeating: "a", count: 300) + "৯",
        "ক", "\u{09E5}\u{09F0}",
    ])
    func theByteChecksNeverMissWhatTheScalarPassesDo(_ text: String) {
        let broken = EspeakSession.breakingLongWords(text)
        if broken.positionMap != nil { #expect(EspeakSession.mayHoldLongWord(text)) }
        if !EspeakSession.mayHoldLongWord(text) { #expect(broken.input == text && broken.positionMap == nil) }
        let hasDigit = text.unicodeScalars.contains { (0x09E6...0x09EF).contains($0.value) }
        #expect(EspeakSession.mayHoldBengaliDigits(text) == hasDigit)
        #expect(EspeakSession.replacingBengaliDigits(text).unicodeScalars.contains { (0x09E6...0x09EF).contains($0.value) } == false)
    }

    @Test func wordEventsAtExtremePositionsAndLengths() {
        func word(_ position: Int32, _ length: Int32, map: [Int]? = nil) -> [Int]? {
            SynthesisContext.wordRange(
                textPosition: position, length: length, sourceStart: 10, sourceLength: 20, positionMap: map
            ).map { [$0.start, $0.length] }
        }
        #expect(word(1, 5) == [10, 5])
        #expect(word(4, 100) == [13, 17], "clamped to the segment's end")
        #expect(word(0, 5) == nil)
        #expect(word(.min, 5) == nil)
        #expect(word(.max, 5) == nil, "past the segment: names no text")
        #expect(word(.max, .max) == nil)
        #expect(word(1, .min) == nil)
        #expect(word(1, 0) == nil)
        #expect(word(2, 3, map: [0, 7, 7]) == [17, 3])
        #expect(word(4, 3, map: [0, 7, 7]) == nil, "beyond the position map")
        #expect(word(.max, 3, map: [0]) == nil)
        #expect(
            SynthesisContext.wordRange(textPosition: 1, length: 1, sourceStart: 0, sourceLength: .min, positionMap: nil)
                == nil)
    }

    @Test func languageListsWithInvalidUTF8AreReadByTheirBytes() {
        // Priority 5, a name that is one invalid byte, then priority 7 "en", then the end.
        let bytes: [UInt8] = [5, 0xFF, 0, 7, 0x45, 0x6E, 0, 0, 0, 0, 0, 0]
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                EspeakSession.parseLanguages($0)
            }
        }
        #expect(parsed.map(\.priority) == [5, 7])
        #expect(parsed.map(\.name) == ["\u{FFFD}", "en"])
        #expect(EspeakSession.parseLanguages(nil).isEmpty)
    }
}
