// SPDX-License-Identifier: GPL-3.0-or-later
import A11yAudio
import A11yCore
import A11yDaemon
import A11yEngine
import A11yEngineWorker
import A11yFrontEnd
import A11yJSONLines
import A11yPronunciation
import A11yProtocol
import A11ySSIP
import A11yTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// The real daemon (real eSpeak-NG, real libpulse) on a private sound server with a null sink
/// (PulseAudio unless told otherwise), in this process, listening on a temporary socket: the
/// daemon's own services (`Daemon.services`), wired as a11yd wires them, in their service group.
/// What differs is told in its options: eSpeak in process (`A11YD_ENGINE_IN_PROCESS=1`: this process
/// is not a11yd, which its worker is started as), and with `piper: true` the real Piper worker,
/// started by the built a11yd in its sandbox, with the test voice.
final class DaemonHarness {
    /// The pulse server the daemon plays to: PulseAudio or PipeWire's.
    let pulse: any PrivateSoundServer
    let socketPath: String
    let speech: SpeechService
    let engines: EngineRouter
    /// Where the user's lexicon.pls is written.
    let lexiconFolder: String
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    /// Set when the group has returned (a class: the running task shares it with the harness).
    private final class Flag: Sendable { let isSet = Atomic(false) }
    private let groupEnded = Flag()
    /// The services as `Daemon.services` wired them, for a test to reach one (idle exit's reload).
    private let services: [any Service]
    /// Ends when speech has shut down (after the last `finished`).
    private let speechEvents: AsyncStream<ClientEvent>
    private var clients: [TestClient] = []
    /// Ended with the harness: this process outlives them.
    /// eSpeak's and Piper's, Piper's made at start or at a reload.
    private let workerEngines: () -> [WorkerEngine]

    /// Warnings and above, unless `A11YD_TEST_LOG_LEVEL` names another level (`debug`, `trace`): the
    /// daemon's own log, to see why an item ended as it did in a run that failed only under load.
    static let logger: Logger = {
        var logger = Logger(label: "a11yd-test")
        logger.logLevel = ProcessInfo.processInfo.environment["A11YD_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }()

    /// speech-dispatcher's socket, when the harness serves SSIP too (`ssip: true`).
    let ssipSocketPath: String?

    init(
        configuration: DaemonConfiguration = DaemonConfiguration(), socketPath: String? = nil, outboxLimits: Outbox<ServerMessage>.Limits = .init(),
        ssip: Bool = false, soundServer: SoundServerKind = .pulseAudio, soundServerRunning: Bool = true, piper: Bool = false,
        echoesAhead: Bool = false,
        idleExitClock: any Clock<Duration> = ContinuousClock()
    ) async throws {
        pulse = try soundServer.make(started: soundServerRunning)
        // A folder that does not exist yet: the daemon makes it, owner-only.
        self.socketPath = socketPath ?? pulse.directory.path + "/runtime/a11yd/socket"
        lexiconFolder = pulse.directory.path + "/config"
        let ssipPath = ssip ? pulse.directory.path + "/runtime/speech-dispatcher/speechd.sock" : nil
        ssipSocketPath = ssipPath

        var environment = [Daemon.inProcessSwitch: "1", "XDG_RUNTIME_DIR": pulse.directory.path + "/runtime"]
        if piper {
            environment.merge(try PiperTestVoice.environment()) { _, piper in piper }
            environment[WorkerEngine.executableSwitch] = PiperTestVoice.a11yd
        }
        var options = Daemon.Options(socketPath: self.socketPath, environment: environment)
        options.ssipSocketPath = ssipPath
        options.ssipDisabled = !ssip
        options.echoesAhead = echoesAhead
        options.jsonLines.outboxLimits = outboxLimits
        var configuration = configuration
        configuration.voice.language = configuration.voice.language ?? "fr"
        configuration.audioServer = pulse.serverAddress
        let services = try await Daemon(options: options, logger: Self.logger)
            .services(configuration: configuration, configPath: lexiconFolder + "/a11yd.toml", idleExitClock: idleExitClock)
        speech = services.speech
        engines = services.engines
        workerEngines = { [services] in services.workerEngines }
        if soundServerRunning { try await services.output.waitUntilConnected() }
        speechEvents = speech.events()
        self.services = services.group.services.map(\.service)
        group = ServiceGroup(configuration: services.group)
        let group = self.group
        let groupEnded = self.groupEnded
        let output = services.output
        running = Task {
            defer { groupEnded.isSet.store(true, ordering: .releasing) }
            // As Daemon.run does, once the group has ended however it ended: the output closed here
            // stops its event thread, rather than in a deinit on whichever thread lets it go last,
            // which could be that event thread, mid-callback (libpulse then aborts the process:
            // "pa_threaded_mainloop_lock ... in_worker", a test lane lost to it once).
            defer { output.close() }
            try await group.run()
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: self.socketPath)
            || !(ssipSocketPath.map { FileManager.default.fileExists(atPath: $0) } ?? true)
        {
            guard ContinuousClock.now < deadline else { throw TestFailure("daemon did not listen") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Whether the service group has returned, as a11yd's process exits: idle exit ends it by itself.
    var hasEnded: Bool { groupEnded.isSet.load(ordering: .acquiring) }

    /// Waits for the group's end, throwing what it threw (what a11yd's exit status other than 0 is).
    func end() async throws { try await running.value }

    /// The wired service of type `S`.
    func service<S: Service>(_ type: S.Type) -> S? {
        services.lazy.compactMap { $0 as? S }.first
    }

    func client() async throws -> TestClient {
        let client = try await TestClient.connect(path: socketPath)
        clients.append(client)
        return client
    }

    func recorder() throws -> MonitorRecorder {
        let recorder = MonitorRecorder(server: pulse.serverAddress)
        try recorder.start()
        return recorder
    }

    /// As SIGTERM does: every item finishes; then this harness's clients hang up, as a client
    /// told by the daemon's end of line would.
    func shutDown() async {
        await group.triggerGracefulShutdown()
        for await _ in speechEvents {}
        for client in clients { await client.close() }
        _ = try? await running.value
        for engine in workerEngines() { engine.shutDown() }
    }
}

/// A long French sentence (about 6 s at normal rate), for pausing and cutting mid-speech.
let longSentence = """
    La synthèse vocale lit ce long paragraphe pendant plusieurs secondes, afin que nous puissions \
    l'interrompre, le mettre en pause puis le reprendre exactement là où il s'était arrêté.
    """

/// Where each word of `text` starts, in Unicode scalars: the offsets `word` events report.
func wordStarts(_ text: String) -> [Int] {
    var starts: [Int] = []
    var previousWasSpace = true
    for (index, scalar) in text.unicodeScalars.enumerated() {
        let isSpace = scalar.properties.isWhitespace
        if !isSpace && previousWasSpace { starts.append(index) }
        previousWasSpace = isSpace
    }
    return starts
}
