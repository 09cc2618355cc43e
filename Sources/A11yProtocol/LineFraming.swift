import NIOCore

/// The complete lines one read brought, in order: handed on together only to save a hop per
/// line. Each line is still its own request (docs/protocol.md: only `batch` groups posts).
public struct LineBatch: Sendable {
    /// Each line without its newline.
    public var lines: [ByteBuffer]
    /// A line longer than the limit was skipped (after the lines above, before any later ones).
    public var skippedOverlongLine: Bool

    public init(lines: [ByteBuffer], skippedOverlongLine: Bool = false) {
        self.lines = lines
        self.skippedOverlongLine = skippedOverlongLine
    }
}

/// Newline framing with a maximum line length, as the first handler of a JSON Lines pipeline.
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

    public init(maximumLength: Int = LineCodec.maximumLineLength) {
        self.maximumLength = maximumLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        var batch = LineBatch(lines: [], skippedOverlongLine: false)
        while let line = nextLine(&buffer, skipped: &batch.skippedOverlongLine) {
            batch.lines.append(line)
        }
        if !batch.lines.isEmpty || batch.skippedOverlongLine {
            context.fireChannelRead(wrapInboundOut(batch))
        }
        return .needMoreData
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

    /// The next complete line, dropping overlong ones; nil when more bytes are needed.
    private mutating func nextLine(_ buffer: inout ByteBuffer, skipped: inout Bool) -> ByteBuffer? {
        let newline = UInt8(ascii: "\n")
        while true {
            let view = buffer.readableBytesView
            let from = view.startIndex + min(searched, view.count)
            guard let end = view[from...].firstIndex(of: newline) else {
                if discarding || view.count > maximumLength {
                    if !discarding { skipped = true }
                    discarding = true
                    buffer.moveReaderIndex(forwardBy: view.count)
                    searched = 0
                } else {
                    searched = view.count
                }
                return nil
            }
            let length = end - view.startIndex
            searched = 0
            if discarding || length > maximumLength {
                if !discarding { skipped = true }
                discarding = false
                buffer.moveReaderIndex(forwardBy: length + 1)
                continue
            }
            let line = buffer.readSlice(length: length)
            buffer.moveReaderIndex(forwardBy: 1)
            return line
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
