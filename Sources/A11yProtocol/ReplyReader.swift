// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// The daemon's commonest success replies read by comparing bytes, without `JSONDecoder`: the
/// mirror of a11ysay's `RequestWriter`. The reply to a post, `{"ok":true,"utterance":N}`, and to a
/// control, `{"effective":true,"ok":true}` (or false), exactly as `LineCodec.encode` writes them
/// without an id (a11ysay sends none).
///
/// Why: `LineCodec.decodeMessage` of `{"ok":true,"utterance":1}` cost a11ysay 0.47 M of its 0.96 M
/// instructions (callgrind; FoundationEssentials' JSONDecoder, mostly generic metadata instantiated
/// by mangled name), after its request had left, while a11yd, its engine worker and PulseAudio need
/// the CPU to make the first sound.
///
/// Anything else (an id, another key, a space, `"ok":false`, a number with a sign, a leading zero or
/// past `UInt64`) is nil, for `LineCodec.decodeMessage` to read: the fast path can only fall back,
/// never answer differently. `ReplyReaderTests` checks LineCodec's encodings are recognised.
public enum ReplyReader {
    /// The message `line` (without its newline) holds, or nil when it is not one of the forms above.
    public static func message(_ line: ArraySlice<UInt8>) -> ServerMessage? {
        if line.elementsEqual(#"{"effective":true,"ok":true}"#.utf8) { return .reply(.control(effective: true), to: nil) }
        if line.elementsEqual(#"{"effective":false,"ok":true}"#.utf8) { return .reply(.control(effective: false), to: nil) }
        let posted = #"{"ok":true,"utterance":"#.utf8
        guard line.starts(with: posted), line.last == UInt8(ascii: "}"),
            let number = unsignedInteger(line.dropFirst(posted.count).dropLast())
        else { return nil }
        return .reply(.posted(UtteranceID(rawValue: number)), to: nil)
    }

    /// `digits` as JSON writes an integer that `UtteranceID` holds (ASCII digits, no sign, no
    /// leading zero, at most `UInt64.max`), or nil.
    static func unsignedInteger(_ digits: ArraySlice<UInt8>) -> UInt64? {
        guard let first = digits.first, first != UInt8(ascii: "0") || digits.count == 1 else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (tenfold, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = tenfold.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            value = sum
        }
        return value
    }
}
