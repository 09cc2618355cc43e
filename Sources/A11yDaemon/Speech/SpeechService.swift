import A11yCore
import A11yPronunciation
import A11yProtocol
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The playback service: owns the coordinator, turns requests into items, routes events.
public final class SpeechService: Service {
    public let coordinator: SpeechCoordinator
    public let router: EventRouter
    let engine: any SpeechEngine
    /// IPA, language, spell-out and punctuation spans; nil where the engine is not eSpeak-NG (tests with fakes).
    let pronouncer: Pronouncer?
    private let configuration: Mutex<DaemonConfiguration>
    /// Events taken from the coordinator and handed to the router, for `stopAll` to wait on.
    private let routedEventCount = Mutex(0)
    private let environment: [String: String]
    private let logger: Logger

    public init(
        engine: any SpeechEngine, output: any AudioOutput, configuration: DaemonConfiguration,
        pronouncer: Pronouncer? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger
    ) {
        self.pronouncer = pronouncer
        var settings = SpeechCoordinator.Configuration()
        settings.pendingLimit = configuration.queueLimit
        settings.earcon = configuration.earcon
        self.coordinator = SpeechCoordinator(engine: engine, output: output, configuration: settings)
        self.router = EventRouter()
        self.engine = engine
        self.configuration = Mutex(configuration)
        self.environment = environment
        self.logger = logger
    }

    public var currentConfiguration: DaemonConfiguration { configuration.withLock { $0 } }

    /// Applies a reloaded configuration to what comes next (voice defaults; the queue limit and
    /// earcon take effect at the next start).
    public func update(_ new: DaemonConfiguration) {
        configuration.withLock { $0 = new }
    }

    public func run() async throws {
        // Events flow until the coordinator is shut down by the socket server's shutdown, which
        // must deliver every final `finished` before connections close.
        await cancelWhenGracefulShutdown {
            for await event in self.coordinator.events {
                await self.router.route(event)
                self.routedEventCount.withLock { $0 += 1 }
                if case .finished(let id, _, let reason, let message) = event {
                    self.logger.debug("finished", metadata: ["utterance": "\(id)", "reason": "\(reason)", "message": "\(message ?? "")"])
                }
            }
        }
    }

    /// Stops every item (each gets `finished` with reason `stopped`), and routes those events.
    public func stopAll() async {
        await coordinator.shutDown()
        // Every `finished` that shutDown emitted must reach the router before connections close.
        let emitted = await coordinator.emittedEventCount
        let deadline = ContinuousClock.now + .seconds(2)
        while routedEventCount.withLock({ $0 }) < emitted, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    // MARK: - Building items

    /// The voice to use when a post names no language: config, else the locale, else English.
    func defaultLanguage() -> String {
        if let language = currentConfiguration.voice.language { return language }
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[key], !value.isEmpty { return value }
        }
        return "en"
    }

    /// What a request will say and how: the same path for speaking, `pronounce` and `render`.
    struct Utterance: Sendable {
        var text: String
        var synthesis: SynthesisRequest
    }

    /// Resolves the voice, composes elements, applies spans, translates SSML.
    /// Throws `SpeechError` (`unknown_voice`, `invalid_ipa`, `invalid_request`, …).
    func utterance(for request: ClientRequest) async throws -> Utterance {
        let language = request.lang ?? defaultLanguage()
        let voice: String
        do {
            voice = try await engine.resolveVoice(language: language)
        } catch let error as SpeechError where request.lang == nil {
            // A locale eSpeak does not know must not silence the daemon: fall back to English.
            logger.warning("no voice for the default language; using English", metadata: ["language": "\(language)", "error": "\(error.message)"])
            voice = try await engine.resolveVoice(language: "en")
        }
        let settings = SpeechSettings(voice: currentConfiguration.voice, rate: request.rate, pitch: request.pitch, volume: request.volume)
        if let ssml = request.ssml {
            // Translated by us into segments; never handed to eSpeak as markup.
            let plan = try await requirePronouncer().plan(ssml: ssml, defaultVoice: voice)
            return Utterance(
                text: plan.spokenText,
                synthesis: SynthesisRequest(segments: plan.segments, rate: settings.rate, pitch: settings.pitch, volume: settings.volume))
        }
        let text: String
        if let element = request.element {
            text = element.utterance(language: request.lang ?? language)
            if text.isEmpty { throw SpeechError(.invalidRequest, "'element' has nothing to say (no label, value, traits or hint)") }
        } else {
            text = request.text ?? ""
        }
        var segments = [SpeechSegment(content: .text(text), voice: voice, sourceStart: 0, sourceLength: text.unicodeScalars.count)]
        if let spans = request.spans, !spans.isEmpty {
            segments = try await requirePronouncer().plan(text: text, spans: spans, defaultVoice: voice).segments
        }
        return Utterance(
            text: text,
            synthesis: SynthesisRequest(segments: segments, rate: settings.rate, pitch: settings.pitch, volume: settings.volume))
    }

    private func requirePronouncer() throws -> Pronouncer {
        guard let pronouncer else { throw SpeechError(.invalidRequest, "pronunciation features need the eSpeak-NG engine") }
        return pronouncer
    }

    /// Turns a validated `post` into an item with its own id.
    func makeItem(_ request: ClientRequest) async throws -> SpeechItem {
        let utterance = try await utterance(for: request)
        let kind = request.kind ?? .announcement
        return SpeechItem(
            id: await coordinator.makeID(), kind: kind, priority: request.priority, queued: request.queue ?? false,
            text: utterance.text, playsEarcon: kind == .screenChanged, synthesis: utterance.synthesis)
    }

    /// The IPA eSpeak-NG will actually pronounce for this request, without playing it.
    func pronunciation(of request: ClientRequest) async throws -> String {
        try await requirePronouncer().showIPA(try await utterance(for: request).synthesis.segments)
    }

    /// The request's audio, as it would be played (earcon excluded), without playing it.
    func render(_ request: ClientRequest) async throws -> (format: AudioFormat, samples: [Int16]) {
        let synthesis = try await utterance(for: request).synthesis
        var samples: [Int16] = []
        for try await chunk in engine.synthesize(synthesis) {
            samples += chunk.samples
            // About 2 minutes of audio is the most one reply carries.
            if samples.count > engine.format.sampleRate * 120 {
                throw SpeechError(.invalidRequest, "the utterance is longer than 2 minutes; render it in parts")
            }
        }
        return (engine.format, samples)
    }
}
