// SPDX-License-Identifier: GPL-3.0-or-later
import A11yTestSupport
import Foundation
import Testing

/// The Piper worker is shut in as the eSpeak worker is (issue 27): a11yd's own binary sets
/// no_new_privs, Landlock and a seccomp filter, then executes Python inside, which keeps them all.
@Suite struct PiperSandboxTests {
    /// What Python is refused inside the launcher, tried one by one, and that Piper still loads
    /// and speaks there.
    static let probe = """
        import os, sys
        print("protection", os.environ.get("A11YD_WORKER_PROTECTION", "none"))
        def attempt(name, action):
            try:
                result = action()
                if name == "fork" and result == 0:
                    os._exit(0)
                print(name, "allowed")
            except OSError as error:
                print(name, "refused", error.errno)
        import socket
        attempt("inet-socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        attempt("unix-socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
        attempt("inet6-socket", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def uring():  # io_uring_setup(8, params): a ring, whose requests could make sockets
            descriptor = libc.syscall(425, 8, ctypes.create_string_buffer(120))
            if descriptor < 0:
                raise OSError(ctypes.get_errno(), "io_uring_setup")
        attempt("io-uring", uring)
        attempt("fork", os.fork)
        attempt("write-file", lambda: open(sys.argv[1], "w"))
        attempt("read-outside", lambda: open("/etc/passwd").read())
        attempt("exec", lambda: os.execv("/bin/true", ["true"]))
        import threading
        done = []
        thread = threading.Thread(target=lambda: done.append(1))
        thread.start(); thread.join()
        print("thread", "works" if done else "fails")
        from piper import PiperVoice
        voice = PiperVoice.load(sys.argv[2])
        audio = b"".join(chunk.audio_int16_bytes for chunk in voice.synthesize("Hello."))
        print("synthesis", "works" if len(audio) > 4000 else "fails")
        """

    @Test func pythonInsideTheLauncherCanSpeakAndNothingElse() async throws {
        let data = try PiperTestVoice.dataHome() + "/a11yd"
        let forbidden = NSTemporaryDirectory() + "a11yd-piper-sandbox-\(getpid())"
        let result = try await run(
            Binaries.daemon,
            ["--engine-worker", "--exec", data + "/piper/venv/bin/python3", "--read", data + "/piper", "--read", data + "/voices",
             "--", "-c", Self.probe, forbidden, data + "/voices/\(PiperTestVoice.name).onnx"],
            environment: ["HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Set(result.stdout.split(separator: "\n").map(String.init))
        #expect(lines.contains { $0.hasPrefix("protection landlock (ABI") && $0.contains("seccomp") && $0.hasSuffix("no_new_privs") }, "\(lines)")
        for line in [
            "inet-socket refused 1", "unix-socket refused 1", "inet6-socket refused 1", "io-uring refused 1", "fork refused 1", "write-file refused 13", "read-outside refused 13",
            "exec refused 13", "thread works", "synthesis works",
        ] {
            #expect(lines.contains(line), "\(line): \(result.stdout)")
        }
        #expect(!FileManager.default.fileExists(atPath: forbidden))
    }
}

/// Issue 27's first line, as a user meets it: the built a11yd (its own Landlock, its launcher, the
/// installed runtime and voice found under `$XDG_DATA_HOME`), then `a11ysay --voice piper:… "…"`,
/// heard at the null sink, and the log saying the worker is shut in.
@Suite(.serialized) struct PiperDaemonProcessTests {
    /// `a11ysay --wait --voice piper:…` through the built daemon: it exits 0, a sentence is heard at the
    /// sink, and the daemon's log says its Piper worker was ready.
    static func expectHeardInThePiperVoice(
        daemon: ChildProcess, sandbox: Sandbox, pulse: PrivatePulseServer, environment: [String: String]
    ) async throws {
        let recorder = MonitorRecorder(server: pulse.serverAddress)
        try recorder.start()
        let said = try await run(
            Binaries.say, ["--socket", sandbox.socketPath, "--wait", "--voice", PiperTestVoice.identifier, "Hello, this is the natural voice."],
            environment: environment, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(150))
        let recording = recorder.stop()
        #expect(said.status == 0, "\(said.stderr) \(daemon.log)")
        #expect(recording.voicedDuration > 1.0, "heard: \(recording.voicedDuration) s voiced")
        #expect(daemon.log.contains("piper engine worker ready"), "\(daemon.log)")
    }

    @Test func a11ysayWithThePiperVoiceIsHeardThroughTheBuiltDaemon() async throws {
        let pulse = try PrivatePulseServer()
        let sandbox = try Sandbox()
        var environment = sandbox.environment(pulse: pulse)
        environment.merge(try PiperTestVoice.environment()) { _, piper in piper }
        let daemon = try ChildProcess(
            Binaries.daemon, ["--socket", sandbox.socketPath, "--no-ssip"], environment: environment, logPath: sandbox.root + "/a11yd.log")
        try await waitUntilAccepts(sandbox.socketPath)
        try await Self.expectHeardInThePiperVoice(daemon: daemon, sandbox: sandbox, pulse: pulse, environment: environment)
        #expect(daemon.log.contains("landlock (ABI") && daemon.log.contains("seccomp (no network, no new process)"), "\(daemon.log)")
        let voices = try await run(Binaries.say, ["--socket", sandbox.socketPath, "--list-voices"], environment: environment, timeout: .seconds(20))
        #expect(voices.stdout.split(separator: "\n").contains { $0.hasPrefix("\(PiperTestVoice.identifier)\tpiper\ten-us,en\tmedium\t") }, "\(voices.stdout)")
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0, "\(daemon.log)")
    }
}
