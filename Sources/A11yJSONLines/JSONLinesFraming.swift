// SPDX-License-Identifier: GPL-3.0-or-later
import A11yProtocol
import NIOCore

/// JSON Lines framing, as the first handler of the pipeline (the daemon's, and the test client's):
/// lines end at LF, with a maximum length.
///
/// A line over the limit is never held whole: its bytes are dropped as they come, up to its
/// newline, and the batch says a line was skipped. A last line without a newline still counts.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = LineBatch

    private let maximumLength: Int
    /// Dropping the rest of an overlong line.
    private var discarding = false
    /// Bytes of the partial line already searched for a newline (so a slow line is scanned once).
    private var searched = 0

    /// The longest line read unless told otherwise (`JSONLinesServer.Configuration`).
    public static let defaultMaximumLength = 1 << 20

    public init(maximumLength: Int = defaultMaximumLength) {
        self.maximumLength = maximumLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        for batch in batches(from: &buffer) {
            context.fireChannelRead(wrapInboundOut(batch))
        }
        return .needMoreData
    }

    /// The batches the complete lines in `buffer` make, consuming them. A batch ends at an overlong
    /// line, so that the line's refusal keeps its place among the replies and each overlong line is
    /// reported once, however the bytes were split into reads.
    public mutating func batches(from buffer: inout ByteBuffer) -> [LineBatch] {
        var batches: [LineBatch] = []
        var batch = LineBatch(lines: [], skippedOverlongLine: false)
        while let frame = nextFrame(&buffer) {
            switch frame {
            case .line(let line):
                batch.lines.append(line)
            case .skipped:
                batch.skippedOverlongLine = true
                batches.append(batch)
                batch = LineBatch(lines: [], skippedOverlongLine: false)
            }
        }
        if !batch.lines.isEmpty { batches.append(batch) }
        return batches
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        _ = try decode(context: context, buffer: &buffer)
        if !discarding, buffer.readableBytes > 0, let last = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(LineBatch(lines: [last], skippedOverlongLine: false)))
        }
        buffer.moveReaderIndex(to: buffer.writerIndex)
        searched = 0
        return .needMoreData
    }

    private enum Frame {
        case line(ByteBuffer)
        /// An overlong line began here (its bytes are dropped up to its newline).
        case skipped
    }

    /// The next complete line, or the start of an overlong one; nil when more bytes are needed.
    private mutating func nextFrame(_ buffer: inout ByteBuffer) -> Frame? {
        let newline = UInt8(ascii: "\n")
        while true {
            let view = buffer.readableBytesView
            let from = view.startIndex + min(searched, view.count)
            guard let end = view[from...].firstIndex(of: newline) else {
                let starts = !discarding && view.count > maximumLength
                if discarding || starts {
                    discarding = true
                    buffer.moveReaderIndex(forwardBy: view.count)
                    searched = 0
                } else {
                    searched = view.count
                }
                return starts ? .skipped : nil
            }
            let length = end - view.startIndex
            searched = 0
            if discarding || length > maximumLength {
                let starts = !discarding
                discarding = false
                buffer.moveReaderIndex(forwardBy: length + 1)
                if starts { return .skipped }
                continue
            }
            guard let line = buffer.readSlice(length: length) else { return nil }
            buffer.moveReaderIndex(forwardBy: 1)
            return .line(line)
        }
    }
}

/// Writes each message as one JSON line.
public struct JSONLineEncoder<Message: Encodable>: MessageToByteEncoder {
    public typealias OutboundIn = Message

    public init() {}

    public func encode(data: Message, out: inout ByteBuffer) throws {
        out.writeBytes(LineCodec.encode(data))
        out.writeInteger(UInt8(ascii: "\n"))
    }
}
