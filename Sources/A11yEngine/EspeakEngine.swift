// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import CEspeakNG
import Logging
import Synchronization

/// eSpeak-NG (libespeak-ng, in process) behind `SpeechEngine`.
///
/// Every libespeak-ng call runs on one dedicated thread shared by the whole process
/// (`EspeakWorker`): requests from any number of tasks queue there and are served one at a time.
/// Synthesis runs about 1000x faster than real time and streams PCM while it is produced.
public final class EspeakEngine: SpeechEngine {
    public let format: AudioFormat
    private let logger: Logger
    let worker: EspeakWorker
    /// `resolveVoice` answers by normalised tag.
    private let resolved = Mutex(ResolvedVoices())
    /// The installed voices, listed once: they do not change under a running process, and eSpeak
    /// reads every voice file to list them.
    private let listed = Mutex<[VoiceEntry]?>(nil)

    /// Initializes libespeak-ng (once per process; later engines share it) in synchronous mode.
    /// - Parameter dataPath: the directory holding `espeak-ng-data`, or nil for the default.
    /// - Throws: `SpeechError(.engineFailed)` when libespeak-ng cannot start.
    public init(dataPath: String? = nil, logger: Logger) throws {
        self.logger = logger
        self.worker = EspeakWorker.shared
        let rate = try worker.runAndWait { session in try session.initialize(dataPath: dataPath) }
        self.format = AudioFormat(sampleRate: rate, channels: 1)
        logger.debug("eSpeak-NG ready", metadata: ["format": "\(format)"])
    }

    public func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: SynthesisChunk.self, throwing: (any Error).self)
        let cancellation = CancellationFlag()
        continuation.onTermination = { _ in cancellation.cancel() }
        synthesize(request, into: SynthesisSink(continuation), cancellation: cancellation)
        return stream
    }

    /// Queues `request` behind what the eSpeak thread already has and returns at once; the chunks
    /// then go to `sink` from that thread. What the engine worker process serves its channel with.
    public func synthesize(_ request: Utterance, into sink: SynthesisSink, cancellation: CancellationFlag) {
        worker.submit { session in
            // Dropped while still queued: don't start it.
            if cancellation.isCancelled {
                sink.finish()
                return
            }
            session.synthesize(request, into: sink, cancellation: cancellation)
        }
    }

    /// The `espeak-ng-data` folder libespeak-ng would read (`ESPEAK_DATA_PATH`, else `$HOME`, else
    /// its built-in folder), found without loading anything from it, or nil if none is named.
    /// Only before any `EspeakEngine` exists, on the only thread that has touched libespeak-ng (the
    /// engine worker's main thread, before Landlock and before eSpeak's thread starts: that
    /// thread's creation orders this write to the library's path before its own reads).
    public static func installedDataFolder() -> String? {
        espeak_ng_InitializePath(nil)
        var path: UnsafePointer<CChar>?
        _ = espeak_Info(&path)
        guard let path, path.pointee != 0 else { return nil }
        return String(cString: path)
    }

    /// The `espeak-ng-data` folder libespeak-ng reads (its voices, dictionaries, phoneme tables).
    public func dataFolder() throws -> String {
        try worker.runAndWait { session in try session.dataFolder() }
    }

    public func voices() async -> [VoiceInfo] {
        (try? await voiceEntries().map(\.info)) ?? []
    }

    public func resolveVoice(language: String) async throws -> String {
        let tag = VoiceCatalog.normalize(language: language)
        if let known = resolved.withLock({ $0[tag: tag] }) { return known }
        let voice = try VoiceCatalog(try await voiceEntries()).resolve(language: language)
        resolved.withLock { $0.remember(voice, for: tag) }
        logger.debug("resolved voice", metadata: ["language": "\(language)", "voice": "\(voice)"])
        return voice
    }

    /// Every installed voice with its languages' priorities (what the engine worker sends a11yd).
    public func voiceEntries() async throws -> [VoiceEntry] {
        if let known = listed.withLock({ $0 }) { return known }
        let entries = try await worker.run { session in try session.voices() }
        listed.withLock { $0 = entries }
        return entries
    }
}

extension EspeakEngine {
    /// `espeak_TextToPhonemes`: eSpeak's mnemonics (`ipa: false`, what `.phonemes` segments take)
    /// or IPA for `text` as `voice` says it, clauses joined by spaces; `separator` between
    /// phonemes (nil for none); `phonemeInput`: whether `[[…]]` in `text` is read as mnemonics
    /// (as `.phonemes` segments are spoken) or as text.
    public func phonemes(
        for text: String, voice: String, ipa: Bool = false, separator: Unicode.Scalar? = nil, phonemeInput: Bool = false
    ) async throws -> String {
        try await worker.run { session in
            try session.textToPhonemes(
                text, voice: voice, ipa: ipa, separator: separator, phonemeInput: phonemeInput)
        }
    }
}
