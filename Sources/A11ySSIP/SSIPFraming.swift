// SPDX-License-Identifier: GPL-3.0-or-later
import NIOCore

/// SSIP's line framing, as the first handler of the pipeline: lines end at LF, a CR before it is
/// noted (`SSIPFrame.line(_:crlf:)`), and a line longer than `maximumLength` is never held whole: its
/// bytes are dropped as they come and it is reported once as `.overlong`. An unterminated last line
/// at the end of the input is dropped, as speech-dispatcher drops it.
public struct SSIPLineDecoder: ByteToMessageDecoder {
    public typealias InboundOut = SSIPFrame

    private let maximumLength: Int
    /// Dropping the rest of an overlong line.
    private var discarding = false
    /// Bytes of the partial line already searched for LF (so a slow line is scanned once).
    private var searched = 0

    public init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        let from = view.startIndex + min(searched, view.count)
        guard let newline = view[from...].firstIndex(of: UInt8(ascii: "\n")) else {
            // One more byte than the limit may be the CR of a line of exactly the limit.
            if discarding || view.count > maximumLength + 1 {
                if !discarding { context.fireChannelRead(wrapInboundOut(.overlong)) }
                discarding = true
                buffer.moveReaderIndex(forwardBy: view.count)
                searched = 0
            } else {
                searched = view.count
            }
            return .needMoreData
        }
        let length = newline - view.startIndex
        searched = 0
        if discarding || length > maximumLength + 1 {
            if !discarding { context.fireChannelRead(wrapInboundOut(.overlong)) }
            discarding = false
            buffer.moveReaderIndex(forwardBy: length + 1)
            return .continue
        }
        var line = buffer.readBytes(length: length) ?? []
        buffer.moveReaderIndex(forwardBy: 1)
        let crlf = line.last == UInt8(ascii: "\r")
        if crlf { line.removeLast() }
        context.fireChannelRead(wrapInboundOut(.line(line, crlf: crlf)))
        return .continue
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}

/// Writes each reply as its CRLF lines.
public struct SSIPReplyEncoder: MessageToByteEncoder {
    public typealias OutboundIn = SSIPReply

    public init() {}

    public func encode(data: SSIPReply, out: inout ByteBuffer) throws {
        out.writeBytes(data.wireBytes)
    }
}
