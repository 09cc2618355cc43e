// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
@testable import A11yPronunciation
import Testing

/// What the SSML fuzzer (Fuzz/, docs/fuzzing.md) caught, kept as tests: every reading option a
/// document can set reaches the engine finite and in range.
@Suite("SSML found by fuzzing", .serialized)
struct SSMLFuzzTests {
    func volumeScales(_ ssml: String) async throws -> [Double] {
        try await sharedPronouncer.plan(ssml: ssml, defaultVoice: "en").segments.map(\.options.volumeScale)
    }

    /// fuzz-ssml, "volume scale -nan": a huge dB value was an infinite scale, and inside
    /// `volume="silent"` 0 × ∞, a NaN that trapped the engine's conversion to an Int (a dead daemon).
    @Test func hugeDecibelsInsideSilenceStaySilent() async throws {
        #expect(try await volumeScales(#"<speak><prosody volume="silent"><prosody volume="+999999999dB">a</prosody></prosody></speak>"#) == [0])
        #expect(try await volumeScales(#"<speak><prosody volume="+999999999dB">a</prosody></speak>"#) == [2])
        #expect(try await volumeScales(#"<speak><prosody volume="-999999999dB">a</prosody></speak>"#).allSatisfy { $0 >= 0 && $0 < 1e-9 })
        #expect(try await volumeScales(#"<speak><prosody volume="+6dB">a</prosody></speak>"#).allSatisfy { abs($0 - 1.995) < 0.01 })
    }
}
