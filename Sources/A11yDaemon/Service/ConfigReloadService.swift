import Logging
import ServiceLifecycle
import UnixSignals

/// Re-reads the configuration on SIGHUP; a bad file keeps the running configuration.
final class ConfigReloadService: Service {
    private let path: String
    private let explicit: Bool
    private let speech: SpeechService
    private let logger: Logger
    /// After each reload that changed the configuration (idle exit looks at its setting again).
    private let onChange: @Sendable () -> Void

    init(path: String, explicit: Bool, speech: SpeechService, logger: Logger, onChange: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.explicit = explicit
        self.speech = speech
        self.logger = logger
        self.onChange = onChange
    }

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                self.reload()
            }
        }
    }

    func reload() {
        reloadConfiguration()
        let problems = speech.reloadLexicon()
        if problems.isEmpty {
            logger.notice("lexicon reloaded")
        }
        for problem in problems {
            logger.error("lexicon file not reloaded; keeping its last good version", metadata: ["problem": "\(problem)"])
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
