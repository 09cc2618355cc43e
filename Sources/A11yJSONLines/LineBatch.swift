// SPDX-License-Identifier: GPL-3.0-or-later
import NIOCore

/// The complete lines one read brought, in order, up to an overlong line: handed on together only
/// to save a hop per line. Each line is still its own request (docs/protocol.md: only `batch`
/// groups posts).
public struct LineBatch: Sendable {
    /// Each line without its newline.
    public var lines: [ByteBuffer]
    /// A line longer than the limit was skipped after the lines above; later lines are in the next batch.
    public var skippedOverlongLine: Bool

    public init(lines: [ByteBuffer], skippedOverlongLine: Bool = false) {
        self.lines = lines
        self.skippedOverlongLine = skippedOverlongLine
    }
}
