import A11yCore
import A11yProtocol
import A11yTestSupport
import Foundation
import NIOCore
import Synchronization
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

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

/// A child process (posix_spawn, reaped with waitpid) with stdout and stderr in files, that can
/// be polled from any task: the exit status, once reaped, is kept behind a lock.
final class ChildProcess: Sendable {
    let pid: Int32
    let logPath: String
    let errorPath: String
    private let status = Mutex<Int32?>(nil)

    /// stdout goes to `logPath`; stderr too unless `errorPath` is given.
    init(_ executable: String, _ arguments: [String], environment: [String: String], logPath: String, errorPath: String? = nil) throws {
        let child = try A11yTestSupport.ChildProcess.start(
            executable, arguments, environment: environment, stdoutPath: logPath, stderrPath: errorPath)
        self.pid = child.pid
        self.logPath = logPath
        self.errorPath = errorPath ?? logPath
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        }
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    var isRunning: Bool {
        status.withLock { status in
            if status != nil { return false }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid {
                status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                return false
            }
            if result < 0 {
                status = -1
                return false
            }
            return true
        }
    }

    func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for the exit (up to `timeout`) and returns the exit status (128+N for signal N).
    func waitForExit(timeout: Duration = .seconds(15)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { throw TestFailure("pid \(pid) still running after \(timeout); log:\n\(log)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return status.withLock { $0 } ?? -1
    }

    /// Waits until the log contains `text`.
    func waitForLog(_ text: String, timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !log.contains(text) {
            guard ContinuousClock.now < deadline else { throw TestFailure("no '\(text)' in the log after \(timeout):\n\(log)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

private let runCounter = Atomic<Int>(0)

/// Runs a command to its end; returns status and output (through files, not pipes).
@discardableResult
func run(
    _ executable: String, _ arguments: [String], environment: [String: String], timeout: Duration = .seconds(120)
) async throws -> (status: Int32, stdout: String, stderr: String) {
    let n = runCounter.add(1, ordering: .relaxed).newValue
    let base = NSTemporaryDirectory() + "a11y-svc-run-\(getpid())-\(n)"
    defer {
        unlink(base + ".out")
        unlink(base + ".err")
    }
    let child = try ChildProcess(executable, arguments, environment: environment, logPath: base + ".out", errorPath: base + ".err")
    let status: Int32
    do {
        status = try await child.waitForExit(timeout: timeout)
    } catch {
        child.signal(SIGKILL)
        throw TestFailure("\(executable) \(arguments) did not finish within \(timeout)")
    }
    return (status, child.log, child.errors)
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
        if let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = status.lastIndex(of: ")"), status[status.index(close, offsetBy: 2)] == "Z"
        {
            return nil
        }
        return pid
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

func isZombie(_ pid: Int32) -> Bool {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = status.lastIndex(of: ")")
    else { return true }
    return status[status.index(close, offsetBy: 2)] == "Z"
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

/// A protocol client for tests (as in A11yIntegrationTests): send lines, wait for messages.
actor TestClient {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    private var outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private(set) var received: [ServerMessage] = []
    private var reader: Task<Void, Never>?
    private(set) var closed = false

    private init(channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        self.channel = channel
    }

    deinit {
        outbound?.finish()
        reader?.cancel()
    }

    static func connect(path: String) async throws -> TestClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let client = TestClient(channel: channel)
        await client.startReading()
        return client
    }

    private func startReading() {
        let (inbound, outbound) = (channel.inbound, channel.outbound)
        self.outbound = outbound
        reader = Task {
            var carry: [UInt8] = []
            do {
                for try await buffer in inbound {
                    for byte in buffer.readableBytesView {
                        if byte == UInt8(ascii: "\n") {
                            let line = String(decoding: carry, as: UTF8.self)
                            carry.removeAll()
                            if let message = try? LineCodec.decodeMessage(line) { self.record(message) }
                        } else {
                            carry.append(byte)
                        }
                    }
                }
            } catch {}
            self.markClosed()
        }
    }

    private func record(_ message: ServerMessage) { received.append(message) }
    private func markClosed() { closed = true }

    func post(_ request: ClientRequest) async throws -> UInt64 {
        var request = request
        let tag = RequestID.string(UUID().uuidString)
        request.id = tag
        try await outbound?.write(ByteBuffer(string: LineCodec.encode(request) + "\n"))
        let reply = try await waitFor("reply to post") { $0.id == tag }
        guard let utterance = reply.utterance else { throw TestFailure("post refused: \(reply.error?.message ?? "?")") }
        return utterance
    }

    func finishOutbound() { outbound?.finish() }

    /// Closes the connection (both directions).
    func close() async {
        outbound?.finish()
        try? await channel.channel.close()
    }

    @discardableResult
    func waitFor(_ what: String, timeout: Duration = .seconds(20), _ matches: @Sendable (ServerMessage) -> Bool) async throws -> ServerMessage {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let message = received.first(where: matches) { return message }
            if ContinuousClock.now > deadline || closed {
                throw TestFailure("no \(what) (closed: \(closed)); got \(received.map { LineCodec.encode($0) })")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    func finished(_ utterance: UInt64, timeout: Duration = .seconds(30)) async throws -> ServerMessage {
        try await waitFor("finished #\(utterance)", timeout: timeout) { $0.event == "finished" && $0.utterance == utterance }
    }

    /// Waits until the daemon closes the connection.
    func waitUntilClosed(timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !closed {
            guard ContinuousClock.now < deadline else { throw TestFailure("connection still open after \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// A long French sentence (several seconds), so that it is still speaking when a signal arrives.
let longSentence = """
    La synthèse vocale lit ce long paragraphe pendant plusieurs secondes, afin que nous puissions \
    l'interrompre au beau milieu, et vérifier que chaque annonce en attente reçoit bien sa fin.
    """
