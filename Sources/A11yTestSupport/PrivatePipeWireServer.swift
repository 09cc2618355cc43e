// SPDX-License-Identifier: GPL-3.0-or-later
// A private, headless PipeWire with its pulse server, as Debian 12's desktops run it (field notes,
// "PulseAudio, headless": pipewire, wireplumber and pipewire-pulse with a session D-Bus).
import A11yCore
import A11ySystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `pipewire`, `wireplumber` and `pipewire-pulse` in a temporary folder (own `XDG_RUNTIME_DIR`,
/// `HOME`, `XDG_CONFIG_HOME`) with their own session bus. The null sink `nullsink` (48 kHz,
/// stereo) is one of PipeWire's own objects, from a drop-in of its configuration, so that it exists
/// before the pulse socket accepts and survives nothing but PipeWire itself: a client that connects
/// always finds it, as it finds PulseAudio's in `PrivatePulseServer`.
///
/// `stop()` kills the three sound processes (the whole sound server, as a crash or
/// `systemctl --user restart pipewire` does); the session bus lives as long as this object, as a
/// desktop session's does. Not thread-safe: drive one instance from one test.
public final class PrivatePipeWireServer: PrivateSoundServer {
    public let directory: URL
    /// pipewire-pulse's socket: `<XDG_RUNTIME_DIR>/pulse/native`.
    public let socketPath: String
    public var serverAddress: String { "unix:" + socketPath }

    private let runtimeFolder: String
    private let busAddress: String
    private var bus: ChildProcess?
    /// pipewire, wireplumber, pipewire-pulse, in the order they were started.
    private var processes: [ChildProcess] = []

    /// PipeWire configuration (a drop-in of pipewire.conf) that makes `nullsink`; public for tests that run
    /// a user's own PipeWire, from its units, with the same sink.
    public static let nullSinkConfiguration = """
        context.objects = [
            {   factory = adapter
                args = {
                    factory.name = support.null-audio-sink
                    node.name = nullsink
                    node.description = "a11y test null sink"
                    media.class = Audio/Sink
                    audio.rate = 48000
                    audio.position = [ FL FR ]
                    monitor.channel-volumes = true
                    object.linger = true
                }
            }
        ]

        """

    /// Makes the folder and starts the session bus; then the sound server too unless `started` is
    /// false (`start()` it later: "no server at start, then one appears").
    public init(started: Bool = true, timeout: Double = 10) throws {
        let dir = try makeTemporaryFolder(prefix: "a11y-pipewire")
        directory = URL(fileURLWithPath: dir)
        runtimeFolder = dir + "/run"
        socketPath = runtimeFolder + "/pulse/native"
        busAddress = "unix:path=" + runtimeFolder + "/bus"
        let fm = FileManager.default
        try fm.createDirectory(atPath: runtimeFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try fm.createDirectory(atPath: dir + "/home", withIntermediateDirectories: true, attributes: nil)
        let dropIns = dir + "/xdg-config/pipewire/pipewire.conf.d"
        try fm.createDirectory(atPath: dropIns, withIntermediateDirectories: true, attributes: nil)
        try Self.nullSinkConfiguration.write(toFile: dropIns + "/a11y-null-sink.conf", atomically: true, encoding: .utf8)

        bus = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--session", "--address=" + busAddress, "--nofork", "--nopidfile"],
            environment: serverEnvironment, logPath: dir + "/dbus.log")
        try wait(timeout: timeout, for: "the session bus at \(runtimeFolder)/bus") {
            SocketProbe.accepts(path: runtimeFolder + "/bus")
        }
        if started { try start(timeout: timeout) }
    }

    deinit {
        stop()
        if let bus { Self.killAndReap(bus) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// What the sound processes see: this folder as their whole world, this session bus, no pulse
    /// or PipeWire server of the caller's.
    private var serverEnvironment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        for name in ["PULSE_SERVER", "PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY"] {
            env.removeValue(forKey: name)
        }
        env["XDG_RUNTIME_DIR"] = runtimeFolder
        env["HOME"] = directory.path + "/home"
        env["XDG_CONFIG_HOME"] = directory.path + "/xdg-config"
        env["XDG_STATE_HOME"] = directory.path + "/home/.local/state"
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        return env
    }

    public var clientEnvironment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["PULSE_SERVER"] = serverAddress
        env["XDG_RUNTIME_DIR"] = runtimeFolder
        env["HOME"] = directory.path + "/home"
        env.removeValue(forKey: "PIPEWIRE_REMOTE")
        return env
    }

    public var isRunning: Bool { !processes.isEmpty && processes.allSatisfy(\.isRunning) }

    /// Starts PipeWire, then (once its socket accepts) WirePlumber, then (once it has chosen the
    /// default sink) the pulse server, and waits until a pulse client can connect and sees `nullsink`
    /// as the default sink.
    public func start(timeout: Double = 10) throws {
        if isRunning { return }
        stop()  // whatever is left of a half-dead server
        let deadline = Date().addingTimeInterval(timeout)
        let env = serverEnvironment
        func launch(_ name: String) throws {
            processes.append(
                try ChildProcess("/usr/bin/" + name, [], environment: env, logPath: directory.path + "/\(name).log"))
        }
        try launch("pipewire")
        try wait(until: deadline, for: "PipeWire's socket") { SocketProbe.accepts(path: runtimeFolder + "/pipewire-0") }
        try launch("wireplumber")
        // The pulse server only once WirePlumber has chosen the default sink: a pulse client that
        // connects while WirePlumber starts can leave it with an unlinked stream and no default sink
        // (seen once in a soak run, "pending linkable(s) not activated" in WirePlumber's log).
        try wait(until: deadline, for: "WirePlumber's default sink") {
            (try? run("/usr/bin/pw-metadata", ["-n", "default", "0", "default.audio.sink"], environment: env, until: deadline))?
                .contains("\"nullsink\"") == true
        }
        try launch("pipewire-pulse")
        try wait(until: deadline, for: "pipewire-pulse's socket \(socketPath)") { SocketProbe.accepts(path: socketPath) }
        try wait(until: deadline, for: "nullsink as the default sink") {
            (try? runPactl(["get-default-sink"], environment: clientEnvironment, scratch: directory.path))?
                .trimmed == "nullsink"
        }
    }

    /// Kills pipewire-pulse, wireplumber and pipewire (SIGKILL, all at once: clients see the
    /// connection drop) and waits until they are gone. The session bus stays.
    public func stop() {
        for process in processes.reversed() { process.signal(SIGKILL) }
        for process in processes { Self.killAndReap(process) }
        processes = []
    }

    public func logText() -> String {
        ["pipewire", "wireplumber", "pipewire-pulse"].map { name in
            "--- \(name):\n" + ((try? String(contentsOfFile: directory.path + "/\(name).log", encoding: .utf8)) ?? "")
        }.joined(separator: "\n")
    }

    /// Runs a PipeWire tool to its end (killed at `deadline`); its standard output.
    private func run(_ tool: String, _ arguments: [String], environment: [String: String], until deadline: Date) throws -> String {
        let output = directory.path + "/tool-\(UInt64.random(in: 0...UInt64.max)).out"
        defer { unlink(output) }
        let child = try ChildProcess(tool, arguments, environment: environment, logPath: output)
        while child.isRunning {
            if Date() > deadline { Self.killAndReap(child) }
            usleep(2_000)
        }
        return child.log
    }

    private static func killAndReap(_ process: ChildProcess) {
        process.signal(SIGKILL)
        while process.isRunning { usleep(1_000) }
    }

    private func wait(timeout: Double, for what: String, _ ready: () -> Bool) throws {
        try wait(until: Date().addingTimeInterval(timeout), for: what, ready)
    }

    /// Polls `ready` every 10 ms; fails with the servers' logs if one of them died or time ran out.
    private func wait(until deadline: Date, for what: String, _ ready: () -> Bool) throws {
        while !ready() {
            if let dead = processes.first(where: { !$0.isRunning }) {
                let name = (dead.logPath as NSString).lastPathComponent
                stop()
                throw SpeechError(.audioUnavailable, "\(name) exited before \(what) was ready; logs:\n\(logText())")
            }
            if Date() > deadline {
                stop()
                throw SpeechError(.audioUnavailable, "no \(what) in time; logs:\n\(logText())")
            }
            usleep(10_000)
        }
    }
}
