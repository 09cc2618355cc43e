// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import A11ySystem
import A11yTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built executables: `a11yd` and `a11ysay` sit next to the test bundle in `.build/<triple>/debug/`.
enum Binaries {
    static let folder: String = {
        var candidates: [String] = []
        if let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((me as NSString).deletingLastPathComponent)
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().path)
        candidates.append(Bundle.main.bundlePath)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0 + "/a11yd") } ?? candidates[0]
    }()
    static var daemon: String { folder + "/a11yd" }
    static var say: String { folder + "/a11ysay" }
    /// The package root (for the unit files and the Makefile).
    static var packageRoot: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }
}

/// A temporary folder tree for one test: runtime dir, config home, state home.
final class Sandbox {
    let root: String
    var runtime: String { root + "/run" }
    var configHome: String { root + "/config" }
    var stateHome: String { root + "/state" }
    var socketPath: String { runtime + "/a11yd/socket" }
    var configFile: String { configHome + "/a11yd/a11yd.toml" }
    var autospawnLog: String { stateHome + "/a11yd/a11yd.log" }

    init() throws {
        var template = Array((NSTemporaryDirectory() + "a11y-svc-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
        root = String(cString: made)
        for folder in [runtime, configHome + "/a11yd", stateHome] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    func writeConfig(_ text: String) throws {
        try text.write(toFile: configFile, atomically: false, encoding: .utf8)
    }

    /// The built daemon on this sandbox's socket and the private PulseAudio, once it accepts.
    func startDaemon(pulse: PrivatePulseServer, _ arguments: [String] = []) async throws -> ChildProcess {
        let daemon = try ChildProcess(
            Binaries.daemon, ["--socket", socketPath] + arguments, environment: environment(pulse: pulse),
            logPath: root + "/a11yd.log")
        try await waitUntilAccepts(socketPath)
        return daemon
    }

    /// The sandbox's SSIP socket (`ssipPath`), for `startDaemonWithSSIP`.
    var ssipPath: String { root + "/ssip" }

    /// The built daemon with its SSIP front end on `ssipPath` too, and a raw SSIP client connected to it.
    func startDaemonWithSSIP(pulse: PrivatePulseServer) async throws -> (daemon: ChildProcess, ssip: RawSSIPClient) {
        let daemon = try await startDaemon(pulse: pulse, ["--ssip-socket", ssipPath])
        try await waitUntilAccepts(ssipPath)
        let path = ssipPath
        return (daemon, try await offThePool { try RawSSIPClient(path: path) })
    }

    /// Environment for the daemon and a11ysay: this sandbox, the private PulseAudio, French voice.
    func environment(pulse: PrivatePulseServer) -> [String: String] {
        var env = pulse.clientEnvironment
        env["XDG_RUNTIME_DIR"] = runtime
        env["XDG_CONFIG_HOME"] = configHome
        env["XDG_STATE_HOME"] = stateHome
        env["LANG"] = "fr_FR.UTF-8"
        for key in ["A11YD_SOCKET", "A11YD_NO_AUTOSPAWN", "JOURNAL_STREAM", "NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS"] {
            env.removeValue(forKey: key)
        }
        return env
    }
}

/// Processes running `executable` with `argument` on their command line (scanning /proc).
func processes(running executable: String, withArgument argument: String) -> [Int32] {
    let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: executable)) ?? executable
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry) else { return nil }
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") else { return nil }
        guard exe == target || (exe as NSString).lastPathComponent == (target as NSString).lastPathComponent else { return nil }
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard words.contains(argument) else { return nil }
        // A zombie (exited, not yet reaped) does not count as running.
        return isZombie(pid) ? nil : pid
    }
}

/// Stops daemons a test started (by pid) and waits until they are gone.
func terminate(_ pids: [Int32]) async {
    for pid in pids { kill(pid, SIGTERM) }
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline, pids.contains(where: { kill($0, 0) == 0 && !isZombie($0) }) {
        try? await Task.sleep(for: .milliseconds(10))
    }
    for pid in pids where kill(pid, 0) == 0 && !isZombie(pid) { kill(pid, SIGKILL) }
}

func socketAccepts(_ path: String) -> Bool { SocketProbe.accepts(path: path) }

func waitUntilAccepts(_ path: String, timeout: Duration = .seconds(15)) async throws {
    let deadline = ContinuousClock.now + timeout
    while !socketAccepts(path) {
        guard ContinuousClock.now < deadline else { throw TestFailure("\(path) does not accept after \(timeout)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

func isSocket(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
}

/// A long French sentence (several seconds), so that it is still speaking when a signal arrives.
let longSentence = """
    La synthèse vocale lit ce long paragraphe pendant plusieurs secondes, afin que nous puissions \
    l'interrompre au beau milieu, et vérifier que chaque annonce en attente reçoit bien sa fin.
    """
