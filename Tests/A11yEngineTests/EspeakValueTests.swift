// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yEngine
import Testing

/// Numbers and bytes libespeak-ng hands back, at their extremes: never a trap, never a read past
/// the end.
@Suite struct EspeakValueTests {
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
