// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import ServiceLifecycle

/// Gives the heap's free pages back to the system once speech has been quiet for a moment
/// (`Heap.returnFreeMemory`), so that what a burst of speech freed does not stay resident.
///
/// Nothing is polled: a `finished` arms one timer, any `started` disarms it, and it fires at most
/// once per quiet spell, so an idle daemon gets no wake-up from it after that one. Trimming while
/// something speaks is harmless (glibc locks each arena) but would only fault pages in again.
final class HeapTrimService: Service {
    /// How long speech must be quiet first: longer than the gap between two keys' echoes.
    static let quietFor: Duration = .seconds(1)

    private let events: AsyncStream<ClientEvent>
    /// What the quiet spell is measured on: a test's manual clock decides it without real waiting.
    private let clock: any Clock<Duration>
    private let trim: @Sendable () -> Void

    convenience init(
        speech: SpeechService, clock: any Clock<Duration> = ContinuousClock(), trim: @escaping @Sendable () -> Void = Heap.returnFreeMemory
    ) {
        // Subscribed now, before any client can post, so that no `finished` is missed.
        self.init(events: speech.events(), clock: clock, trim: trim)
    }

    /// Watches `events`, speech's as `SpeechService.events()` gives them.
    init(events: AsyncStream<ClientEvent>, clock: any Clock<Duration>, trim: @escaping @Sendable () -> Void) {
        self.events = events
        self.clock = clock
        self.trim = trim
    }

    func run() async throws {
        let trim = self.trim
        let clock = self.clock
        await cancelWhenGracefulShutdown {
            var armed: Task<Void, Never>?
            for await delivery in self.events {
                switch delivery.event {
                case .started:
                    armed?.cancel()
                    armed = nil
                case .finished:
                    armed?.cancel()
                    armed = Task {
                        guard (try? await clock.sleep(for: Self.quietFor)) != nil else { return }
                        trim()
                    }
                default:
                    break
                }
            }
            armed?.cancel()
        }
        // Speech shuts down first and ends its events before this service's turn comes: returning
        // now would be a service ending unexpectedly. Wait for the turn.
        try? await gracefulShutdown()
    }
}
