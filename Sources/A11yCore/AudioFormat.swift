// SPDX-License-Identifier: GPL-3.0-or-later
/// Interleaved signed 16-bit little-endian PCM, the only format the engine produces.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    public var sampleRate: Int
    public var channels: Int

    public init(sampleRate: Int, channels: Int = 1) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Frames (one sample per channel) in the given number of milliseconds.
    public func frames(milliseconds: Int) -> Int { sampleRate * milliseconds / 1000 }

    /// Milliseconds spanned by the given number of frames.
    public func milliseconds(frames: Int) -> Int { frames * 1000 / max(sampleRate, 1) }

    public var description: String { "s16le \(sampleRate) Hz \(channels) ch" }
}
