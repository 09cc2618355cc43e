import A11yCore
import Logging
import ServiceLifecycle

/// Ends the daemon after `daemon.idle_exit_seconds` with no client connected and nothing speaking,
/// paused or queued. 0 (the default) never exits. Read on every tick, so a reload applies at once.
///
/// Returning from `run` shuts the whole group down gracefully (see `Daemon`). Under socket activation
/// systemd keeps the listening socket and starts a11yd again on the next connection; without it the
/// next a11ysay autospawns it.
final class IdleExitService: Service {
    private let speech: SpeechService
    private let frontEnds: [any FrontEnd]
    private let logger: Logger
    private let tick: Duration

    init(speech: SpeechService, frontEnds: [any FrontEnd], logger: Logger, tick: Duration = .milliseconds(200)) {
        self.speech = speech
        self.frontEnds = frontEnds
        self.logger = logger
        self.tick = tick
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var idleSince: ContinuousClock.Instant?
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: self.tick)
                } catch {
                    return
                }
                let seconds = self.speech.currentConfiguration.idleExitSeconds
                guard seconds > 0, await self.isIdle() else {
                    idleSince = nil
                    continue
                }
                let now = ContinuousClock.now
                let since = idleSince ?? now
                idleSince = since
                if now - since >= .seconds(seconds) {
                    self.logger.notice("idle; exiting", metadata: ["idle_exit_seconds": "\(seconds)"])
                    return
                }
            }
        }
    }

    private func isIdle() async -> Bool {
        for frontEnd in frontEnds where await frontEnd.connectionCount > 0 { return false }
        let status = await speech.status()
        return status.state == .idle && status.current == nil && status.pending.isEmpty
    }
}
