import A11yCore
import CEspeakNG

extension EspeakSession {
    /// Renders `request` segment after segment, yielding chunks from the synth callback as
    /// libespeak-ng produces them, then finishes the stream (or fails it).
    func synthesize(
        _ request: SynthesisRequest,
        into continuation: SynthesisContext.Continuation,
        cancellation: CancellationFlag
    ) {
        guard let sampleRate else {
            continuation.finish(throwing: SpeechError(.engineFailed, "eSpeak-NG is not initialized"))
            return
        }
        let context = SynthesisContext(
            continuation: continuation, cancellation: cancellation, sampleRate: sampleRate)
        do {
            try withExtendedLifetime(context) {
                let userData = Unmanaged.passUnretained(context).toOpaque()
                for segment in request.segments {
                    if context.isCancelled { break }
                    try selectVoice(segment.voice)
                    setParameters(rate: request.rate, pitch: request.pitch, volume: request.volume)
                    context.beginSegment(segment)
                    let input: String
                    var flags = UInt32(espeakCHARS_UTF8)
                    switch segment.content {
                    case .text(let text):
                        // Plain UTF-8 only: no SSML, no phoneme input, so markup is read literally.
                        input = text
                    case .phonemes(let mnemonics):
                        input = "[[" + mnemonics + "]]"
                        flags |= UInt32(espeakPHONEMES)
                    }
                    let size = input.utf8.count + 1
                    let status = input.withCString { text in
                        espeak_Synth(
                            text, size, 0, POS_CHARACTER, 0, flags, nil, userData)
                    }
                    guard status == EE_OK else {
                        throw SpeechError(.engineFailed, "espeak_Synth failed (\(status.rawValue))")
                    }
                    context.endSegment()
                }
            }
            context.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }
}
