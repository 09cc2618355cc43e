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
import Testing

/// The real daemon (real eSpeak-NG, real libpulse) on a private sound server with a null sink
/// (PulseAudio unless told otherwise), in this process, listening on a temporary socket: the
/// daemon's own services in a service group.
final class DaemonHarness {
    /// The pulse server the daemon plays to: PulseAudio or PipeWire's.
    let pulse: any PrivateSoundServer
    let socketPath: String
    let speech: SpeechService
    /// Where the user's lexicon.pls is written.
    let lexiconFolder: String
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    /// Ends when speech has shut down (after the last `finished`).
    private let speechEvents: AsyncStream<ClientEvent>
    private var clients: [TestClient] = []
    /// The Piper worker's supervisor (`piper: true`), ended with the harness: this process outlives it.
    private var piperEngine: WorkerEngine?

    static let logger: Logger = {
        var logger = Logger(label: "a11yd-test")
        logger.logLevel = .warning
        return logger
    }()

    /// speech-dispatcher's socket, when the harness serves SSIP too (`ssip: true`).
    let ssipSocketPath: String?

    init(
        configuration: DaemonConfiguration = DaemonConfiguration(), socketPath: String? = nil, outboxLimits: Outbox<ServerMessage>.Limits = .init(),
        ssip: Bool = false, soundServer: SoundServerKind = .pulseAudio, soundServerRunning: Bool = true, piper: Bool = false
    ) async throws {
        pulse = try soundServer.make(started: soundServerRunning)
        // A folder that does not exist yet: the daemon makes it, owner-only.
        self.socketPath = socketPath ?? pulse.directory.path + "/runtime/a11yd/socket"
        let espeak = try EspeakEngine(logger: Self.logger)
        let engine: any SpeechEngine & PronunciationEngine
        if piper {
            // The real Piper worker beside eSpeak, started by the built a11yd in its sandbox, as the
            // daemon does (`Daemon.speechEngine`).
            let environment = try PiperTestVoice.environment()
            guard let runtime = PiperRuntime.find(environment: environment) else { throw TestFailure("no Piper runtime in \(environment)") }
            let launch = runtime.launch(
                sampleRate: espeak.format.sampleRate, voiceFolders: PiperVoices.folders(environment: environment),
                preload: PiperTestVoice.name, idleLimit: nil, environment: environment, launcher: PiperTestVoice.a11yd)
            let piperEngine = try WorkerEngine(launch: launch, format: espeak.format, voices: [], startNow: true, logger: Self.logger)
            self.piperEngine = piperEngine
            let router = EngineRouter(espeak: espeak, piper: piperEngine, piperVoices: [])
            _ = await router.reload(piperVoices: PiperVoices.scan(PiperVoices.folders(environment: environment)), defaults: [])
            engine = router
        } else {
            engine = espeak
        }
        let output = PulseOutput(server: pulse.serverAddress, logger: Self.logger)
        if soundServerRunning { try await output.waitUntilConnected() }
        var configuration = configuration
        configuration.voice.language = configuration.voice.language ?? "fr"
        lexiconFolder = pulse.directory.path + "/config"
        let lexicon = LexiconStore(location: .init(configurationDirectory: lexiconFolder))
        lexicon.reload()
        speech = SpeechService(
            engine: engine, output: output, pronouncer: Pronouncer(engine: engine), lexicon: lexicon,
            configuration: configuration, environment: [:], logger: Self.logger)
        var jsonLines = JSONLinesServer.Configuration()
        jsonLines.outboxLimits = outboxLimits
        let server = JSONLinesServer(
            listener: .path(self.socketPath), allowedUIDs: configuration.allowedUIDs, speech: speech, configuration: jsonLines,
            logger: Self.logger)
        speechEvents = speech.events()
        let ssipPath = ssip ? pulse.directory.path + "/runtime/speech-dispatcher/speechd.sock" : nil
        ssipSocketPath = ssipPath
        let speech = self.speech
        let ssipServer = ssipPath.map { path in
            SSIPServer(listener: .path(path), allowedUIDs: configuration.allowedUIDs, speech: speech, logger: Self.logger)
        }
        // As in the daemon: speech last, so shut down first; connections a client keeps open are
        // cut after the same grace.
        let services: [ServiceGroupConfiguration.ServiceConfiguration] =
            [.init(service: server)] + (ssipServer.map { [.init(service: $0)] } ?? []) + [.init(service: speech)]
        var groupConfiguration = ServiceGroupConfiguration(services: services, logger: Self.logger)
        groupConfiguration.maximumGracefulShutdownDuration = Daemon.maximumGracefulShutdown
        group = ServiceGroup(configuration: groupConfiguration)
        let group = self.group
        running = Task { try await group.run() }
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: self.socketPath)
            || !(ssipSocketPath.map { FileManager.default.fileExists(atPath: $0) } ?? true)
        {
            guard ContinuousClock.now < deadline else { throw TestFailure("daemon did not listen") }
            try await Task.sleep(for: .milliseconds(5))
        }
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
        piperEngine?.shutDown()
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
