// SPDX-License-Identifier: GPL-3.0-or-later
// A private, headless PulseAudio server for tests (see field notes, "PulseAudio, headless").
import A11yCore
import A11ySystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starts `pulseaudio` in a temporary directory with a null sink (`nullsink`, 48 kHz) as default sink
/// and an anonymous native socket at `<dir>/native`. Clients reach it through `serverAddress`.
///
/// Not thread-safe: drive one instance from one test.
public final class PrivatePulseServer: PrivateSoundServer {
    /// What the null sink plays, as a speaker would hear it (`MonitorRecorder` records it): the
    /// sink's monitor behind a remapping source that changes nothing but holds back as much as the
    /// sink can rewind, so that what a rewind mixes again replaces what was mixed first, as on a
    /// real sink, instead of being lost (the monitor passes on what the sink mixed at once).
    public static let speakerSource = "speaker"

    public let directory: URL
    public let socketPath: String
    /// `unix:/…/native`, for `PULSE_SERVER` or `pa_context_connect`.
    public var serverAddress: String { "unix:" + socketPath }

    private var pid: pid_t?
    private var exitStatus: Int32?
    private let configPath: String
    private let logPath: String

    /// Starts the server (unless `started` is false) and waits (up to `timeout` seconds) until its
    /// socket accepts connections.
    public init(started: Bool = true, timeout: Double = 10) throws {
        let dir = try makeTemporaryFolder(prefix: "a11y-pulse")
        directory = URL(fileURLWithPath: dir)
        socketPath = dir + "/native"
        configPath = dir + "/server.pa"
        logPath = dir + "/pulseaudio.log"
        try FileManager.default.createDirectory(
            atPath: dir + "/run", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(
            atPath: dir + "/home", withIntermediateDirectories: true, attributes: nil)
        // The sink is loaded before the socket so that a client that can connect always finds it.
        let script = """
            load-module module-null-sink sink_name=nullsink rate=48000
            load-module module-remap-source source_name=\(Self.speakerSource) master=nullsink.monitor
            set-default-sink nullsink
            load-module module-native-protocol-unix auth-anonymous=1 socket=\(socketPath)

            """
        try script.write(toFile: configPath, atomically: true, encoding: .utf8)
        if started { try start(timeout: timeout) }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Environment for child processes (`pactl`, a daemon under test) that should use this server.
    public var clientEnvironment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["PULSE_SERVER"] = serverAddress
        env["XDG_RUNTIME_DIR"] = directory.path + "/run"
        env["HOME"] = directory.path + "/home"
        return env
    }

    public var isRunning: Bool {
        guard let pid else { return false }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid || r < 0 {
            exitStatus = status
            self.pid = nil
            return false
        }
        return true
    }

    /// Starts the server if it is not running and waits until the socket accepts.
    public func start(timeout: Double = 10) throws {
        if isRunning { return }
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = directory.path + "/run"
        env["HOME"] = directory.path + "/home"
        env.removeValue(forKey: "PULSE_SERVER")
        env.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        let child = try spawn(
            "/usr/bin/pulseaudio",
            [
                "-n", "--file=\(configPath)", "--daemonize=no", "--exit-idle-time=-1",
                "--use-pid-file=no", "--disallow-exit", "--log-target=stderr",
            ],
            environment: env, output: logPath)
        pid = child

        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if socketAccepts() { return }
            if !isRunning {
                throw SpeechError(
                    .audioUnavailable,
                    "pulseaudio exited (wait status \(exitStatus ?? -1)) before its socket accepted; stderr:\n\(logText())")
            }
            if Date() > deadline {
                stop()
                throw SpeechError(
                    .audioUnavailable,
                    "pulseaudio socket \(socketPath) did not accept within \(timeout) s; stderr:\n\(logText())")
            }
            usleep(5_000)
        }
    }

    /// Stops the server (SIGKILL: like a crash, so that clients see the connection drop at once)
    /// and waits until the process is gone.
    public func stop() {
        guard let child = pid else { return }
        pid = nil
        kill(child, SIGKILL)
        var status: Int32 = 0
        _ = try? SystemCall.retryingOnInterrupt { waitpid(child, &status, 0) }
    }

    /// What pulseaudio wrote to stdout/stderr so far.
    public func logText() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    private func spawn(_ path: String, _ arguments: [String], environment: [String: String], output: String) throws -> pid_t {
        do {
            return try Spawn.start(path, arguments, environment: environment, stdout: .file(output, append: false), stderr: .stdout)
        } catch {
            throw TestFailure(error.description)
        }
    }

    private func socketAccepts() -> Bool { SocketProbe.accepts(path: socketPath) }
}
