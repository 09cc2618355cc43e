// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yAudio

extension PulseOutput {
    /// What the output currently asks of the server.
    struct StreamStatus: Sendable, Equatable {
        /// A playback stream exists and is ready.
        var hasStream: Bool
        /// The cork state last requested for that stream (`true` when there is none).
        var isCorked: Bool
        /// Target length and minimum request the server granted, in bytes (0 when unknown).
        var grantedTargetLength: Int
        var grantedMinimumRequest: Int
        var grantedPrebuffer: Int
        /// Writing waits for the server to say where the stream reads.
        var awaitsReadIndex: Bool
    }

    /// Runs `body` with the mainloop's lock held, so that no callback (no answer from the server)
    /// runs meanwhile; the output's own calls inside it take the lock again (libpulse's is recursive).
    func withLockHeld<R>(_ body: () -> R) -> R { withStream { _ in body() } }

    func streamStatus() -> StreamStatus {
        withStream { stream in
            let granted = stream?.granted
            return StreamStatus(
                hasStream: stream?.isReady ?? false, isCorked: stream?.isCorked ?? true,
                grantedTargetLength: granted?.targetLength ?? 0,
                grantedMinimumRequest: granted?.minimumRequest ?? 0,
                grantedPrebuffer: granted?.prebuffer ?? 0,
                awaitsReadIndex: stream?.isUpdatingTiming ?? false)
        }
    }
}
