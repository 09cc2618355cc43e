// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// How to start one kind of engine worker, and how long to give it: the only thing `WorkerEngine`
/// knows of the engine behind the frames (docs/architecture.md, "The engine worker").
public struct WorkerLaunch: Sendable {
    /// When the engine is loaded into a11yd's own process instead of a worker.
    public enum InProcess: Sendable, Equatable {
        /// Never: Piper is not linked into a11yd; its requests fail with the reason while no
        /// worker can start (`WorkerSupervisor.restartPause`).
        case never
        /// eSpeak, once no worker can start (at a11yd's start, or later after
        /// `WorkerSupervisor.startAttempts` failed starts); the log says so, as an error.
        case whenNoWorkerStarts
        /// eSpeak from the start, no worker at all (`A11YD_ENGINE_IN_PROCESS=1`, to rule the worker
        /// out; the tests' in-process daemon).
        case always
    }

    public var engine: SpeechEngineName
    public var executable: String
    public var arguments: [String]
    /// All the environment the worker gets.
    public var environment: [String: String]
    /// How long a starting worker may take to say `ready`.
    public var readyLimit: Duration
    /// How long a worker saying something may stay silent, spending no CPU, before it is taken for
    /// hung (`SilenceWatch`; twice that of CPU without a word is a loop).
    public var hangLimit: Duration
    /// How long a worker may sit idle before it is ended to give its memory back (nil: never).
    public var idleLimit: Duration?
    public var inProcess: InProcess

    public init(
        engine: SpeechEngineName, executable: String, arguments: [String], environment: [String: String],
        readyLimit: Duration, hangLimit: Duration, idleLimit: Duration?, inProcess: InProcess
    ) {
        self.engine = engine
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.readyLimit = readyLimit
        self.hangLimit = hangLimit
        self.idleLimit = idleLimit
        self.inProcess = inProcess
    }

    /// a11yd itself as its eSpeak worker (`a11yd --engine-worker`); of `environment`, only what
    /// tells eSpeak where its data is (`WorkerEngine.passedEnvironment`).
    public static func espeak(executable: String = "/proc/self/exe", environment: [String: String], inProcess: InProcess = .whenNoWorkerStarts) -> WorkerLaunch {
        WorkerLaunch(
            engine: .espeak, executable: executable, arguments: ["--engine-worker"],
            environment: environment.filter { WorkerEngine.passedEnvironment.contains($0.key) },
            readyLimit: .seconds(10), hangLimit: WorkerEngine.hangLimit, idleLimit: nil, inProcess: inProcess)
    }

    /// a11yd's eSpeak worker as a11yd's environment asks: `A11YD_ENGINE_WORKER=PROGRAM` starts
    /// PROGRAM instead of a11yd itself, `A11YD_ENGINE_IN_PROCESS=1` starts none.
    public static func espeak(environment: [String: String]) -> WorkerLaunch {
        espeak(
            executable: environment[WorkerEngine.executableSwitch] ?? "/proc/self/exe", environment: environment,
            inProcess: environment[WorkerEngine.inProcessSwitch] == "1" ? .always : .whenNoWorkerStarts)
    }
}
