// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Logging
import Synchronization

/// Every engine a11yd speaks with, as one `SpeechEngine` and `PronunciationEngine`: eSpeak-NG
/// (always) and Piper (when its runtime and voices are installed; docs/voices.md).
///
/// An utterance goes to the engine of its segments' voices; one that mixes them (a French span in
/// an English item said by the natural voice) is said run by run, in order, as one stream whose
/// frames count from the start of the utterance, so its words and marks stay where they are heard.
/// eSpeak answers every phoneme question, for a Piper voice in the eSpeak voice its model was trained
/// on: Piper reads IPA, which a11yd gets from eSpeak for a segment of eSpeak mnemonics.
public final class EngineRouter: SpeechEngine, PronunciationEngine {
    public let espeak: any SpeechEngine & PronunciationEngine
    /// nil while no Piper runtime is installed.
    let piper: Mutex<(any SpeechEngine)?>
    /// Where a Piper engine comes from once its runtime is installed (a reload after the install).
    private let piperSource: (any PiperSource)?
    /// Piper's voices, including those that cannot speak (`VoiceInfo.problem`): found again on reload.
    private let piperVoices: Mutex<[PiperVoice]>
    /// The configured voice per language (`[voices]`), tried before eSpeak's own choice.
    private let configured: Mutex<VoiceCatalog>
    /// The short utterances said last, replayed without an engine (`EngineRouter+Memory.swift`).
    let memory: Mutex<SpeechMemory>
    /// The characters a screen reader echoes, said ahead in the natural voice (`EngineRouter+Echoes.swift`);
    /// `echoesAhead` false: none are.
    let echoes: Mutex<EchoMemory>
    let echoesAhead: Bool
    let echoRendering = Mutex(EchoRendering())
    /// Says when the echoes said ahead at new settings are ready, and what they take.
    let logger: Logger

    public var format: AudioFormat { espeak.format }

    /// `memory` bounds what is kept of short utterances said (nil: `SpeechMemory.Limits.standard`);
    /// `echoes`, the characters said ahead in the natural voice (nil: none are).
    /// Without `piper`, `piperSource` is asked for one at each reload.
    public init(
        espeak: any SpeechEngine & PronunciationEngine, piper: (any SpeechEngine)?, piperVoices: [PiperVoice],
        piperSource: (any PiperSource)? = nil, memory: SpeechMemory.Limits? = nil, echoes: EchoMemory.Limits? = nil,
        logger: Logger = Logger(label: "a11yd.engines", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.logger = logger
        self.espeak = espeak
        self.piper = Mutex(piper)
        self.piperSource = piperSource
        self.piperVoices = Mutex(piperVoices)
        self.configured = Mutex(VoiceCatalog([]))
        self.memory = Mutex(SpeechMemory(limits: memory ?? .standard(sampleRate: espeak.format.sampleRate)))
        self.echoes = Mutex(EchoMemory(limits: echoes ?? EchoMemory.Limits(bytes: 0)))
        self.echoesAhead = echoes != nil
    }

    /// The Piper voices found now (on SIGHUP: a voice the user dropped in a folder speaks without a
    /// restart), the Piper engine if its runtime was installed since, and the configured voice per
    /// language checked against them. Returns what the log should say of the defaults that name no
    /// voice that can speak.
    public func reload(piperVoices found: [PiperVoice], defaults: [(language: String, voice: String)]) async -> [(language: String, voice: String)] {
        if piper.withLock({ $0 == nil }), let started = piperSource?.startEngine() {
            piper.withLock { $0 = $0 ?? started }
        }
        piperVoices.withLock { $0 = found }
        // A model may have been replaced under its old name.
        memory.withLock { $0.forgetAll() }
        forgetEchoes()
        return await setDefaultVoices(defaults)
    }

    private func piperVoice(_ identifier: String) -> PiperVoice? {
        piperVoices.withLock { voices in voices.first { $0.identifier == identifier } }
    }

    /// The configured default voice per language tag ("en" → "piper:en_US-joe-medium"); those that
    /// name no voice a11yd has are left out and returned, for the log.
    @discardableResult
    func setDefaultVoices(_ table: [(language: String, voice: String)]) async -> [(language: String, voice: String)] {
        let known = Set(await voices().filter { $0.problem == nil }.map(\.identifier))
        var kept: [VoiceEntry] = [], unknown: [(language: String, voice: String)] = []
        for (language, voice) in table {
            if known.contains(voice) {
                let tag = LanguageTag.normalized(language) ?? language
                kept.append(VoiceEntry(info: VoiceInfo(identifier: voice, name: voice, languages: [tag]), priorities: [0]))
            } else {
                unknown.append((language, voice))
            }
        }
        configured.withLock { $0 = VoiceCatalog(kept) }
        return unknown
    }

    // MARK: - SpeechEngine

    public func voices() async -> [VoiceInfo] {
        let runtimeProblem = piperRuntimeProblem
        return await espeak.voices() + piperVoices.withLock { $0.map(\.info) }.map { voice in
            guard let runtimeProblem, voice.problem == nil else { return voice }
            var unavailable = voice
            unavailable.problem = runtimeProblem
            return unavailable
        }
    }

    /// Why no Piper voice can speak for want of its runtime, in words that stay true: not installed,
    /// or installed since a11yd started and waiting for a reload. Nil with the runtime in use.
    var piperRuntimeProblem: String? {
        guard piper.withLock({ $0 == nil }) else { return nil }
        if piperSource?.runtimeIsInstalled == true {
            return "the Piper runtime was installed after a11yd started: reload a11yd (systemctl --user reload a11yd, or pkill -HUP -x a11yd)"
        }
        return "the Piper runtime is not installed (a11yd-install-voices)"
    }

    public func resolveVoice(language: String) async throws -> String {
        if let voice = try? configured.withLock({ try $0.resolve(language: language) }) { return voice }
        return try await espeak.resolveVoice(language: language)
    }

    /// A short utterance said before is replayed from `memory`; one that may be kept is kept once
    /// its engine has said it whole.
    public func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        // In the natural voice, an echo said ahead is replayed; anything else is speech, which the
        // rendering of echoes at its settings (begun now if they are new) yields to.
        guard let settings = echoSettings(of: request) else { return recalledOrSaid(request) }
        let echo = EchoMemory.echo(of: request, isSlow: saysEchoesAhead)
        if let echo, let said = echoes.withLock({ $0.recall(echo) }) {
            return Self.replaying(said)
        }
        let speech = countedAsSpeech(recalledOrSaid(request))
        renderEchoes(at: echoes.withLock { $0.settingsToRender(settings, echo: echo) })
        return speech
    }

    /// `request` from `memory` when said before, else from its engine, and kept.
    private func recalledOrSaid(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        // A long text is not even looked up: hashing it would cost more than it could save.
        guard memory.withLock({ $0.mayKeep(request) }) else { return routed(request) }
        if let said = memory.withLock({ $0.recall(request) }) { return Self.replaying(said) }
        return remembering(routed(request), of: request)
    }

    /// The engine (or engines, run by run) that says `request`.
    func routed(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        let runs = Self.runs(of: request.segments)
        // The common case goes straight through: nothing between the engine and the player.
        if runs.count <= 1, runs.first?.engine ?? .espeak == .espeak {
            return espeak.synthesize(request)
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SynthesisChunk.self, throwing: (any Error).self)
        let task = Task {
            do {
                // Each engine counts frames from the start of what it was given: a run's words and
                // marks move by what the runs before it said, never by its own earlier chunks.
                var runStart = 0
                let (segments, namedAt) = try await punctuationNamed(piperSegments(request.segments))
                for run in Self.runs(of: segments) {
                    var part = request
                    part.segments = run.segments
                    let engine: any SpeechEngine
                    switch run.engine {
                    case .espeak:
                        engine = espeak
                    case .piper:
                        guard let piper = self.piper.withLock({ $0 }) else {
                            throw SpeechError(.engineFailed, "a Piper voice cannot speak: \(self.piperRuntimeProblem ?? "no engine")")
                        }
                        engine = piper
                    }
                    var said = 0
                    for try await var chunk in engine.synthesize(part) {
                        // eSpeak tells no word for the punctuation it names: nor does the natural voice.
                        if !namedAt.isEmpty { chunk.words.removeAll { namedAt.contains($0.start) } }
                        continuation.yield(Self.shifted(chunk, by: runStart))
                        said += chunk.samples.count
                    }
                    runStart += said
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Consecutive segments of one engine.
    struct Run: Equatable {
        var engine: SpeechEngineName
        var segments: [SpeechSegment]
    }

    static func runs(of segments: [SpeechSegment]) -> [Run] {
        var runs: [Run] = []
        for segment in segments {
            let engine = SpeechEngineName(voice: segment.voice)
            if runs.last?.engine == engine {
                runs[runs.count - 1].segments.append(segment)
            } else {
                runs.append(Run(engine: engine, segments: [segment]))
            }
        }
        return runs
    }

    static func shifted(_ chunk: SynthesisChunk, by offset: Int) -> SynthesisChunk {
        guard offset != 0 else { return chunk }
        var shifted = chunk
        for index in shifted.words.indices { shifted.words[index].frame += offset }
        for index in shifted.marks.indices { shifted.marks[index].frame += offset }
        return shifted
    }

    /// Piper reads IPA where eSpeak reads its mnemonics: eSpeak says what IPA its mnemonics are,
    /// in the eSpeak voice the Piper model was trained on.
    private func piperSegments(_ segments: [SpeechSegment]) async throws -> [SpeechSegment] {
        var converted = segments
        for index in converted.indices where SpeechEngineName(voice: converted[index].voice) == .piper {
            guard case .phonemes(let mnemonics) = converted[index].content else { continue }
            let ipa = try await espeak.ipa(ofMnemonics: mnemonics, voice: espeakVoice(for: converted[index].voice))
            converted[index].content = .phonemes(ipa)
        }
        return converted
    }

    /// Piper segments that speak their punctuation, split so that each character is named as eSpeak
    /// names it (piper-tts's eSpeak cannot): in the Piper voice where eSpeak's dictionary gives the
    /// name (`!`, `€`, `@`…), else by eSpeak itself in the model's eSpeak voice (`,` `.` `?` `;` `:` `-`,
    /// which eSpeak names only while it speaks, never when asked for phonemes).
    /// Also returns where in the client's text each character named in the Piper voice stands.
    private func punctuationNamed(_ segments: [SpeechSegment]) async throws -> (segments: [SpeechSegment], namedAt: Set<Int>) {
        var result: [SpeechSegment] = []
        var namedAt: Set<Int> = []
        for segment in segments {
            guard SpeechEngineName(voice: segment.voice) == .piper, !Self.namedPunctuation(in: segment).isEmpty else {
                var said = segment
                // Nothing to name: the worker is not asked for what it cannot do.
                if SpeechEngineName(voice: segment.voice) == .piper { said.options.punctuation = false }
                result.append(said)
                continue
            }
            let voice = espeakVoice(for: segment.voice)
            var names: [Character: String] = [:]
            for character in Self.namedPunctuation(in: segment) where names[character] == nil {
                names[character] = try await espeak.ipa(ofLetter: String(character), voice: voice)
            }
            let parts = Self.punctuationSaid(in: segment, espeakVoice: voice) { names[$0] ?? "" }
            for part in parts where part.voice == segment.voice {
                if case .phonemes = part.content { namedAt.insert(part.sourceStart) }
            }
            result += parts
        }
        return (result, namedAt)
    }

    /// The characters of a text segment that is to speak its punctuation by name: punctuation and
    /// symbols (what eSpeak's `espeakPUNCTUATION` names); none for any other segment.
    static func namedPunctuation(in segment: SpeechSegment) -> [Character] {
        guard segment.options.punctuation, !segment.options.spellOut, case .text(let text) = segment.content else { return [] }
        return text.filter { $0.isPunctuation || $0.isSymbol }
    }

    /// A Piper text segment that speaks its punctuation, as segments Piper can say: the text between,
    /// each character whose name eSpeak's dictionary gives as the IPA of that name (`name`), and each
    /// other one as itself, said by eSpeak in `espeakVoice` with its punctuation spoken; each where it
    /// stands in the client's text, so that its word event is its own. The segment's pause and mark
    /// stay with the first part. Any other segment is returned as it is.
    static func punctuationSaid(in segment: SpeechSegment, espeakVoice: String, name: (Character) -> String) -> [SpeechSegment] {
        guard !namedPunctuation(in: segment).isEmpty, case .text(let text) = segment.content else { return [segment] }
        var parts: [SpeechSegment] = []
        var pending = "", pendingStart = 0, offset = 0
        // Offsets are the client's only when the text is its own, scalar for scalar.
        let exact = text.unicodeScalars.count == segment.sourceLength
        func place(_ content: SpeechSegment.Content, at start: Int, length: Int, byESpeak: Bool = false) {
            var part = segment
            part.content = content
            part.options.punctuation = byESpeak
            if byESpeak { part.voice = espeakVoice }
            if exact {
                part.sourceStart = segment.sourceStart + start
                part.sourceLength = length
            }
            if !parts.isEmpty {
                part.options.pauseBeforeMilliseconds = 0
                part.options.markBefore = nil
            }
            parts.append(part)
        }
        func flush() {
            if !pending.allSatisfy(\.isWhitespace) {
                place(.text(pending), at: pendingStart, length: pending.unicodeScalars.count)
            }
            pending = ""
        }
        for character in text {
            let length = character.unicodeScalars.count
            if character.isPunctuation || character.isSymbol {
                flush()
                let ipa = name(character)
                if ipa.isEmpty {
                    place(.text(String(character)), at: offset, length: length, byESpeak: true)
                } else {
                    place(.phonemes(ipa), at: offset, length: length)
                }
            } else {
                if pending.isEmpty { pendingStart = offset }
                pending.append(character)
            }
            offset += length
        }
        flush()
        return parts.isEmpty ? [segment] : parts
    }

    // MARK: - PronunciationEngine: eSpeak answers, for a Piper voice in its model's eSpeak voice

    /// The eSpeak voice that phonemises for `voice` (itself when it is eSpeak's).
    func espeakVoice(for voice: String) -> String {
        piperVoice(voice).map(\.espeakVoice) ?? voice
    }

    public func phonemeInventory(voice: String) async throws -> [PhonemeEntry] {
        try await espeak.phonemeInventory(voice: espeakVoice(for: voice))
    }

    public func allMnemonics() async throws -> [String] {
        try await espeak.allMnemonics()
    }

    public func ipa(ofText text: String, voice: String) async throws -> String {
        try await espeak.ipa(ofText: text, voice: espeakVoice(for: voice))
    }

    public func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String {
        try await espeak.ipa(ofMnemonics: mnemonics, voice: espeakVoice(for: voice))
    }

    public func ipa(ofLetter character: String, voice: String) async throws -> String {
        try await espeak.ipa(ofLetter: character, voice: espeakVoice(for: voice))
    }
}

/// Where a Piper engine comes from when its runtime is installed while a11yd runs.
public protocol PiperSource: Sendable {
    /// Whether a Piper runtime is installed now.
    var runtimeIsInstalled: Bool { get }
    /// The engine of the runtime installed now, made (its worker starts with its first item); nil
    /// when none is installed, or it could not be made (said in the log).
    func startEngine() -> (any SpeechEngine)?
}
