// SPDX-License-Identifier: GPL-3.0-or-later
// speech-dispatcher itself, private, for tests that compare a11yd with it (as bench/run.sh starts it).
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// speech-dispatcher 0.11 with its espeak-ng module, playing to `sound`'s server, with a copy of
/// Debian's configuration in its own folder (PulseAudio output, espeak-ng the only module, French
/// by default) and its socket at `socketPath`. Killed, with its module, when dropped.
public final class PrivateSpeechDispatcher {
    public let socketPath: String
    /// For `speechDispatcherClientEnvironment(socket:home:runtime:base:)`.
    public let runtime: String
    private let folder: String
    private let daemon: ChildProcess

    public init(sound: any PrivateSoundServer, timeout: Duration = .seconds(10)) async throws {
        folder = sound.directory.path + "/speechd-\(UInt32.random(in: 0...UInt32.max))"
        runtime = folder + "/run"
        socketPath = runtime + "/speech-dispatcher/speechd.sock"
        let configuration = folder + "/conf"
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: runtime + "/speech-dispatcher", withIntermediateDirectories: true)
        try fileManager.createDirectory(atPath: folder + "/logs", withIntermediateDirectories: true)
        try fileManager.copyItem(atPath: "/etc/speech-dispatcher", toPath: configuration)
        let added = """

            AudioOutputMethod "pulse"
            AddModule "espeak-ng" "sd_espeak-ng" "espeak-ng.conf"
            DefaultModule espeak-ng
            DefaultLanguage "fr"
            DisableAutoSpawn

            """
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: configuration + "/speechd.conf"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(added.utf8))
        try handle.close()
        var environment = sound.clientEnvironment
        environment["XDG_RUNTIME_DIR"] = runtime
        environment["HOME"] = folder
        environment["XDG_CONFIG_HOME"] = folder + "/config"
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        daemon = try ChildProcess(
            "/usr/bin/speech-dispatcher",
            ["-s", "-t", "0", "-C", configuration, "-L", folder + "/logs", "-P", folder + "/speechd.pid",
             "-c", "unix_socket", "-S", socketPath],
            environment: environment, logPath: folder + "/speechd.out")
        let deadline = ContinuousClock.now + timeout
        while !fileManager.fileExists(atPath: socketPath) {
            guard daemon.isRunning, ContinuousClock.now < deadline else {
                stop()
                throw TestFailure("speech-dispatcher did not listen on \(socketPath): \(daemon.log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    deinit { stop() }

    /// Kills speech-dispatcher and its output modules (its children), by their own pids.
    public func stop() {
        for child in Self.children(of: daemon.pid) { kill(child, SIGKILL) }
        if daemon.isRunning { daemon.signal(SIGKILL) }
    }

    /// The processes whose parent is `pid` (from /proc).
    static func children(of pid: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let child = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // "pid (comm) state ppid …": the fields after the command name's closing parenthesis.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid ? child : nil
        }
    }
}
