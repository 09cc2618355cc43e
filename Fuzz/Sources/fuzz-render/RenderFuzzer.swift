// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import A11yEngineWorker
import A11yPronunciation
import A11yProtocol
import FuzzSupport
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The engine path as `render` takes it in a11yd, against the engine worker: a post (text, text
/// with spans, or SSML) checked as the daemon checks it, planned by the pronouncer (whose phoneme
/// look-ups are questions to the worker), its settings mapped as the daemon maps them, and
/// synthesized by the worker, every answer and chunk crossing the frame protocol both ways. One
/// mode in four hands the engine raw settings instead (huge, negative): nothing may trap on any Int.
/// The worker is this very program started with `--engine-worker` (as a11yd starts itself), in
/// the same sandbox; libFuzzer drives a11yd's side.
///
/// Invariants: a refusal is a `SpeechError`; the worker never dies nor hangs (a11yd would survive
/// it, but it is a finding in libespeak-ng or the worker); synthesis ends; word marks point inside
/// the utterance's text; every SSML mark is reported once; at most ~2 minutes of audio.
@main enum Fuzzer {
    static func main() {
        if CommandLine.arguments.dropFirst().first == "--engine-worker" { EngineWorkerProcess.run(dataFolder: nil) }
        runFuzzer(fuzzRender)
    }
}

func fuzzRender(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.byte() % 4
    let language = languages[Int(input.byte()) % languages.count]
    let settingsByte = input.byte()
    let spanBytes = (0..<6).map { _ in input.byte() }
    let raw = (input.int(), input.int(), input.int())
    let text = input.restAsString()
    blocking { await render(mode: mode, language: language, settingsByte: settingsByte, spanBytes: spanBytes, raw: raw, text: text) }
    return 0
}

let languages: [String?] = [nil, "fr", "en-us", "de", "pt-BR", "ja", "xx-unknown", "cs"]
let ipas = ["bɔ̃ʒuʁ", "ˈhɛloʊ", "ʃ", "a.b", "ʀʁr", "ɐ̃w̃", "²anden", "ts͡ʃ", "ˈˈ", "k:"]
/// What tells eSpeak where its data is, as a11yd passes it to its worker.
let environment = WorkerEngine.passedEnvironment.reduce(into: [String: String]()) { environment, name in
    if let value = getenv(name) { environment[name] = String(cString: value) }
}
let engine: WorkerEngine = blocking {
    // The worker may not start in process: a finding must be the worker's.
    try! await WorkerEngine.start(
        .espeak(environment: environment, inProcess: .never), logger: Logger(label: "a11yd.fuzz"))
}
let pronouncer = Pronouncer(engine: engine)

/// A failure that is the worker's death or hang, not a refusal: what a11yd reports when it had to
/// replace its worker (`WorkerSupervisor.failed`), or when a text already cost it workers.
func requireTheWorkerLived(_ error: SpeechError) {
    require(!(error.code == .engineFailed && (error.message.contains("its worker") || error.message.hasPrefix("refused:"))),
            "the engine worker died or hung: \(error.message)")
}

func render(mode: UInt8, language: String?, settingsByte: UInt8, spanBytes: [UInt8], raw: (Int, Int, Int), text: String) async {
    var post: Post
    switch mode {
    case 2:
        post = Post(ssml: text)
    default:
        post = Post(text: text)
        if mode == 1 {
            let count = text.unicodeScalars.count
            var spans: [SpeechSpan] = []
            for pair in stride(from: 0, to: spanBytes.count, by: 3) where count > 0 {
                let start = Int(spanBytes[pair]) % count
                let length = 1 + Int(spanBytes[pair + 1]) % (count - start)
                let kind = spanBytes[pair + 2]
                var span = SpeechSpan(start: start, length: length)
                switch kind % 4 {
                case 0: span.ipa = ipas[Int(kind / 4) % ipas.count]
                case 1: span.lang = languages[Int(kind / 4) % languages.count] ?? "en"
                case 2: span.spellOut = true
                default: span.punctuation = true
                }
                spans.append(span)
            }
            post.spans = spans
        }
    }
    post.lang = language
    if settingsByte & 1 != 0 { post.rate = Double(settingsByte >> 1) / 100 }
    if settingsByte & 2 != 0 { post.pitch = 0.5 + Double(settingsByte >> 2) / 40 }
    if settingsByte & 4 != 0 { post.volume = Double(settingsByte >> 3) / 30 }

    let utterance: Utterance
    do {
        let request = try post.speechRequest()
        utterance = try await plan(request, raw: mode == 3 ? raw : nil)
    } catch let error as SpeechError {
        require(!error.message.isEmpty, "a refusal without a message")
        requireTheWorkerLived(error)
        return
    } catch {
        require(false, "a refusal that is not a SpeechError: \(error)")
        return
    }
    let length = utterance.text.unicodeScalars.count
    var samples = 0
    var marks: [String] = []
    do {
        for try await chunk in engine.synthesize(utterance) {
            samples += chunk.samples.count
            for word in chunk.words {
                require(word.start >= 0 && word.length >= 0 && word.start <= length - word.length,
                        "word \(word) outside the text of \(length) scalars")
            }
            marks += chunk.marks.map(\.name)
            require(samples <= engine.format.sampleRate * 180, "more than 3 minutes of audio")
        }
    } catch let error as SpeechError {
        require(!error.message.isEmpty, "a failure without a message")
        requireTheWorkerLived(error)
        return
    } catch {
        require(false, "synthesis failed with a non-SpeechError: \(error)")
    }
    let planned = utterance.segments.compactMap(\.options.markBefore)
    require(marks == planned, "marks \(marks) reported for \(planned)")
}

/// `UtterancePlanner.plan` without the daemon's configuration: English by default, the default
/// voice settings (rate 175, pitch 50, volume 100) mapped as `SpeechSettings` maps them.
func plan(_ request: SpeechRequest, raw: (Int, Int, Int)?) async throws -> Utterance {
    let voice = try await engine.resolveVoice(language: request.language ?? "en")
    let plan: SpeechPlan
    switch request.content {
    case .ssml(let ssml): plan = try await pronouncer.plan(ssml: ssml, defaultVoice: voice)
    case .text(let text, let spans): plan = try await pronouncer.plan(text: text, spans: spans, defaultVoice: voice)
    case .element: preconditionFailure("not fuzzed here")
    }
    if let raw {
        return Utterance(text: plan.spokenText, segments: plan.segments, rate: raw.0, pitch: raw.1, volume: raw.2)
    }
    let rate = request.rate.map { r in
        r <= 0.5 ? Int((80 + 95 * r / 0.5).rounded()) : Int((175 + 275 * (r - 0.5) / 0.5).rounded())
    } ?? 175
    let pitch = request.pitch.map { p in
        let octaves = p.octaves
        return min(100, max(0, Int((octaves < 0 ? 50 * (1 + octaves) : 50 + 50 * octaves).rounded())))
    } ?? 50
    let volume = request.volume.map { Int((100 * $0).rounded()) } ?? 100
    return Utterance(text: plan.spokenText, segments: plan.segments, rate: rate, pitch: pitch, volume: volume)
}
