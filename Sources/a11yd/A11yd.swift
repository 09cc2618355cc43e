import A11yDaemon
import ArgumentParser
import Foundation
import Logging

@main
struct A11yd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "a11yd",
        abstract: "The a11yd speech daemon: VoiceOver-style announcements for Linux.",
        discussion: """
            Listens on a Unix socket (JSON Lines, see docs/protocol.md), speaks with eSpeak-NG and \
            plays through PulseAudio or PipeWire's pulse server. SIGTERM/SIGINT stop it gracefully, \
            SIGHUP reloads the configuration. Socket-activated by systemd when started with LISTEN_FDS.
            """)

    @Option(help: "Socket path (default: $A11YD_SOCKET, else $XDG_RUNTIME_DIR/a11yd/socket).")
    var socket: String?

    @Option(help: "Configuration file (default: $XDG_CONFIG_HOME/a11yd/a11yd.toml).")
    var config: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = JournalLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "a11yd")
        do {
            try await Daemon(options: .init(socketPath: socket, configPath: config), logger: logger).run()
        } catch {
            logger.critical("a11yd cannot run: \(error)")
            throw ExitCode.failure
        }
    }
}
