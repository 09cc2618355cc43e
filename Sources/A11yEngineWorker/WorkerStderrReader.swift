// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import Dispatch
import Glibc
import Logging

/// Reads one worker's stderr (the read end of a pipe) on a thread of its own, and logs what
/// `WorkerStderrLines` makes of it as a11yd's own lines: "ENGINE worker: TEXT" at the line's level,
/// with the worker's engine and pid. It reads whenever something comes, and drops what is past the
/// limits rather than wait, so a worker writing on its stderr waits for a11yd no more than for any
/// pipe; it ends, closing the descriptor, when the pipe does (the worker is gone).
final class WorkerStderrReader: Sendable {
    /// Signalled once the descriptor is closed.
    private let done = DispatchSemaphore(value: 0)

    private init() {}

    /// Reads `descriptor`, which the reader owns from now on (and closes, even if it cannot start);
    /// nil if no thread could be started for it.
    static func start(descriptor: Int32, engine: String, pid: pid_t, logger: Logger) -> WorkerStderrReader? {
        let reader = WorkerStderrReader()
        let started = DetachedThread.start(name: "a11yd.stderr") {
            reader.run(descriptor: descriptor, engine: engine, pid: pid, logger: logger)
        }
        guard started == 0 else {
            close(descriptor)
            return nil
        }
        return reader
    }

    /// Waits, at most `limit`, for the pipe's end: true once the descriptor is closed and all the
    /// worker wrote is logged. A worker's pipe ends with it, unless something it started still
    /// holds its stderr (a sandboxed worker can start nothing).
    func waitForTheEnd(limit: Duration) -> Bool {
        done.wait(timeout: .now() + .milliseconds(Int(Self.milliseconds(limit)))) == .success
    }

    private func run(descriptor: Int32, engine: String, pid: pid_t, logger: Logger) {
        defer {
            close(descriptor)
            done.signal()
        }
        let metadata: Logger.Metadata = ["engine": "\(engine)", "pid": "\(pid)"]
        func log(_ records: [WorkerStderrLines.Record]) {
            for record in records {
                logger.log(level: record.level, "\(engine) worker: \(record.message)", metadata: metadata)
            }
        }
        let clock = ContinuousClock()
        var lines = WorkerStderrLines()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            // Asleep until bytes come or the pipe ends; or until a traceback has waited long enough
            // for its last line, or a window's drops can be told. Rounded up: woken early, it would
            // only wait again.
            let timeout = lines.nextTick.map { max(0, Self.milliseconds($0 - clock.now)) + 1 } ?? -1
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeout)
            if ready < 0 {
                guard errno == EINTR else { break }
                continue
            }
            if ready == 0 {
                log(lines.tick(now: clock.now))
                continue
            }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { break }
            log(lines.read(buffer[0..<count], now: clock.now))
        }
        log(lines.finish(now: clock.now))
    }

    /// `duration` in whole milliseconds, for poll and the semaphore (clamped: a bound far off waits long).
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds.multipliedReportingOverflow(by: 1000).partialValue + attoseconds / 1_000_000_000_000_000)
    }
}
