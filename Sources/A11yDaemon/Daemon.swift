import A11yAudio
import A11yConfiguration
import A11yCore
import A11yEngine
import A11yEngineWorker
import A11yPronunciation
import A11yFrontEnd
import A11yJSONLines
import A11ySSIP
import A11ySystem
import Logging
import ServiceLifecycle
import UnixSignals

/// The daemon as a group of services: the front ends, config reload, heap trim, idle exit and speech.
/// On SIGTERM or SIGINT shut down in reverse: speech first, then the front ends.
public struct Daemon: Sendable {
    public struct Options: Sendable {
        public var socketPath: String?
        public var configPath: String?
        /// The SSIP socket: nil for the configuration's (default speech-dispatcher's path).
        public var ssipSocketPath: String?
        /// Serve no SSIP at all (`--no-ssip`).
        public var ssipDisabled = false
        /// The environment a11yd started with: taken once (`Environment.snapshot()`, in a11yd's main)
        /// and read only from here (configuration, sockets, socket activation, logging).
        public var environment: [String: String]
        /// What a11yd's main did to itself before any thread started (`SelfRestriction`), to log;
        /// nil when nothing was tried (a daemon inside a test process).
        public var selfRestriction: Landlock.Outcome?

        public init(socketPath: String? = nil, configPath: String? = nil, environment: [String: String]) {
            self.socketPath = socketPath
            self.configPath = configPath
            self.environment = environment
        }
    }

    /// How long a graceful shutdown may wait for connections to end before they are cut.
    public static let maximumGracefulShutdown: Duration = .seconds(2)

    public var options: Options
    public var logger: Logger

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    public func run() async throws {
        // Trap SIGTERM and SIGINT before anything listens: ServiceGroup installs its own handlers
        // concurrently with starting services, so a signal sent as soon as the socket accepts
        // could still kill the process with the default action.
        let stopSignals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let configPath = options.configPath ?? DaemonConfiguration.defaultPath(environment: options.environment)
        let configuration = try DaemonConfiguration.load(path: configPath, mustExist: options.configPath != nil)
        let engine = try speechEngine(configuration: configuration)
        await ConfigReloadService.reloadVoices(engine, configuration: configuration, environment: options.environment, logger: logger)
        // The user's pronunciations live beside the configuration file: lexicon.pls and lexicons/*.pls.
        let lexicon = LexiconStore(location: .init(configurationDirectory: Path.parent(of: configPath)))
        for problem in lexicon.reload() {
            logger.error("lexicon file not used", metadata: ["problem": "\(problem)"])
        }
        let speech = SpeechService(
            engine: engine,
            output: PulseOutput(
                server: configuration.audioServer, ducking: configuration.ducking(environment: options.environment), logger: logger),
            pronouncer: Pronouncer(engine: engine), lexicon: lexicon, configuration: configuration,
            environment: options.environment, logger: logger)

        let inherited = try SocketActivation.inherited(environment: options.environment)
        let listener = SocketActivation.jsonLinesListener(
            inherited,
            fallbackPath: SocketLocation.resolve(
                explicit: options.socketPath, configured: configuration.socketPath, environment: options.environment))
        SocketActivation.forgetInheritedEnvironment()
        let notifier = ServiceNotifier(environment: options.environment)
        // Before the front ends: they count their connections in its `connectionCount`.
        let idleExit = IdleExitService(speech: speech, logger: logger)
        let jsonLines = JSONLinesServer(
            listener: listener, allowedUIDs: configuration.allowedUIDs, connectionCount: idleExit.connectionCount,
            speech: speech, logger: logger
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
            gracefulShutdownSignals: [],  // trapped above, forwarded below
            logger: logger)
        // A client that keeps its connection open (a screen reader's subscription, say) must not hold
        // the daemon up: once every item got its `finished`, cancel what is still waiting on a
        // connection. Well inside the unit's TimeoutStopSec=10.
        groupConfiguration.maximumGracefulShutdownDuration = Self.maximumGracefulShutdown
        let group = ServiceGroup(configuration: groupConfiguration)
        logger.info("a11yd starting", metadata: ["config": "\(configPath)", "sample_rate": "\(engine.format.sampleRate)"])
        switch options.selfRestriction {
        case .restricted(let abi):
            logger.info("file system restricted with Landlock: read-only but for the configuration and socket folders, no exec but its engine worker", metadata: ["abi": "\(abi)"])
        case .unavailable(let why):
            logger.notice("file system not restricted (Landlock)", metadata: ["reason": "\(why)"])
        case nil:
            break
        }
        try await withThrowingDiscardingTaskGroup { tasks in
            tasks.addTask {
                for await signal in stopSignals {
                    logger.notice("stopping", metadata: ["signal": "\(signal)"])
                    notifier.notify("STOPPING=1")
                    await group.triggerGracefulShutdown()
                }
            }
            try await group.run()
            tasks.cancelAll()
        }
        logger.info("a11yd stopped")
    }

    /// eSpeak-NG, and Piper beside it when `make voices` installed its runtime: its worker starts
    /// with the first Piper item, or at once if a language's configured voice is Piper's. Voices are
    /// found by `ConfigReloadService.reloadVoices`, at start and on SIGHUP.
    func speechEngine(configuration: DaemonConfiguration) throws -> EngineRouter {
        let espeak = try espeakEngine()
        guard let runtime = PiperRuntime.find(environment: options.environment) else {
            return EngineRouter(espeak: espeak, piper: nil, piperVoices: [])
        }
        let preload = configuration.voices.first { SpeechEngineName(voice: $0.voice) == .piper }
            .map { String($0.voice.dropFirst(SpeechEngineName.piperPrefix.count)) }
        let idle = configuration.piperIdleSeconds
        let launch = runtime.launch(
            sampleRate: espeak.format.sampleRate, voiceFolders: PiperVoices.folders(environment: options.environment),
            preload: preload, idleLimit: idle == 0 ? nil : .seconds(idle), environment: options.environment,
            launcher: options.environment[WorkerEngine.executableSwitch] ?? "/proc/self/exe")
        let piper = try WorkerEngine(launch: launch, format: espeak.format, voices: [], startNow: preload != nil, logger: logger)
        logger.info("Piper runtime found", metadata: ["python": "\(runtime.python)"])
        return EngineRouter(espeak: espeak, piper: piper, piperVoices: [])
    }

    /// Synthesis and phoneme look-ups in a sandboxed worker process, unless `A11YD_ENGINE_IN_PROCESS=1`
    /// or no worker can start: only then is eSpeak loaded into a11yd, and the log says what
    /// protection is missing.
    func espeakEngine() throws -> any SpeechEngine & PronunciationEngine {
        if options.environment[WorkerEngine.inProcessSwitch] == "1" {
            logger.notice("synthesis in process, not in a sandboxed worker", metadata: ["reason": "\(WorkerEngine.inProcessSwitch)=1"])
            return try inProcessEngine()
        }
        do {
            let executable = options.environment[WorkerEngine.executableSwitch] ?? "/proc/self/exe"
            return try WorkerEngine(executable: executable, environment: options.environment, logger: logger)
        } catch {
            logger.error("no engine worker: synthesis in process, unprotected from what text does to eSpeak", metadata: ["error": "\(error)"])
            return try inProcessEngine()
        }
    }

    private func inProcessEngine() throws -> EspeakEngine {
        do {
            return try EspeakEngine(logger: logger)
        } catch {
            throw DaemonError.engineUnavailable("cannot start eSpeak-NG: \(error)")
        }
    }

    /// speech-dispatcher's socket, unless turned off: the one systemd passed, else
    /// `--ssip-socket`, else `ssip.socket`, else `$XDG_RUNTIME_DIR/speech-dispatcher/speechd.sock`.
    func ssipListener(_ inherited: SocketActivation.Inherited?, configuration: DaemonConfiguration) -> SocketListener? {
        if let socket = inherited?.ssip { return .inherited(descriptor: socket.descriptor, path: socket.path) }
        guard !options.ssipDisabled, configuration.ssipEnabled else {
            logger.info("SSIP is off")
            return nil
        }
        guard let path = options.ssipSocketPath ?? configuration.ssipSocketPath ?? SSIPServer.defaultPath(environment: options.environment) else {
            logger.notice("no SSIP socket: XDG_RUNTIME_DIR is not set and ssip.socket names none")
            return nil
        }
        return .path(path)
    }

}
