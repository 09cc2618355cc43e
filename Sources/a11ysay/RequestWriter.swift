// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol

/// The request line a11ysay sends, written by hand for the requests people send most (a post of
/// plain text with a kind, language, priority and queue flag; pause, resume, stop, status), and by
/// `LineCodec` for everything else (numbers, spans, SSML, the lexicon, voices, renders).
///
/// Why: this is the only work between a11ysay's start and the request leaving it, and
/// FoundationEssentials' `JSONEncoder` cost 0.71 M of the 1.62 M instructions of
/// `a11ysay --lang fr --queue bonjour` (callgrind; metadata instantiated by mangled name and
/// conformance scans, paid the first time a type is encoded), while the Swift runtime's start
/// before `main` costs 0.1 M. The bytes are exactly `LineCodec.encode`'s (keys sorted, slashes not
/// escaped), which `CommandLineFormsTests` checks; text with a control character, numbers, spans and
/// SSML go through `LineCodec`, whose escaping and number format are not copied here.
enum RequestWriter {
    static func line(_ request: RequestLine) -> [UInt8] {
        (handWritten(request) ?? LineCodec.encode(request)) + [UInt8(ascii: "\n")]
    }

    /// The JSON object, or nil when `LineCodec` must write it.
    static func handWritten(_ line: RequestLine) -> [UInt8]? {
        guard line.id == nil else { return nil }
        var fields: [(key: String, value: String)]
        switch line.request {
        case .post(let post):
            guard post.ssml == nil, post.element == nil, post.spans == nil, post.rate == nil, post.pitch == nil,
                post.volume == nil, post.voice == nil, let text = post.text
            else { return nil }
            fields = [("op", quoted("post")), ("text", quoted(text))]
            if let kind = post.kind { fields.append(("kind", quoted(kind.wireName))) }
            if let lang = post.lang { fields.append(("lang", quoted(lang))) }
            if let priority = post.priority { fields.append(("priority", quoted(priority.wireName))) }
            if let queue = post.queue { fields.append(("queue", queue ? "true" : "false")) }
        case .pause(let boundary): fields = [("op", quoted("pause")), ("at", quoted(boundary.wireName))]
        case .resume: fields = [("op", quoted("resume"))]
        case .stop: fields = [("op", quoted("stop"))]
        case .status: fields = [("op", quoted("status"))]
        default: return nil
        }
        guard fields.allSatisfy({ !$0.value.isEmpty }) else { return nil }
        // `LineCodec` sorts keys; ours are ASCII, so byte order is its order.
        fields.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (index, field) in fields.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += quoted(field.key).utf8
            bytes.append(UInt8(ascii: ":"))
            bytes += field.value.utf8
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `text` as a JSON string, or "" (no field written by hand) if it holds a control character,
    /// which JSONEncoder writes in forms not copied here.
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: return ""
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
