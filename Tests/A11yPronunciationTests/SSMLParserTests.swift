// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

@testable import A11yPronunciation
import Testing

/// The parser alone: no engine.
@Suite("SSML parser")
struct SSMLParserTests {
    func refused(_ document: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let clock = ContinuousClock()
        let start = clock.now
        let error = #expect(throws: SpeechError.self, sourceLocation: sourceLocation) { try SSMLParser.parse(document) }
        #expect(error?.code == .invalidSSML, sourceLocation: sourceLocation)
        #expect(
            error?.message.contains(fragment) == true, "\(error?.message ?? "no error") lacks '\(fragment)'",
            sourceLocation: sourceLocation)
        #expect(clock.now - start < .milliseconds(500), "took \(clock.now - start)", sourceLocation: sourceLocation)
    }

    @Test func parsesElementsAttributesAndText() throws {
        let root = try SSMLParser.parse("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment -->
            <speak version="1.1" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="fr-FR">
              Bonjour <break time="500ms"/><mark name='m1'/><sub alias="Société nationale">SNCF</sub>
            </speak>
            """)
        #expect(root.name == "speak")
        #expect(root.attributes["xml:lang"] == "fr-FR")
        #expect(root.line == 3 && root.column == 1)
        let elements = root.children.compactMap { if case .element(let e) = $0 { e } else { nil } }
        #expect(elements.map(\.name) == ["break", "mark", "sub"])
        #expect(elements[1].attributes == ["name": "m1"])
        #expect(elements[2].textContent == "SNCF")
    }

    @Test func entitiesAndCharacterReferences() throws {
        let root = try SSMLParser.parse("<speak>&lt;&gt;&amp;&quot;&apos; &#233;&#xE9;</speak>")
        #expect(root.textContent == "<>&\"' éé")
        let sub = try SSMLParser.parse(#"<speak><sub alias="R&amp;D &#x263A;">RD</sub></speak>"#)
        guard case .element(let element) = sub.children.first else { Issue.record("no sub"); return }
        #expect(element.attributes["alias"] == "R&D ☺")
    }

    @Test func malformedDocumentsAreRefusedWithTheirPlace() {
        refused("<speak>bonjour", "not closed")
        refused("<speak><p>bonjour</speak>", "line 1, column 18: </speak> does not close <p>")
        refused("<speak><p><s>a</p></s></speak>", "does not close <s>")
        refused("<speak>a\n  <foo>b</foo></speak>", "line 2, column 3: unknown element <foo>")
        refused("<speak><prosody speed=\"fast\">a</prosody></speak>", "<prosody> has no attribute 'speed'")
        refused("<speak><prosody rate=fast>a</prosody></speak>", "quoted")
        refused("<speak><break time=\"1s\" time=\"2s\"/></speak>", "repeated")
        refused("<speak>&nbsp;</speak>", "unknown entity '&nbsp;'")
        refused("<speak>a & b</speak>", "'&' must start an entity reference")
        refused("<speak>&#0;</speak>", "not a valid character reference")
        refused("<speak>&#xD800;</speak>", "not a valid character reference")
        refused("<p>a</p>", "the root element must be <speak>")
        refused("hello <speak/>", "text before the root element")
        refused("<speak>a</speak><speak>b</speak>", "content after the root element")
        refused("", "empty")
        refused("<speak><speak>a</speak></speak>", "only be the root")
        refused("<speak><sub alias=\"x\"><p>a</p></sub></speak>", "may contain only text")
        refused("<speak><break>long</break></speak>", "<break> must be empty")
        refused("<speak>a\u{1}b</speak>", "U+1")
        refused("<speak><![CDATA[x]]></speak>", "CDATA")
        refused("<speak><?php x ?></speak>", "processing instructions")
        refused("<speak><amazon:effect>a</amazon:effect></speak>", "unknown element <amazon:effect>")
        refused("<speak><!-- a -- b --></speak>", "'--' inside a comment")
        refused("<speak a=\"1\"></speak>", "has no attribute 'a'")
    }

    @Test func hostileDocumentsAreRefusedQuickly() {
        // Billion laughs: refused at the DOCTYPE, nothing expanded.
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [
             <!ENTITY lol "lol">
             <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
             <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
            ]>
            <speak>&lol3;</speak>
            """
        refused(laughs, "line 2, column 1: DOCTYPE and ENTITY declarations are refused")
        refused("<!DOCTYPE speak><speak>a</speak>", "DOCTYPE")
        refused("<speak><!ENTITY x \"y\">&x;</speak>", "DOCTYPE and ENTITY")
        refused("<speak>&lol;</speak>", "unknown entity")
        refused(#"<speak><!DOCTYPE x SYSTEM "file:///etc/passwd"></speak>"#, "DOCTYPE")

        // 10,000 nested elements: refused at depth 33 (opening tags only, to stay under 64 KiB)…
        let deep = "<speak>" + String(repeating: "<s>", count: 10_000) + "a"
        refused(deep, "line 1, column 101: elements nested more than 32 deep")
        // …and, closed, the document is also over 64 KiB.
        refused(deep + String(repeating: "</s>", count: 10_000) + "</speak>", "at most 65536")
        // Exactly 32 is fine.
        let ok = "<speak>" + String(repeating: "<s>", count: 31) + "a" + String(repeating: "</s>", count: 31) + "</speak>"
        #expect(throws: Never.self) { try SSMLParser.parse(ok) }

        // A 100 KB attribute: the document is over 64 KiB.
        let huge = "<speak><mark name=\"" + String(repeating: "x", count: 100_000) + "\"/></speak>"
        refused(huge, "at most 65536 are accepted")
        // A 5 KB attribute in a small document: over the 4 KiB attribute limit.
        let long = "<speak><mark name=\"" + String(repeating: "é", count: 2_500) + "\"/></speak>"
        refused(long, "attribute value longer than 4096 bytes")
        // Huge input of plain text.
        refused("<speak>" + String(repeating: "a ", count: 40_000) + "</speak>", "bytes")
        // More than 1000 elements.
        refused("<speak>" + String(repeating: "<break/>", count: 1_001) + "</speak>", "more than 1000 elements")
        #expect(throws: Never.self) { try SSMLParser.parse("<speak>" + String(repeating: "<break/>", count: 999) + "</speak>") }
        // Truncated in the middle of a tag or attribute.
        refused("<speak><mark name=\"a", "unterminated attribute value")
        refused("<speak><mark name=\"a\"", "unexpected end")
        refused("<", "element name")
    }
}
