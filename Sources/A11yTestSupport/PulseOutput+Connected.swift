// SPDX-License-Identifier: GPL-3.0-or-later
import A11yAudio
import A11yCore

extension PulseOutput {
    /// Waits (polling every 5 ms) until the output is connected to the server: tests start speaking
    /// only then. a11yd itself never waits: an item posted meanwhile waits for the connection.
    /// - Throws: `SpeechError.audioUnavailable` after `timeout` without a connection.
    public func waitUntilConnected(timeout: Duration = .seconds(5)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while !isConnected {
            if clock.now >= deadline {
                throw SpeechError(.audioUnavailable, "no connection to the sound server within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
