// SPDX-License-Identifier: GPL-3.0-or-later
import A11yTestSupport
import Foundation
import Glibc
import Logging
import Testing

@testable import A11yEngineWorker

/// A real worker's stderr, started as a11yd starts one (`WorkerProcess.start`): what it writes,
/// colour codes, a huge line, a flood, reaches the logger as bounded messages at their levels, the
/// worker never waits for a11yd to read it, and the pipe is closed once the worker is reaped.
struct WorkerStderrReaderTests {
    /// onnxruntime's two lines at start in the sandbox, in its colours; the Piper worker's own
    /// warning; a traceback; a line of 100,000 bytes; 300 lines; a line of 4 MiB, far more than a
    /// pipe holds. Then it exits, closing its channel.
    static let script = #"""
        esc=$(printf '\033')
        printf '%s[0;93m2025-10-02 09:14:03.104613317 [W:onnxruntime:Default, device_discovery.cc:164 DiscoverDevicesForPlatform] GPU device discovery failed: device_discovery.cc:89 ReadFileContents Failed to open file: "/sys/class/drm/card0/device/vendor": Permission denied%s[m\n' "$esc" "$esc" >&2
        printf '%s[0;31m2025-10-02 09:14:03.2 [E:onnxruntime:Default, telemetry.cc:12 Persist] Failed to persist telemetry device ID%s[m\n' "$esc" "$esc" >&2
        printf 'a11yd-piper: piper:test has no phoneme (U+0294): dropped\n' >&2
        printf 'Traceback (most recent call last):\n  File "w.py", line 1, in <module>\n    boom()\nValueError: boom\n' >&2
        head -c 100000 /dev/zero | tr '\0' 'L' >&2; echo >&2
        seq 1 300 | sed 's/^/flood /' >&2
        head -c 4194304 /dev/zero | tr '\0' 'F' >&2
        """#

    @Test func whatAWorkerWritesOnItsStderrIsLoggedBoundedAtItsLevels() throws {
        let log = RecordedLog()
        let (worker, channel) = try WorkerProcess.start(executable: "/bin/sh", arguments: ["-c", Self.script], engine: "test", logger: log.logger())
        let pipe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(worker.pid)/fd/2")
        #expect(pipe.hasPrefix("pipe:"), "\(pipe)")
        // It writes 4 MiB on its stderr and exits: its channel closes, unless it waits for a11yd to
        // read (it would then be silent, spending no CPU).
        guard SilenceWatchTests.watch((worker, channel), limit: .seconds(10)) == .closed else {
            Issue.record("the worker did not end after writing: it waited for its stderr to be read")
            _ = worker.wait(killing: true)
            return
        }
        #expect(worker.wait(killing: false) == "it exited with status 0")

        let entries = log.all
        let messages = entries.map(\.message)
        for entry in entries {
            #expect(!entry.message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(entry.message.debugDescription)")
            #expect(entry.message.utf8.count <= 1100, "a message of \(entry.message.utf8.count) bytes")
            #expect(entry.message.hasPrefix("test worker: "), "\(entry.message)")
            #expect(entry.metadata == ["engine": "test", "pid": "\(worker.pid)"])
        }
        #expect(entries.count <= 41, "the window's 40 messages and the note of the drops: \(messages)")
        func level(of fragment: String) -> Logger.Level? { entries.first { $0.message.contains(fragment) }?.level }
        #expect(level(of: "[W:onnxruntime:Default, device_discovery.cc:164 DiscoverDevicesForPlatform] GPU device discovery failed") == .warning, "\(messages)")
        #expect(level(of: "Failed to persist telemetry device ID") == .error, "\(messages)")
        #expect(level(of: "test worker: piper:test has no phoneme (U+0294): dropped") == .warning, "\(messages)")
        #expect(level(of: "Traceback (most recent call last): | File \"w.py\", line 1, in <module> | boom() | ValueError: boom") == .error, "\(messages)")
        #expect(messages.contains("test worker: " + String(repeating: "L", count: 1024) + "… (cut: 98976 more bytes)"), "\(messages.map { $0.prefix(80) })")
        #expect(messages.contains("test worker: flood 35") && !messages.contains("test worker: flood 36"), "\(messages)")
        // The 265 flood lines past the window's 40 messages, and the 4 MiB line.
        #expect(entries.last == RecordedLog.Record(
            level: .warning, message: "test worker: 266 more messages dropped (at most 40 and 16384 bytes in 10.0 seconds)",
            metadata: ["engine": "test", "pid": "\(worker.pid)"]), "\(messages.suffix(2))")

        // The pipe is closed: no descriptor of this process is it any more.
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        let still = open.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == pipe }
        #expect(still.isEmpty, "descriptors \(still) are still the worker's stderr \(pipe)")
    }

    /// A worker killed while it writes: its pipe ends with it, and what it wrote is logged.
    @Test func aKilledWorkersPipeIsClosedWhenItIsReaped() throws {
        let log = RecordedLog()
        let (worker, channel) = try WorkerProcess.start(
            executable: "/bin/sh", arguments: ["-c", "echo 'a11yd-piper: started' >&2; while :; do echo busy >&2; done"], engine: "test", logger: log.logger())
        let pipe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(worker.pid)/fd/2")
        // Killed once its first line is logged (read while it writes).
        let deadline = ContinuousClock.now + .seconds(10)
        while log.all.isEmpty, ContinuousClock.now < deadline { usleep(1000) }
        #expect(worker.wait(killing: true) == "it was killed by signal 9 (SIGKILL)")
        close(channel)
        #expect(log.all.first?.message == "test worker: started")
        #expect(log.all.count <= 41, "bounded while it floods: \(log.all.count)")
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        #expect(!open.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == pipe })
    }
}
