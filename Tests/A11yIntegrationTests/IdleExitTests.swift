// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11yDaemon
import A11yTestSupport
import Foundation
import Testing

/// Idle exit waits for what idleness depends on, without polling: a client leaving, the last item
/// finishing, a reload turning it on. The daemon runs in this process with idle time measured on a
/// manual clock: when it ends is decided by the timer idle exit armed, not by how late it fired.
@Suite(.serialized) struct IdleExitTests {
    /// spd-say closes its SSIP connection right after SPEAK: the daemon has no client while it still
    /// speaks, and the idle time starts only when the item has finished.
    @Test func theIdleTimeStartsWhenTheLastItemOfAClientThatLeftHasFinished() async throws {
        let clock = ManualClock()
        var configuration = DaemonConfiguration()
        configuration.idleExitSeconds = 1
        let daemon = try await DaemonHarness(configuration: configuration, ssip: true, idleExitClock: clock)
        let events = daemon.speech.events()
        let clients = try speechDispatcherClientEnvironment(
            socket: try #require(daemon.ssipSocketPath), home: daemon.pulse.directory.path + "/client-home",
            runtime: daemon.pulse.directory.path + "/runtime", base: daemon.pulse.clientEnvironment)
        // `longSentence`'s first clause, about 4 s through spd-say: over 2 s of speech is all this needs.
        let sentence = "La synthèse vocale lit ce long paragraphe pendant plusieurs secondes."
        let said = try await run("/usr/bin/spd-say", ["-l", "fr", sentence], environment: clients, timeout: .seconds(30))
        #expect(said.status == 0, "\(said.stderr)")
        let leftAt = ContinuousClock.now
        // However long it speaks, no idle time runs meanwhile.
        #expect(clock.advance(by: .seconds(10)) == 0, "an idle timer ran out while the item spoke")
        var finished: ClientEvent?
        for await delivery in events {
            if case .finished = delivery.event {
                finished = delivery
                break
            }
        }
        let finishedAt = ContinuousClock.now
        #expect(finishedAt - leftAt > .seconds(2), "the sentence was spoken after spd-say left")
        guard case .finished(_, _, let reason, _) = finished?.event else {
            Issue.record("speech ended without a finished event")
            return
        }
        #expect(reason == .spoken, "\(String(describing: finished))")
        #expect(!daemon.hasEnded, "ended while the item spoke")
        #expect(await clock.settle { clock.sleeperCount == 1 }, "idle time armed once the last item finished")
        #expect(clock.advance(by: .milliseconds(999)) == 0, "exited before a second after the last item finished")
        #expect(clock.advance(by: .milliseconds(1)) == 1, "idle exit's timer runs out a second after the last item finished")
        #expect(await clock.settle { daemon.hasEnded }, "idle; exiting")
        // Its end threw nothing: a11yd would exit with status 0. Unended (a failure above), shut down.
        if daemon.hasEnded { try await daemon.end() }
        await daemon.shutDown()
    }

    @Test func aReloadThatTurnsIdleExitOnStartsTheIdleTimeAtOnce() async throws {
        let clock = ManualClock()
        var configuration = DaemonConfiguration()
        configuration.idleExitSeconds = 0
        let daemon = try await DaemonHarness(configuration: configuration, idleExitClock: clock)
        #expect(clock.advance(by: .milliseconds(1_500)) == 0, "idle exit is off")
        #expect(!daemon.hasEnded, "idle exit is off")
        try FileManager.default.createDirectory(atPath: daemon.lexiconFolder, withIntermediateDirectories: true)
        try "[daemon]\nidle_exit_seconds = 1\n".write(toFile: daemon.lexiconFolder + "/a11yd.toml", atomically: true, encoding: .utf8)
        // What SIGHUP does (DaemonProcessTests send it to a11yd).
        try await #require(daemon.service(ConfigReloadService.self)).reload()
        #expect(await clock.settle { clock.sleeperCount == 1 }, "idle time armed at the reload")
        #expect(clock.advance(by: .milliseconds(999)) == 0, "exited before a second after the reload")
        #expect(!daemon.hasEnded, "exited before a second after the reload")
        #expect(clock.advance(by: .milliseconds(1)) == 1, "idle exit's timer runs out a second after the reload")
        #expect(await clock.settle { daemon.hasEnded }, "exited a second after the reload")
        // Its end threw nothing: a11yd would exit with status 0. Unended (a failure above), shut down.
        if daemon.hasEnded { try await daemon.end() }
        await daemon.shutDown()
    }
}
