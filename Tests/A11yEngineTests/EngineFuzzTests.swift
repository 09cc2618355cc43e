import A11yCore
import A11yEngine
import Testing

/// What the render fuzzer (Fuzz/, docs/fuzzing.md) caught, kept as tests: `EspeakEngine` is a
/// public API and takes any Int and any scale without trapping.
extension EngineTests {
    @Suite struct EngineFuzzTests {
        /// fuzz-render: a rate of Int.max (or a scale that made the product pass Int.max, or NaN)
        /// trapped in "Double value cannot be converted to Int" inside synthesis.
        @Test func extremeSettingsAreClampedNotTrapped() async throws {
            let engine = try makeEngine()
            var wild = segment("bonjour", voice: "fr")
            wild.options.rateScale = .infinity
            wild.options.pitchScale = .nan
            wild.options.volumeScale = 1e300
            let loud = try await render(engine, Utterance(segments: [segment("bonjour", voice: "fr"), wild], rate: .max, pitch: .min, volume: .max))
            #expect(loud.rms > 1000, "spoken at the loudest volume")
            // Volume 0: silence, which the engine trims away; what matters is that it ends.
            _ = try await render(engine, Utterance(segments: [segment("bonjour", voice: "fr"), wild], rate: .min, pitch: .max, volume: .min))
        }
    }
}
