// SPDX-License-Identifier: GPL-3.0-or-later
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
        /// The JSON Lines front end's limits.
        public var jsonLines = JSONLinesServer.Configuration()
        /// The characters a screen reader echoes are said ahead in the natural voice (`EchoMemory`).
        /// A daemon inside a test process leaves it off unless its test measures it: each daemon whose
        /// natural voice speaks would otherwise keep a core busy for seconds rendering them.
        public var echoesAhead = true

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
        let services = try await services(configuration: configuration, configPath: configPath)
        // Once the group has ended (speech shut down first), however it ended: the streams ducking
        // lowered get their volume back before the process ends, not whenever the last reference
        // to the output goes (a deinit may not run before exit: seen once in three runs of
        // DuckingDaemonTests, the music left 12 dB down after a SIGTERM mid-speech).
        defer { services.output.close() }
        let group = ServiceGroup(configuration: services.group)
        let notifier = ServiceNotifier(environment: options.environment)
        logger.info("a11yd starting", metadata: ["config": "\(configPath)", "sample_rate": "\(services.engines.format.sampleRate)"])
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
