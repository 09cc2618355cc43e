// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import Testing

/// `ReplyReader` reads by hand the replies a11ysay meets most: it must recognise them as LineCodec
/// writes them (else the fast path is silently dead), and on any other line answer nil (fall back to
/// `LineCodec.decodeMessage`) or exactly what LineCodec decodes, never something else.
@Suite struct ReplyReaderTests {
    static let recognised: [ServerMessage] = [
        .reply(.posted(UtteranceID(rawValue: 0)), to: nil),
        .reply(.posted(UtteranceID(rawValue: 1)), to: nil),
        .reply(.posted(UtteranceID(rawValue: 42)), to: nil),
        .reply(.posted(UtteranceID(rawValue: 1_000_000_007)), to: nil),
        .reply(.posted(UtteranceID(rawValue: .max)), to: nil),
        .reply(.control(effective: true), to: nil),
        .reply(.control(effective: false), to: nil),
    ]

    /// If LineCodec's encoder changes its key order or spelling, this fails: the fast path would
    /// no longer match what a11yd writes.
    @Test(arguments: recognised)
    func lineCodecsEncodingIsRecognisedAndReadAsLineCodecReadsIt(_ message: ServerMessage) throws {
        let line = LineCodec.encode(message)
        #expect(ReplyReader.message(line[...]) == message, "\(String(decoding: line, as: UTF8.self)) not recognised")
        #expect(try LineCodec.decodeMessage(line) == message)
    }

    @Test func theBytesAreTheOnesTheProtocolDocuments() {
        #expect(LineCodec.encodeString(ServerMessage.reply(.posted(UtteranceID(rawValue: 7)), to: nil)) == #"{"ok":true,"utterance":7}"#)
        #expect(LineCodec.encodeString(ServerMessage.reply(.control(effective: true), to: nil)) == #"{"effective":true,"ok":true}"#)
    }

    static let nearMisses: [String] = [
        // Numbers JSON or UtteranceID refuse, or that are not written this way.
        #"{"ok":true,"utterance":01}"#, #"{"ok":true,"utterance":00}"#, #"{"ok":true,"utterance":-1}"#,
        #"{"ok":true,"utterance":-0}"#, #"{"ok":true,"utterance":+1}"#, #"{"ok":true,"utterance":1.0}"#,
        #"{"ok":true,"utterance":1e3}"#, #"{"ok":true,"utterance":18446744073709551616}"#,
        #"{"ok":true,"utterance":99999999999999999999999}"#, #"{"ok":true,"utterance":}"#,
        #"{"ok":true,"utterance":"1"}"#, #"{"ok":true,"utterance":null}"#, #"{"ok":true,"utterance":١}"#,
        #"{"ok":true,"utterance":１}"#, #"{"ok":true,"utterance":1 }"#, #"{"ok":true,"utterance":1}}"#,
        #"{"ok":true,"utterance":1"#, #"{"ok":true,"utterance":1,"utterance":2}"#, "{\"ok\":true,\"utterance\":1\r}",
        "{\"ok\":true,\"utterance\":1\u{0}}",
        // Other keys, spaces, order, escapes, false.
        #"{"id":1,"ok":true,"utterance":1}"#, #"{"id":"a","ok":true,"utterance":1}"#, #"{"ok":true,"utterance":1,"x":2}"#,
        #"{"ok": true,"utterance":1}"#, #" {"ok":true,"utterance":1}"#, #"{"ok":true,"utterance":1} "#,
        #"{"utterance":1,"ok":true}"#, #"{"ok":false,"utterance":1}"#, #"{"\u006fk":true,"utterance":1}"#,
        #"{"ok":true,"effective":true}"#, #"{"effective":true,"ok":false}"#, #"{"effective":1,"ok":true}"#,
        #"{"effective":True,"ok":true}"#, #"{"effective":true,"ok":true,"id":1}"#, #"{"effective":true, "ok":true}"#,
        #"{"effective":true,"ok":true}}"#, #"{"effective":true,"ok":true"#, #"{"éffective":true,"ok":true}"#,
        #"{"ok":true}"#, "", "{}", "null",
    ]

    @Test(arguments: nearMisses)
    func aNearMissFallsBackOrReadsAsLineCodecReadsIt(_ text: String) {
        let line = Array(text.utf8)
        if let fast = ReplyReader.message(line[...]) {
            #expect(fast == (try? LineCodec.decodeMessage(line)), "\(text)")
        }
    }

    /// Every one-byte change to the recognised lines (replaced, inserted, removed): never an answer
    /// LineCodec would not give.
    @Test func noOneByteChangeGivesADifferentAnswer() {
        let bytes: [UInt8] = Array("\0 \"+-.,0129:}{eE\u{7F}".utf8) + [0xC3, 0xFF]
        for message in Self.recognised {
            let line = LineCodec.encode(message)
            var variants: [[UInt8]] = []
            for index in line.indices {
                var removed = line
                removed.remove(at: index)
                variants.append(removed)
                for byte in bytes {
                    var replaced = line
                    replaced[index] = byte
                    variants.append(replaced)
                    var inserted = line
                    inserted.insert(byte, at: index)
                    variants.append(inserted)
                }
            }
            for variant in variants where variant != line {
                if let fast = ReplyReader.message(variant[...]) {
                    #expect(fast == (try? LineCodec.decodeMessage(variant)), "\(String(decoding: variant, as: UTF8.self))")
                }
            }
        }
    }

    /// The reader looks at the slice it is given, not the array around it (a11ysay hands it the
    /// line before the newline, with more lines after it).
    @Test func aSliceIsReadWithinItsBounds() {
        let buffer = Array("{\"ok\":true,\"utterance\":12}\n{\"effective\":false,\"ok\":true}\n".utf8)
        let newline = buffer.firstIndex(of: UInt8(ascii: "\n"))!
        #expect(ReplyReader.message(buffer[..<newline]) == .reply(.posted(UtteranceID(rawValue: 12)), to: nil))
        #expect(ReplyReader.message(buffer[(newline + 1)..<(buffer.count - 1)]) == .reply(.control(effective: false), to: nil))
        #expect(ReplyReader.message(buffer[..<(newline - 1)]) == nil)
    }
}
