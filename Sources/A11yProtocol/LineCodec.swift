import A11yCore
import Foundation

/// JSON Lines: one UTF-8 JSON object per line, each way.
public enum LineCodec {
    /// The longest line the daemon reads; longer ones are refused with `line_too_long`.
    public static let maximumLineLength = 1 << 20

    public static func encode<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding our own message types cannot fail (no floats that are NaN, no custom throws).
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads a client line, turning every decoding failure into a sentence that names the field.
    public static func decodeRequest(_ line: some StringProtocol) throws(SpeechError) -> ClientRequest {
        let data = Data(line.utf8)
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw SpeechError(.badJSON, "each line must be one JSON object")
        }
        let request: ClientRequest
        do {
            request = try JSONDecoder().decode(ClientRequest.self, from: data)
        } catch let error as DecodingError {
            throw describe(error)
        } catch {
            throw SpeechError(.invalidRequest, "\(error)")
        }
        try request.validate()
        return request
    }

    public static func decodeMessage(_ line: some StringProtocol) throws -> ServerMessage {
        try JSONDecoder().decode(ServerMessage.self, from: Data(line.utf8))
    }

    private static func describe(_ error: DecodingError) -> SpeechError {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let within = path(context)
            if key.stringValue == "op" && within.isEmpty {
                return SpeechError(.invalidRequest, "missing 'op' (one of \(ClientRequest.Operation.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return SpeechError(.invalidRequest, "missing '\(key.stringValue)'\(within.isEmpty ? "" : " in '\(within)'")")
        case .typeMismatch(let type, let context):
            return SpeechError(.invalidRequest, "'\(path(context))' has the wrong type (expected \(type))")
        case .valueNotFound(_, let context):
            return SpeechError(.invalidRequest, "'\(path(context))' is null")
        case .dataCorrupted(let context):
            let field = path(context)
            if field == "op" {
                return SpeechError(.unknownOperation, "unknown 'op'; expected one of \(ClientRequest.Operation.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return SpeechError(.invalidRequest, "'\(field)' has an invalid value: \(context.debugDescription)")
        @unknown default:
            return SpeechError(.invalidRequest, "\(error)")
        }
    }
}

extension LineCodec {
    /// The `id` of a line that could not be decoded as a whole, so the error reply still carries it.
    public static func requestID(in line: some StringProtocol) -> RequestID? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
        if let number = object["id"] as? Int { return .number(number) }
        if let string = object["id"] as? String { return .string(string) }
        return nil
    }
}
