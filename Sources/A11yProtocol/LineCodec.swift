// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// JSON Lines: one UTF-8 JSON object per line, each way. One decode per line, straight from its bytes.
public enum LineCodec {
    /// One line, without its newline. Sorted keys, so that a line reads the same every time.
    public static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Our own message types cannot fail to encode (no NaN, no throwing encoders).
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    public static func encodeString(_ value: some Encodable) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    /// A client's line as the daemon carries it out, checked and converted for the speech API in
    /// one step, or why not (with the line's `id` when it had a readable one, so the error reply
    /// still carries it).
    public static func decodeCheckedRequest(_ line: some Collection<UInt8>) -> Result<CheckedRequest, RequestLineError> {
        decodeRequest(line).flatMap { request in
            do throws(SpeechError) {
                return .success(try request.checked())
            } catch {
                return .failure(RequestLineError(error, id: request.id))
            }
        }
    }

    /// A client's line in its wire form, or why not (with the line's `id` when it had a readable
    /// one). Only what JSON decoding checks: the ranges and combinations are `RequestLine.checked()`'s.
    public static func decodeRequest(_ line: some Collection<UInt8>) -> Result<RequestLine, RequestLineError> {
        // Checked first and refused whole: a replaced byte would silently change what is said.
        guard String(validating: line, as: UTF8.self) != nil else {
            return .failure(RequestLineError(ProtocolError(.badUTF8, "the line is not valid UTF-8"), id: nil))
        }
        let decoded: DecodedLine
        do {
            decoded = try JSONDecoder().decode(DecodedLine.self, from: Data(line))
        } catch {
            return .failure(RequestLineError(ProtocolError(.badJSON, "each line must be one JSON object"), id: nil))
        }
        return decoded.line
    }

    public static func decodeMessage(_ line: some Collection<UInt8>) throws -> ServerMessage {
        try JSONDecoder().decode(ServerMessage.self, from: Data(line))
    }

    /// Reads the id first, then the request, so that a bad field still gets a reply with the id.
    private struct DecodedLine: Decodable {
        var line: Result<RequestLine, RequestLineError>

        private enum Keys: String, CodingKey { case id }

        init(from decoder: any Decoder) throws {
            // Not an object: thrown, and reported as bad_json.
            let container = try decoder.container(keyedBy: Keys.self)
            let id = try? container.decodeIfPresent(RequestID.self, forKey: .id)
            do {
                self.line = .success(try RequestLine(from: decoder))
            } catch let error as DecodingError {
                self.line = .failure(RequestLineError(LineCodec.describe(error), id: id))
            }
        }
    }

    /// A sentence that names the field.
    fileprivate static func describe(_ error: DecodingError) -> ProtocolError {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        let operations = Request.Operation.allCases.map(\.rawValue).joined(separator: ", ")
        switch error {
        case .keyNotFound(let key, let context):
            let within = path(context)
            if key.stringValue == "op" && within.isEmpty {
                return ProtocolError(.invalidRequest, "missing 'op' (one of \(operations))")
            }
            return ProtocolError(.invalidRequest, "missing '\(key.stringValue)'\(within.isEmpty ? "" : " in '\(within)'")")
        case .typeMismatch(let type, let context):
            return ProtocolError(.invalidRequest, "'\(path(context))' has the wrong type (expected \(type))")
        case .valueNotFound(_, let context):
            return ProtocolError(.invalidRequest, "'\(path(context))' is null")
        case .dataCorrupted(let context):
            let field = path(context)
            if field == "op" {
                return ProtocolError(.unknownOperation, "unknown 'op'; expected one of \(operations)")
            }
            return ProtocolError(.invalidRequest, "'\(field)' has an invalid value: \(context.debugDescription)")
        @unknown default:
            return ProtocolError(.invalidRequest, "\(error)")
        }
    }
}

/// A line that is not a request, as the reply says it (the form its error chose), with the id it
/// carried (if any could be read).
public struct RequestLineError: Error, Sendable, Equatable {
    public var error: ServerMessage.WireError
    public var id: RequestID?

    public init(_ error: some WireErrorConvertible, id: RequestID?) {
        self.error = error.wireError
        self.id = id
    }
}

/// PCM in replies: base64 of signed 16-bit little-endian samples.
enum Base64 {
    static func encode(_ samples: [Int16]) -> String {
        samples.map(\.littleEndian).withUnsafeBytes { Data($0) }.base64EncodedString()
    }

    static func decodeSamples(_ text: String) -> [Int16]? {
        guard let data = Data(base64Encoded: text), data.count.isMultiple(of: 2) else { return nil }
        return stride(from: 0, to: data.count, by: 2).map { index in
            Int16(littleEndian: Int16(bitPattern: UInt16(data[data.startIndex + index]) | UInt16(data[data.startIndex + index + 1]) << 8))
        }
    }
}
