// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Testing

@testable import A11yEngineWorker

/// A silent worker is hung when it spends no CPU for the limit, or loops; never while it works,
/// however slowly (a busy machine): row by row, then with real processes.
struct SilenceWatchTests {
    static let limit = Duration.seconds(2)
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start.advanced(by: .milliseconds(Int(seconds * 1000))) }
    func cpu(_ seconds: Double) -> Duration { .milliseconds(Int(seconds * 1000)) }

    /// (seconds since the silence began, the worker's CPU time, the verdict)
    typealias Row = (at: Double, cpu: Double?, verdict: SilenceWatch.Verdict)

    func run(_ rows: [Row], cpuAtStart: Double? = 10) {
        var watch = SilenceWatch(limit: Self.limit, now: start, cpu: cpuAtStart.map(cpu))
        for row in rows {
            let verdict = watch.verdict(now: at(row.at), cpu: row.cpu.map(cpu))
            #expect(verdict == row.verdict, "at \(row.at) s, CPU \(row.cpu.map { "\($0)" } ?? "unknown")")
        }
    }

    @Test func aStoppedWorkerIsHungAfterTheLimit() {
        run([(0.25, 10, .wait(.milliseconds(250))), (1.9, 10, .wait(.milliseconds(100))), (2.0, 10, .hung(.idle))])
    }

    @Test func aWorkerThatKeepsSpendingCPUIsWaitedForPastTheLimit() {
        run([(1.0, 10.1, .wait(.milliseconds(250))), (2.5, 10.2, .wait(.milliseconds(250))), (4.0, 10.4, .wait(.milliseconds(250))),
             (6.0, 10.5, .wait(.milliseconds(250)))])
    }

    @Test func aWorkerThatStopsSpendingIsHungTheLimitAfterItLastWorked() {
        run([(1.0, 10.3, .wait(.milliseconds(250))), (2.9, 10.3, .wait(.milliseconds(100))), (3.0, 10.3, .hung(.idle))])
    }

    @Test func aWorkerLoopingWithoutAWordIsHungAtTheRunawayLimit() {
        run([(1.0, 11.0, .wait(.milliseconds(250))), (3.0, 13.0, .wait(.milliseconds(250))), (4.0, 14.0, .hung(.looping))])
    }

    /// Spending no CPU while a thread is runnable or in the disk's sleep is waiting for the machine
    /// (an a11yd restarted on a swamped machine lost its first words to a fresh worker killed so),
    /// for up to `machineWaitFactor` limits of silence; then, and without it, the limit decides.
    @Test func aWorkerWaitingForTheMachineIsWaitedForWithinABound() {
        var watch = SilenceWatch(limit: Self.limit, now: start, cpu: cpu(10))
        for second in stride(from: 1.0, through: 9.5, by: 0.5) {
            #expect(watch.verdict(now: at(second), cpu: cpu(10), waitsForTheMachine: true) == .wait(.milliseconds(250)), "at \(second) s")
        }
        // Past 10 s of silence, waiting for the machine no longer counts: hung 2 s after it last did.
        #expect(watch.verdict(now: at(11.0), cpu: cpu(10), waitsForTheMachine: true) == .wait(.milliseconds(250)))
        #expect(watch.verdict(now: at(11.5), cpu: cpu(10), waitsForTheMachine: true) == .hung(.idle))
        var sleeping = SilenceWatch(limit: Self.limit, now: start, cpu: cpu(10))
        #expect(sleeping.verdict(now: at(2.0), cpu: cpu(10), waitsForTheMachine: false) == .hung(.idle), "asleep: as before")
    }

    @Test func theRunStateIsTheLetterAfterTheCommandName() {
        #expect(WorkerProcess.runState(ofStat: "4242 (a11yd) R 1 4242 4242 0 -1") == "R")
        #expect(WorkerProcess.runState(ofStat: "4242 (a) b) D 1 4242") == "D", "a name with ') ' in it")
        #expect(WorkerProcess.runState(ofStat: "garbage") == nil)
    }

    @Test func withoutItsCPUTimeWallTimeDecides() {
        run([(1.0, nil, .wait(.milliseconds(250))), (2.0, nil, .hung(.idle))], cpuAtStart: nil)
    }

    // MARK: Real processes

    /// A worker started as a11yd starts one, and a11yd's end of its channel.
    static func worker(_ script: String) throws -> (process: WorkerProcess, channel: Int32) {
        try WorkerProcess.start(executable: "/usr/bin/python3", arguments: ["-c", script])
    }

    enum Watched: Equatable {
        case hung
        /// Its channel closed (it exited).
        case closed
    }

    /// What the engine link does with a silent worker, in real time: `SilenceWatch` asked at each
    /// of its slices, with the worker's CPU time and run state read for real, until it calls the
    /// worker hung or the worker's channel closes. Closes the channel.
    static func watch(_ worker: (process: WorkerProcess, channel: Int32), limit: Duration) -> Watched {
        defer { close(worker.channel) }
        let clock = ContinuousClock()
        var silence = SilenceWatch(limit: limit, now: clock.now, cpu: worker.process.cpuTime())
        var wait = SilenceWatch.slice(of: limit)
        while true {
            var poller = pollfd(fd: worker.channel, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Int32((wait / .milliseconds(1)).rounded(.up))) > 0 { return .closed }
            switch silence.verdict(now: clock.now, cpu: worker.process.cpuTime(), waitsForTheMachine: worker.process.waitsForTheMachine()) {
            case .hung: return .hung
            case .wait(let next): wait = next
            }
        }
    }

    /// Burns `seconds` of CPU, then exits (its channel closes).
    static let burnsThenExits = "import time\nt = time.process_time()\nwhile time.process_time() - t < %.2f: pass"

    /// What a busy machine does to a worker: it runs a fifth of the time. Silent for several times
    /// the limit while it works, it is waited for, and its end is seen (a limit on silence alone
    /// took it for hung and killed it: every item `error` at load 12).
    @Test func aWorkerSlowedByABusyMachineIsNotTakenForHung() async throws {
        let worker = try Self.worker(String(format: Self.burnsThenExits, 0.5))
        let pid = worker.process.pid
        let throttle = Task.detached {
            while !Task.isCancelled {
                kill(pid, SIGSTOP)
                usleep(40_000)
                kill(pid, SIGCONT)
                usleep(10_000)
            }
        }
        let began = ContinuousClock.now
        let watched = Self.watch(worker, limit: .milliseconds(500))
        throttle.cancel()
        _ = await throttle.value
        kill(pid, SIGCONT)
        let took = ContinuousClock.now - began
        #expect(watched == .closed, "taken for hung after \(took)")
        #expect(took > .seconds(1), "it was slowed down: \(took)")
        _ = worker.process.wait(killing: watched == .hung)
    }

    @Test func aStoppedWorkerIsSilent() throws {
        let worker = try Self.worker("import time\ntime.sleep(30)")
        kill(worker.process.pid, SIGSTOP)
        #expect(Self.watch(worker, limit: .milliseconds(500)) == .hung, "a stopped worker was not taken for hung")
        #expect(worker.process.wait(killing: true).contains("SIGKILL"))
    }

    /// Read from /proc for real: a looping worker's thread is runnable, a sleeping one's is not.
    @Test func aRunnableWorkerWaitsForTheMachineASleepingOneDoesNot() throws {
        let (looping, loopingChannel) = try Self.worker("while True: pass")
        let (sleeping, sleepingChannel) = try Self.worker("import time\ntime.sleep(30)")
        defer {
            close(loopingChannel)
            close(sleepingChannel)
        }
        // Python starts (reading, running: R or D) before it loops or sleeps; on a busy machine, for
        // a while: each is given 10 s to be seen as it then stays.
        func seen(_ condition: () -> Bool) -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if condition() { return true }
                usleep(20_000)
            }
            return false
        }
        #expect(seen { looping.waitsForTheMachine() }, "looping: R")
        #expect(seen { !sleeping.waitsForTheMachine() }, "asleep: S")
        #expect(looping.waitsForTheMachine(), "still looping: R")
        _ = looping.wait(killing: true)
        _ = sleeping.wait(killing: true)
    }

    @Test func aLoopingWorkerIsSilent() throws {
        let worker = try Self.worker("while True: pass")
        #expect(Self.watch(worker, limit: .milliseconds(300)) == .hung, "a looping worker was not taken for hung")
        #expect(worker.process.cpuTime().map { $0 >= .milliseconds(600) } == true, "it looped for twice the limit of CPU")
        _ = worker.process.wait(killing: true)
    }
}
