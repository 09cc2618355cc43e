// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngineWorker
import Logging
import Synchronization

/// Makes the Piper engine once its runtime is installed (`a11yd-install-voices`, `make voices`):
/// at start, and at a reload for a runtime installed while a11yd runs, so that no restart is needed.
/// Remembers what it made, for a daemon inside a test process to end its workers.
final class PiperStarter: PiperSource {
    private let environment: [String: String]
    private let format: AudioFormat
    private let idleSeconds: Int
    private let logger: Logger
    private let made = Mutex<[WorkerEngine]>([])

    init(environment: [String: String], format: AudioFormat, idleSeconds: Int, logger: Logger) {
        self.environment = environment
        self.format = format
        self.idleSeconds = idleSeconds
        self.logger = logger
    }

    /// The engines made so far.
    var engines: [WorkerEngine] { made.withLock { $0 } }

    var runtimeIsInstalled: Bool { PiperRuntime.find(environment: environment) != nil }

    func startEngine() -> (any SpeechEngine)? { engine(preload: nil) }

    /// The engine of the runtime installed now; its worker starts at once when it is to `preload`
    /// a voice (a language's configured voice is Piper's), else with its first item.
    func engine(preload: String?) -> WorkerEngine? {
        guard let runtime = PiperRuntime.find(environment: environment) else { return nil }
        let launch = runtime.launch(
            sampleRate: format.sampleRate, voiceFolders: PiperVoices.folders(environment: environment),
            preload: preload, idleLimit: idleSeconds == 0 ? nil : .seconds(idleSeconds), environment: environment,
            launcher: environment[WorkerEngine.executableSwitch] ?? "/proc/self/exe")
        let engine = WorkerEngine(launch: launch, format: format, voices: [], startNow: preload != nil, logger: logger)
        made.withLock { $0.append(engine) }
        logger.info("Piper runtime found", metadata: ["python": "\(runtime.python.string)"])
        return engine
    }
}
