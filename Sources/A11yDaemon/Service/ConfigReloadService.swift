// SPDX-License-Identifier: GPL-3.0-or-later
import A11yEngineWorker
import Logging
import ServiceLifecycle
import UnixSignals

/// Re-reads the configuration on SIGHUP; a bad file keeps the running configuration.
final class ConfigReloadService: Service {
    private let path: String
    private let explicit: Bool
    private let speech: SpeechService
    /// Its Piper voices are looked for again, and `[voices]` checked against them.
    private let engines: EngineRouter
    private let environment: [String: String]
    private let logger: Logger
    /// After each reload that changed the configuration (idle exit looks at its setting again).
    private let onChange: @Sendable () -> Void

    init(
        path: String, explicit: Bool, speech: SpeechService, engines: EngineRouter, environment: [String: String], logger: Logger,
        onChange: @escaping @Sendable () -> Void = {}
    ) {
        self.path = path
        self.explicit = explicit
        self.speech = speech
        self.engines = engines
        self.environment = environment
        self.logger = logger
        self.onChange = onChange
    }

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                await self.reload()
            }
        }
    }

    func reload() async {
        reloadConfiguration()
        await Self.reloadVoices(engines, configuration: speech.currentConfiguration, environment: environment, logger: logger)
        let problems = speech.reloadLexicon()
        if problems.isEmpty {
            logger.notice("lexicon reloaded")
        }
        for problem in problems {
            logger.error("lexicon file not reloaded; keeping its last good version", metadata: ["problem": "\(problem)"])
        }
    }

    /// At start and on each SIGHUP: the Piper voices in the data folders, and the configured voice
    /// per language; what cannot speak is logged.
    static func reloadVoices(_ engines: EngineRouter, configuration: DaemonConfiguration, environment: [String: String], logger: Logger) async {
        let voices = PiperVoices.scan(PiperVoices.folders(environment: environment))
        for voice in voices {
            if let problem = voice.problem {
                logger.error("Piper voice cannot speak", metadata: ["voice": "\(voice.identifier)", "problem": "\(problem)"])
            }
        }
        if !voices.isEmpty {
            logger.info("Piper voices", metadata: ["voices": "\(voices.map(\.name).joined(separator: ", "))"])
        }
        for unknown in await engines.reload(piperVoices: voices, defaults: configuration.voices.map { ($0.language, $0.voice) }) {
            logger.error(
                "[voices] names a voice a11yd does not have or that cannot speak; eSpeak's choice says that language",
                metadata: ["language": "\(unknown.language)", "voice": "\(unknown.voice)"])
        }
    }

    private func reloadConfiguration() {
        let old = speech.currentConfiguration
        do {
            let new = try DaemonConfiguration.load(path: path, mustExist: explicit)
            speech.update(new)
            let changes = new.changes(from: old)
            let applied = changes.filter { $0.takesEffectAtOnce }.map(\.description)
            let later = changes.filter { !$0.takesEffectAtOnce }.map(\.description)
            var metadata: Logger.Metadata = ["path": "\(path)", "applied": "\(applied.isEmpty ? "nothing" : applied.joined(separator: "; "))"]
            if !later.isEmpty { metadata["at_next_start"] = "\(later.joined(separator: "; "))" }
            logger.notice("configuration reloaded", metadata: metadata)
            if !changes.isEmpty { onChange() }
        } catch {
            logger.error("configuration not reloaded; keeping the running one", metadata: ["error": "\(error)"])
        }
    }
}
