// SPDX-License-Identifier: GPL-3.0-or-later
import A11yDaemon
import A11yEngineWorker
import A11ySystem
import ArgumentParser
import Glibc
import Logging

@main
struct A11yd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "a11yd",
        abstract: "The a11yd speech daemon: VoiceOver-style announcements for Linux.",
        discussion: """
            Listens on a Unix socket (JSON Lines, see docs/protocol.md) and on speech-dispatcher's \
            (SSIP, for Orca and spd-say; see docs/ssip.md), speaks with eSpeak-NG and plays through \
            PulseAudio or PipeWire's pulse server. SIGTERM/SIGINT stop it gracefully, SIGHUP reloads the \
            configuration and the user's lexicon. Socket-activated by systemd when started with LISTEN_FDS \
            (the socket named 'ssip' is SSIP).
            """)

    @Option(help: "Socket path (default: $A11YD_SOCKET, else $XDG_RUNTIME_DIR/a11yd/socket).")
    var socket: String?

    @Option(help: "SSIP socket, speech-dispatcher's protocol (default: $XDG_RUNTIME_DIR/speech-dispatcher/speechd.sock).")
    var ssipSocket: String?

    @Flag(help: "Serve no SSIP (only a11yd's JSON Lines socket).")
    var noSSIP = false

    @Option(help: "Configuration file (default: $XDG_CONFIG_HOME/a11yd/a11yd.toml).")
    var config: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    // The engine worker a11yd starts for itself (docs/architecture.md, "The engine worker"): the
    // same executable, so nothing else to install. Not for people.
    @Flag(help: .hidden) var engineWorker = false
    @Option(help: .hidden) var espeakData: String?
    /// With --engine-worker: sandbox as a worker, try what the sandbox forbids, print what happened.
    @Option(help: .hidden) var sandboxProbe: String?
    /// With --engine-worker: shut the process in, then execute this program (the Piper worker's
    /// Python) with the arguments after `--`, reading only what --read names besides its runtime.
    @Option(help: .hidden) var exec: String?
    @Option(help: .hidden) var read: [String] = []
    @Argument(parsing: .postTerminator, help: .hidden) var execArguments: [String] = []

    func run() throws {
        if engineWorker, let exec {
            SandboxedLauncher.run(program: exec, arguments: execArguments, readable: read)
        }
        if engineWorker {
            if let sandboxProbe { EngineWorkerProcess.probe(dataFolder: espeakData, writing: sandboxProbe) }
            EngineWorkerProcess.run(dataFolder: espeakData)
        }
        // First, before any thread exists: glibc fixes its arena limit when a second arena is made.
        Heap.limitArenas(to: 2)
        // One snapshot of the environment for the whole daemon: logging reads it, the rest through Options.
        var options = Daemon.Options(socketPath: socket, configPath: config, environment: Environment.snapshot())
        options.ssipSocketPath = ssipSocket
        options.ssipDisabled = noSSIP
        // Here, on the only thread: Landlock binds the calling thread and the threads it starts later.
        options.selfRestriction = SelfRestriction.apply(for: options)
        let logLevel = logLevel
        try MainThread.wait { [options] in
            try await Self.serve(options: options, logLevel: logLevel)
        }
    }

    private static func serve(options: Daemon.Options, logLevel: String) async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        // Journal format (<N> prefixes, no timestamps) only when stderr really is the stream systemd
        // named: JOURNAL_STREAM is inherited by children whose stderr may be a file or a terminal.
        var logEnvironment = options.environment
        if !stderrIsJournal(logEnvironment["JOURNAL_STREAM"]) { logEnvironment.removeValue(forKey: "JOURNAL_STREAM") }
        LoggingSystem.bootstrap { [logEnvironment] label in
            var handler = JournalLogHandler(label: label, environment: logEnvironment)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "a11yd")
        do {
            try await Daemon(options: options, logger: logger).run()
        } catch {
            logger.critical("a11yd cannot run: \(error)")
            throw ExitCode.failure
        }
    }

    /// True when `JOURNAL_STREAM` ("device:inode", see systemd.exec(5)) names stderr.
    static func stderrIsJournal(_ value: String?) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
