// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yTestSupport
import Foundation
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import A11yEngineWorker

/// A worker that is no process: what it is sent is kept, its CPU time is what the test says, and
/// it ends at once, as the test's loop's future.
final class StandInWorker: LinkedWorker {
    let pid: Int32
    private let loop: EmbeddedEventLoop
    let sent = Mutex<[WorkerMessage]>([])
    /// nil: not ended; else whether it was killed.
    let ended = Mutex<Bool?>(nil)
    let cpu = Mutex<Duration?>(.zero)

    init(pid: Int32, loop: EmbeddedEventLoop) {
        self.pid = pid
        self.loop = loop
    }

    func send(_ message: WorkerMessage) { sent.withLock { $0.append(message) } }
    func cpuTime() -> Duration? { cpu.withLock { $0 } }
    func waitsForTheMachine() -> Bool { false }

    func end(kill: Bool) -> EventLoopFuture<String> {
        ended.withLock { $0 = kill }
        return loop.makeSucceededFuture(kill ? "it was killed by signal 9 (SIGKILL)" : "it exited with status 0")
    }
}

/// Starts stand-in workers, numbered from 1.
final class StandInStarter: WorkerStarter {
    private let loop: EmbeddedEventLoop
    let workers = Mutex<[StandInWorker]>([])

    init(loop: EmbeddedEventLoop) { self.loop = loop }

    func start(for link: WorkerLink) throws(WorkerFailure) -> any LinkedWorker {
        workers.withLock { workers in
            let worker = StandInWorker(pid: Int32(workers.count + 1), loop: loop)
            workers.append(worker)
            return worker
        }
    }

    var count: Int { workers.withLock { $0.count } }
    var last: StandInWorker { workers.withLock { $0.last! } }
}

/// `WorkerLink`, the supervisor's executor, on an `EmbeddedEventLoop`: its limits (ready, hang,
/// idle) are tasks on the loop, so virtual time tells them, and nothing sleeps.
@Suite struct WorkerLinkTests {
    let loop = EmbeddedEventLoop()
    let starter: StandInStarter
    let log = RecordedLog()
    let link: WorkerLink
    /// How each request ended, by its name.
    let ends = Ends()

    final class Ends: Sendable {
        private let ends = Mutex<[String: String]>([:])
        func record(_ name: String, _ end: String) { ends.withLock { $0[name] = end } }
        subscript(_ name: String) -> String? { ends.withLock { $0[name] } }
    }

    init() {
        starter = StandInStarter(loop: loop)
        link = WorkerLink(
            launch: WorkerLaunch(
                engine: .piper, executable: "/x", arguments: [], environment: [:], readyLimit: .seconds(10), hangLimit: .seconds(2),
                idleLimit: .seconds(60)),
            sampleRate: 22050, logger: log.logger(), starter: starter, loop: loop)
    }

    func say(_ name: String) {
        let sink = SynthesisSink(
            yield: { _ in },
            finish: { [ends] error in ends.record(name, error.map { "\($0)" } ?? "done") })
        let utterance = Utterance(segments: [SpeechSegment(content: .text(name), voice: "fr", sourceStart: 0, sourceLength: name.count)], rate: 175, pitch: 50, volume: 100)
        link.submit(link.nextTicket(), .synthesis(WorkerEngine.Job(request: utterance, sink: sink)))
        loop.run()
    }

    func end(of name: String) -> String? { ends[name] }

    func ready(_ worker: StandInWorker) {
        link.received(.ready(sampleRate: 22050, protection: "seccomp"), from: worker)
        loop.run()
    }

    func logged(_ fragment: String) -> Bool { log.all.contains { $0.message.contains(fragment) } }

    /// A worker that does not say `ready` within the ready limit is ended, and another started.
    @Test func theReadyLimit() {
        say("a")
        let first = starter.last
        loop.advanceTime(by: .milliseconds(9_900))
        #expect(first.ended.withLock { $0 } == nil, "still within the limit")
        loop.advanceTime(by: .milliseconds(100))
        #expect(first.ended.withLock { $0 } == true, "killed at the limit")
        #expect(log.all.contains { $0.metadata["error"] == "it was not ready within 10.0 seconds; it was killed by signal 9 (SIGKILL)" }, "\(log.all)")
        #expect(starter.count == 2, "a second attempt")
        ready(starter.last)
        #expect(starter.last.sent.withLock { $0.count } == 1, "the request went to the second worker")
    }

    /// A worker silent while saying something, spending no CPU, is hung at the hang limit; one
    /// that keeps spending CPU is waited for; a chunk starts the silence again.
    @Test func theHangLimitAsksTheWorkersCPUTime() {
        say("a")
        let worker = starter.last
        ready(worker)
        guard case .synthesize(let id, _)? = worker.sent.withLock({ $0.first }) else {
            Issue.record("nothing sent")
            return
        }
        // Working: a little CPU at every look, for three times the limit.
        for _ in 0..<24 {
            worker.cpu.withLock { $0 = ($0 ?? .zero) + .milliseconds(10) }
            loop.advanceTime(by: .milliseconds(250))
        }
        #expect(worker.ended.withLock { $0 } == nil, "a worker that works is waited for")
        link.received(.chunk(id: id, SynthesisChunk(samples: [1])), from: worker)
        loop.advanceTime(by: .milliseconds(1_900))
        #expect(worker.ended.withLock { $0 } == nil, "the chunk started the silence again")
        loop.advanceTime(by: .milliseconds(100))
        #expect(worker.ended.withLock { $0 } == true, "silent and spending nothing for the limit: hung")
        #expect(end(of: "a")?.contains("stopped responding (nothing for 2.0 seconds)") == true, "\(end(of: "a") ?? "no end")")
        #expect(starter.count == 2, "another worker at once")
    }

    /// An idle worker is ended gently after the idle limit; a request meanwhile puts the limit off.
    @Test func theIdleLimit() {
        say("a")
        let worker = starter.last
        ready(worker)
        link.received(.end(id: 1, failure: nil), from: worker)
        #expect(end(of: "a") == "done")
        loop.advanceTime(by: .seconds(59))
        #expect(worker.ended.withLock { $0 } == nil, "idle for less than the limit")
        say("b")
        loop.advanceTime(by: .seconds(1))
        link.received(.end(id: 2, failure: nil), from: worker)
        loop.advanceTime(by: .seconds(59))
        #expect(worker.ended.withLock { $0 } == nil, "the request put the limit off")
        loop.advanceTime(by: .seconds(1))
        #expect(worker.ended.withLock { $0 } == false, "ended gently, not killed")
        #expect(logged("the piper worker ended after 60.0 seconds idle, to give its memory back"), "\(log.all)")
        say("c")
        #expect(starter.count == 2, "the next request starts another")
    }

    /// Shut down: the request in hand fails, the worker is ended, what is asked afterwards fails.
    @Test func aShutDown() {
        say("a")
        ready(starter.last)
        link.shutDown()
        loop.run()
        #expect(end(of: "a")?.contains("the piper engine was shut down") == true)
        #expect(starter.last.ended.withLock { $0 } == true)
        say("b")
        #expect(end(of: "b")?.contains("the piper engine was shut down") == true)
    }

    /// The link knows no engine: of the files that serve requests through workers, none imports
    /// eSpeak's module (only `EngineFallback`, which makes eSpeak in process, and the worker's own side do).
    @Test func theLinkImportsNoEngine() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/A11yEngineWorker")
        for file in ["WorkerEngine.swift", "WorkerLink.swift", "WorkerSupervisor.swift", "SpawnedWorker.swift", "WorkerProcess.swift", "WorkerLaunch.swift", "SilenceWatch.swift"] {
            let imports = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8).split(separator: "\n").contains("import A11yEngine")
            #expect(!imports, "\(file) imports A11yEngine")
        }
    }
}
