// SPDX-License-Identifier: GPL-3.0-or-later
import A11yJSONLines
import Glibc
import NIOCore
import NIOPosix
import Testing

/// What `make fuzz` (Fuzz/, docs/fuzzing.md) found in the JSON Lines framing, kept as tests. The
/// decoder runs in a real pipe channel, bytes written in one write (one read).
@Suite struct LineFramingFuzzTests {
    enum Frame: Equatable { case line(String), overlong }

    /// Each batch's lines, then its overlong mark: what the connection replies to, in that order.
    func frames(_ bytes: String, limit: Int) async throws -> [Frame] {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let channel = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .takingOwnershipOfDescriptor(input: fds[0]) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maximumLength: limit)))
                    return try NIOAsyncChannel<LineBatch, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let written = Array(bytes.utf8).withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        try #require(written == bytes.utf8.count)
        close(fds[1])
        var result: [Frame] = []
        try await channel.executeThenClose { inbound, _ in
            for try await batch in inbound {
                result += batch.lines.map { .line(String(buffer: $0)) }
                if batch.skippedOverlongLine { result.append(.overlong) }
            }
        }
        return result
    }

    /// fuzz-lines, "framing depends on the reads": an overlong line between two lines of one read was
    /// reported after both (its `line_too_long` came after the reply to the line that followed it),
    /// and two overlong lines in one read got one report.
    @Test func eachOverlongLineIsReportedInItsPlace() async throws {
        let long = String(repeating: "x", count: 12)
        let frames = try await frames("ok\n\(long)\nyes\n\(long)\n\(long)\nend\n", limit: 8)
        #expect(frames == [.line("ok"), .overlong, .line("yes"), .overlong, .overlong, .line("end")])
    }
}
