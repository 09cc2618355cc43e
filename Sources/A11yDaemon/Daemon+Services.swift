// SPDX-License-Identifier: GPL-3.0-or-later
import A11yAudio
import A11yConfiguration
import A11yCore
import A11yEngine
import A11yEngineWorker
import A11yJSONLines
import A11yPronunciation
import A11ySSIP
import A11ySystem
import Logging
import ServiceLifecycle
import SystemPackage

extension Daemon {
    /// What a11yd runs, wired once: by `run`, and by the tests' daemon inside their own process
    /// (Tests/A11yIntegrationTests/DaemonHarness.swift), which differs only by its options and
    /// configuration (eSpeak in process there, through `A11YD_ENGINE_IN_PROCESS=1`: `inProcessSwitch`).
    public struct Services {
        public let speech: SpeechService
        /// eSpeak's engine and Piper's, as the daemon speaks with them.
        public let engines: EngineRouter
        public let output: PulseOutput
        /// The front ends, config reload, heap trim, idle exit and speech, speech last.
        public let group: ServiceGroupConfiguration
        /// eSpeak's worker engine; nil with eSpeak in process (`inProcessSwitch`).
        let espeak: WorkerEngine?
        let piper: PiperStarter

        /// The engines' supervisors, for a daemon inside a test process to end their workers (a11yd's
        /// die with it): eSpeak's, and Piper's if its runtime was found, at start or at a reload.
        public var workerEngines: [WorkerEngine] { (espeak.map { [$0] } ?? []) + piper.engines }
    }

    /// `A11YD_ENGINE_IN_PROCESS=1` makes eSpeak in a11yd's own process its engine, and starts no
    /// worker (to rule the worker out; the tests' in-process daemon).
    public static let inProcessSwitch = "A11YD_ENGINE_IN_PROCESS"

    /// Builds every service of the daemon from `configuration` (read from `configPath`, beside
    /// which the user's lexicon lives) and `options`. Idle exit measures idle time on `idleExitClock`:
    /// a test's manual clock decides it without real waiting.
    public func services(
        configuration: DaemonConfiguration, configPath: String, idleExitClock: any Clock<Duration> = ContinuousClock()
    ) async throws -> Services {
        let (engine, espeak, piper) = try await speechEngine(configuration: configuration)
        await ConfigReloadService.reloadVoices(engine, configuration: configuration, environment: options.environment, logger: logger)
        // The user's pronunciations live beside the configuration file: lexicon.pls and lexicons/*.pls.
        let lexicon = LexiconStore(location: .init(configurationDirectory: FilePath(configPath).folder.string))
        for problem in lexicon.reload() {
            logger.error("lexicon file not used", metadata: ["problem": "\(problem)"])
        }
        let output = PulseOutput(
            server: configuration.audioServer, ducking: configuration.ducking(environment: options.environment), logger: logger)
        let speech = SpeechService(
            engine: engine, output: output, pronouncer: Pronouncer(engine: engine), lexicon: lexicon, configuration: configuration,
            environment: options.environment, logger: logger)

        let inherited = try SocketActivation.inherited(environment: options.environment)
        let listener = SocketActivation.jsonLinesListener(
            inherited,
            fallbackPath: SocketLocation.resolve(
                explicit: options.socketPath, configured: configuration.socketPath, environment: options.environment))
        SocketActivation.forgetInheritedEnvironment()
        let notifier = ServiceNotifier(environment: options.environment)
        // Before the front ends: they count their connections in its `connectionCount`.
        let idleExit = IdleExitService(speech: speech, logger: logger, clock: idleExitClock)
        let jsonLines = JSONLinesServer(
            listener: listener, allowedUIDs: configuration.allowedUIDs, connectionCount: idleExit.connectionCount,
            speech: speech, configuration: options.jsonLines, logger: logger
        ) {
            notifier.notify("READY=1")
        }
        var ssipConfiguration = SSIPServer.Configuration()
        ssipConfiguration.defaultPriority = configuration.ssipDefaultPriority
        let ssip = ssipListener(inherited, configuration: configuration).map { listener in
            SSIPServer(
                listener: listener, allowedUIDs: configuration.allowedUIDs, connectionCount: idleExit.connectionCount,
                speech: speech, configuration: ssipConfiguration, logger: logger)
        }
        let heapTrim = HeapTrimService(speech: speech)
        let reload = ConfigReloadService(
            path: configPath, explicit: options.configPath != nil, speech: speech, engines: engine, environment: options.environment,
            logger: logger
        ) {
            idleExit.reconsider()
        }

        var groupConfiguration = ServiceGroupConfiguration(
            services: [
                .init(service: jsonLines, successTerminationBehavior: .gracefullyShutdownGroup),
            ] + (ssip.map { [ServiceGroupConfiguration.ServiceConfiguration(service: $0)] } ?? []) + [
                .init(service: reload),
                .init(service: heapTrim),
                // Returns only when daemon.idle_exit_seconds elapsed idle: then stop like SIGTERM.
                .init(service: idleExit, successTerminationBehavior: .gracefullyShutdownGroup),
                // Last, so shut down first: every item gets its `finished` while connections are
                // open, and the front ends close them once those events are routed.
                .init(service: speech),
            ],
            gracefulShutdownSignals: [],  // `run` traps them and forwards them
            logger: logger)
        // A client that keeps its connection open (a screen reader's subscription, say) must not hold
        // the daemon up: once every item got its `finished`, cancel what is still waiting on a
        // connection. Well inside the unit's TimeoutStopSec=10.
        groupConfiguration.maximumGracefulShutdownDuration = Self.maximumGracefulShutdown
        return Services(speech: speech, engines: engine, output: output, group: groupConfiguration, espeak: espeak, piper: piper)
    }

    /// eSpeak-NG, and Piper beside it when its runtime is installed (`a11yd-install-voices`, `make
    /// voices`), now or later (found at a reload): its worker starts with the first Piper item, or at
    /// once if a language's configured voice is Piper's. Voices are found by
    /// `ConfigReloadService.reloadVoices`, at start and on SIGHUP. eSpeak speaks in its sandboxed
    /// worker, and in a11yd's own process while none can start (`EngineFallback`), or always with
    /// `A11YD_ENGINE_IN_PROCESS=1`; the log says what protection is missing. Also returns eSpeak's
    /// worker engine, if it has one.
    func speechEngine(configuration: DaemonConfiguration) async throws -> (EngineRouter, WorkerEngine?, PiperStarter) {
        let espeak: any SpeechEngine & PronunciationEngine, worker: WorkerEngine?
        do {
            if options.environment[Self.inProcessSwitch] == "1" {
                logger.notice("synthesis in process, not in a sandboxed worker", metadata: ["reason": "\(Self.inProcessSwitch)=1"])
                (espeak, worker) = (try EspeakEngine(logger: logger), nil)
            } else {
                let fallback = try await EngineFallback.espeak(.espeak(environment: options.environment), logger: logger)
                (espeak, worker) = (fallback, fallback.primary)
            }
        } catch {
            throw DaemonError.engineUnavailable("\(error)")
        }
        let starter = PiperStarter(
            environment: options.environment, format: espeak.format, idleSeconds: configuration.piperIdleSeconds, logger: logger)
        let preload = configuration.voices.first { SpeechEngineName(voice: $0.voice) == .piper }
            .map { String($0.voice.dropFirst(SpeechEngineName.piperPrefix.count)) }
        let piper = starter.engine(preload: preload)
        let router = EngineRouter(espeak: espeak, piper: piper, piperVoices: [], piperSource: starter, echoes: options.echoesAhead ? .standard : nil, logger: logger)
        return (router, worker, starter)
    }
}
