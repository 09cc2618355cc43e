// SPDX-License-Identifier: GPL-3.0-or-later
// What a test needs of a private sound server, whichever implementation of the pulse protocol runs it.
import A11yCore
import A11ySystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private, headless pulse-protocol server with a null sink named `nullsink` (the default sink)
/// whose monitor `MonitorRecorder` records. Tests kill it and start it again to inject the faults a
/// desktop's sound server goes through. Not thread-safe: drive one instance from one test.
public protocol PrivateSoundServer: AnyObject {
    /// The server's own temporary folder; tests may keep their files under it.
    var directory: URL { get }
    /// `unix:/…/native`, for `PULSE_SERVER` or `pa_context_connect`: the same across restarts.
    var serverAddress: String { get }
    /// Environment for child processes (`pactl`, a daemon under test) that should use this server.
    var clientEnvironment: [String: String] { get }
    var isRunning: Bool { get }
    /// Starts the server if it is not running and waits until a client can connect and find the null sink.
    func start(timeout: Double) throws
    /// Kills the server (SIGKILL: like a crash, so that clients see the connection drop at once).
    func stop()
    /// What the server wrote to stdout/stderr so far.
    func logText() -> String
}

extension PrivateSoundServer {
    public func start() throws { try start(timeout: 10) }

    /// Kills the server and starts it again on the same socket path.
    public func restart(timeout: Double = 10) throws {
        stop()
        try start(timeout: timeout)
    }

    /// Runs `pactl` against this server and returns its standard output.
    public func pactl(_ arguments: String...) throws -> String {
        try runPactl(arguments, environment: clientEnvironment, scratch: directory.path)
    }

    /// `Corked:` values of all sink inputs (playback streams) on this server, from `pactl list sink-inputs`.
    public func sinkInputCorkStates() throws -> [Bool] {
        try pactl("list", "sink-inputs").split(separator: "\n").compactMap { line in
            let t = line.trimmed
            guard t.hasPrefix("Corked:") else { return nil }
            return t.hasSuffix("yes")
        }
    }
}

extension PrivateSoundServer {
    /// Each sink input's properties (`key = "value"` under `Properties:` in `pactl list sink-inputs`),
    /// with its index as `"index"`.
    public func sinkInputProperties() throws -> [[String: String]] {
        parsePactlProperties(try pactl("list", "sink-inputs"), heading: "Sink Input #")
    }

    /// Each client's properties, from `pactl list clients`, with its index as `"index"`.
    public func clientProperties() throws -> [[String: String]] {
        parsePactlProperties(try pactl("list", "clients"), heading: "Client #")
    }
}

/// Objects of `pactl list` output as property dictionaries (one per `heading` line).
func parsePactlProperties(_ output: String, heading: String) -> [[String: String]] {
    var objects: [[String: String]] = []
    for line in output.split(separator: "\n") {
        let t = line.trimmed
        if t.hasPrefix(heading) {
            objects.append(["index": String(t.dropFirst(heading.count))])
            continue
        }
        guard !objects.isEmpty, let equals = t.range(of: " = \""), t.hasSuffix("\"") else { continue }
        let key = String(t[..<equals.lowerBound])
        let value = String(t[equals.upperBound...].dropLast())
        objects[objects.count - 1][key] = value
    }
    return objects
}

/// `pactl arguments…` to its end; its standard output, or a failure with its status and output.
func runPactl(_ arguments: [String], environment: [String: String], scratch: String) throws -> String {
    let outPath = scratch + "/pactl-\(UInt64.random(in: 0...UInt64.max)).out"
    defer { unlink(outPath) }
    let child: pid_t
    do {
        child = try Spawn.start("/usr/bin/pactl", arguments, environment: environment, stdout: .file(outPath, append: false), stderr: .stdout)
    } catch {
        throw TestFailure(error.description)
    }
    var status: Int32 = 0
    _ = try? SystemCall.retryingOnInterrupt { waitpid(child, &status, 0) }
    let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    guard status == 0 else {
        throw TestFailure("pactl \(arguments.joined(separator: " ")) failed (wait status \(status)): \(output)")
    }
    return output
}

/// The two servers a Linux desktop runs: PulseAudio itself, and PipeWire's pulse server
/// (Debian 12's desktop default). Tests take it as an argument to run against both.
public enum SoundServerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case pulseAudio
    case pipeWire

    public var description: String { rawValue }

    /// A new private server of this kind; running unless `started` is false (then `start()` it later).
    public func make(started: Bool = true) throws -> any PrivateSoundServer {
        switch self {
        case .pulseAudio: try PrivatePulseServer(started: started)
        case .pipeWire: try PrivatePipeWireServer(started: started)
        }
    }
}

/// A fresh owner-only temporary folder `…/<prefix>-XXXXXX`.
func makeTemporaryFolder(prefix: String) throws -> String {
    var template = Array((NSTemporaryDirectory() + prefix + "-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else {
        throw TestFailure("mkdtemp failed: \(SystemCall.lastError)")
    }
    return String(cString: made)
}
