// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
import Logging
import ServiceLifecycle

/// Ends the daemon after `daemon.idle_exit_seconds` with no client connected and nothing speaking,
/// paused or queued. 0 (the default) never exits; a reload applies at once.
///
/// Nothing is polled. The service looks again only when something idleness depends on changes: a
/// connection opens or closes (`connectionCount`, shared with the front ends), an item finishes, the
/// configuration is reloaded (`reconsider`). A timer exists only while the daemon is idle with idle
/// exit on, and is cancelled as soon as it is not: an idle daemon gets no wake-up from this service
/// (one, at the deadline, when idle exit is on).
///
/// Returning from `run` shuts the whole group down gracefully (see `Daemon`). Under socket activation
/// systemd keeps the listening socket and starts a11yd again on the next connection; without it the
/// next a11ysay autospawns it.
final class IdleExitService: Service {
    /// The front ends count their connections here; each change makes the service look again.
    let connectionCount: ConnectionCount
    private let speech: SpeechService
    private let events: AsyncStream<ClientEvent>
    private let logger: Logger
    /// What the idle time is measured on: a test's manual clock decides it without real waiting.
    private let clock: any Clock<Duration>
    /// "Look again". One waiting look is enough: it sees every change made before it.
    private let looks: AsyncStream<Void>
    private let lookAgain: AsyncStream<Void>.Continuation

    init(speech: SpeechService, logger: Logger, clock: any Clock<Duration> = ContinuousClock()) {
        let (looks, lookAgain) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.looks = looks
        self.lookAgain = lookAgain
        self.connectionCount = ConnectionCount { lookAgain.yield() }
        self.speech = speech
        // Subscribed now, before any client can post, so that no `finished` is missed.
        self.events = speech.events()
        self.logger = logger
        self.clock = clock
    }

    /// Something else idleness depends on changed (the configuration was reloaded).
    func reconsider() {
        lookAgain.yield()
    }

    func run() async throws {
        // A daemon nobody connects to is idle from the start.
        reconsider()
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await delivery in self.events {
                        if case .finished = delivery.event { self.reconsider() }
                    }
                }
                await self.waitUntilIdleLongEnough(on: self.clock)
                group.cancelAll()
            }
        }
    }

    /// Returns once the daemon has been idle for `idle_exit_seconds` (or when cancelled).
    private func waitUntilIdleLongEnough<C: Clock<Duration>>(on clock: C) async {
        var timer: (idleSince: C.Instant, seconds: Int, task: Task<Void, Never>)?
        defer { timer?.task.cancel() }
        for await _ in looks {
            let seconds = speech.currentConfiguration.idleExitSeconds
            guard seconds > 0, await isIdle() else {
                timer?.task.cancel()
                timer = nil
                continue
            }
            let idleSince = timer?.idleSince ?? clock.now
            let deadline = idleSince.advanced(by: .seconds(seconds))
            if clock.now >= deadline {
                logger.notice("idle; exiting", metadata: ["idle_exit_seconds": "\(seconds)"])
                return
            }
            // Armed already for this setting: it still holds.
            if timer?.seconds == seconds { continue }
            timer?.task.cancel()
            let lookAgain = lookAgain
            timer = (idleSince, seconds, Task {
                guard (try? await clock.sleep(until: deadline, tolerance: nil)) != nil else { return }
                lookAgain.yield()
            })
        }
    }

    private func isIdle() async -> Bool {
        guard connectionCount.current == 0 else { return false }
        let status = await speech.status()
        return status.state == .idle && status.current == nil && status.pending.isEmpty
    }
}
