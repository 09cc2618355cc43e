// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// How to start one kind of engine worker, and how long to give it: the only thing `WorkerEngine`
/// knows of the engine behind the frames (docs/architecture.md, "The engine worker").
public struct WorkerLaunch: Sendable {
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

    public init(
        engine: SpeechEngineName, executable: String, arguments: [String], environment: [String: String],
        readyLimit: Duration, hangLimit: Duration, idleLimit: Duration?
    ) {
        self.engine = engine
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.readyLimit = readyLimit
        self.hangLimit = hangLimit
        self.idleLimit = idleLimit
    }

    /// a11yd itself as its eSpeak worker (`a11yd --engine-worker`); of `environment`, only what
    /// tells eSpeak where its data is (`WorkerEngine.passedEnvironment`).
    public static func espeak(executable: String = "/proc/self/exe", environment: [String: String]) -> WorkerLaunch {
        WorkerLaunch(
            engine: .espeak, executable: executable, arguments: ["--engine-worker"],
            environment: environment.filter { WorkerEngine.passedEnvironment.contains($0.key) },
            readyLimit: .seconds(10), hangLimit: WorkerEngine.hangLimit, idleLimit: nil)
    }

    /// a11yd's eSpeak worker as a11yd's environment asks: `A11YD_ENGINE_WORKER=PROGRAM` starts
    /// PROGRAM instead of a11yd itself.
    public static func espeak(environment: [String: String]) -> WorkerLaunch {
        espeak(executable: environment[WorkerEngine.executableSwitch] ?? "/proc/self/exe", environment: environment)
    }
}
