// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// An element of a parsed document (SSML, PLS): its name, attributes (entities already replaced) and
/// children, with where its start tag begins in the document (1-based line and column, counted
/// in Unicode scalars) for error messages.
public struct MarkupElement: Sendable, Equatable {
    public var name: String
    public var attributes: [String: String]
    public var children: [MarkupNode]
    public var line: Int
    public var column: Int

    public init(name: String, attributes: [String: String] = [:], children: [MarkupNode] = [], line: Int = 1, column: Int = 1) {
        self.name = name
        self.attributes = attributes
        self.children = children
        self.line = line
        self.column = column
    }

    /// "line 3, column 5: <prosody>": how errors about this element start.
    var location: String { "line \(line), column \(column): <\(name)>" }

    /// The concatenated character data of the children (elements contribute theirs).
    var textContent: String {
        var text = ""
        for child in children {
            switch child {
            case .text(let string): text += string
            case .element(let element): text += element.textContent
            }
        }
        return text
    }
}

public enum MarkupNode: Sendable, Equatable {
    case element(MarkupElement)
    case text(String)
}

/// What a document may contain: its root, each element with the attributes it accepts, and
/// which elements hold only text or nothing. The reader refuses everything else.
struct MarkupVocabulary: Sendable {
    /// The one element the document must be.
    var root: String
    /// Element name → accepted attributes. The root also accepts `xmlns:*` and `xsi:schemaLocation`.
    var attributes: [String: Set<String>]
    /// Elements that hold character data only (no child elements).
    var textOnly: Set<String> = []
    /// Elements that must be empty.
    var empty: Set<String> = []
}

/// What a hostile document can cost, at most.
struct MarkupLimits: Sendable {
    /// Whole document, UTF-8 bytes.
    var maxInputBytes: Int
    /// One attribute value, UTF-8 bytes, as written (before entity replacement).
    var maxAttributeBytes = 4 * 1024
    /// Open elements at once, the root included.
    var maxDepth: Int
    /// Elements in the document, the root included.
    var maxElements: Int
}

/// The XML reader behind `SSMLParser` and `PLSReader`: a hand-written subset of XML 1.0 that never
/// expands anything but the five predefined entities and numeric character references, refuses
/// any DOCTYPE, ENTITY, CDATA or processing instruction (an XML declaration at the very start
/// excepted) and any element or attribute outside its `MarkupVocabulary`, and bounds what a
/// hostile document can cost (`MarkupLimits`). Every refusal is a `TextError` with its place.
/// Namespaces are not resolved: prefixed names are compared as written.
struct MarkupReader {
    static func read(_ document: String, _ vocabulary: MarkupVocabulary, limits: MarkupLimits) throws(TextError) -> MarkupElement {
        let bytes = document.utf8.count
        guard bytes <= limits.maxInputBytes else {
            throw TextError(message: "the document has \(bytes) bytes; at most \(limits.maxInputBytes) are accepted")
        }
        var reader = MarkupReader(document, vocabulary, limits: limits)
        do {
            return try reader.parseDocument()
        } catch let error as TextError {
            throw error
        } catch {
            throw TextError(message: "\(error)")
        }
    }

    private let vocabulary: MarkupVocabulary
    private let scalars: [Unicode.Scalar]
    private let limits: MarkupLimits
    private var index = 0
    private let lines: LineIndex

    private init(_ document: String, _ vocabulary: MarkupVocabulary, limits: MarkupLimits) {
        self.vocabulary = vocabulary
        self.scalars = Array(document.unicodeScalars)
        self.limits = limits
        lines = LineIndex(scalars)
    }

    // MARK: Positions and errors

    private func error(_ message: String, at offset: Int? = nil) -> TextError {
        lines.error(message, at: offset ?? index)
    }

    // MARK: Scanning

    private var atEnd: Bool { index >= scalars.count }
    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func starts(with literal: String) -> Bool {
        var i = index
        for scalar in literal.unicodeScalars {
            guard i < scalars.count, scalars[i] == scalar else { return false }
            i += 1
        }
        return true
    }

    private static func isSpace(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\t" || s == "\n" || s == "\r" }

    /// XML 1.0 `Char`: what may appear in a document at all.
    private static func isXMLChar(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x9, 0xA, 0xD: return true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    private static func isNameStart(_ s: Unicode.Scalar) -> Bool {
        s.properties.isAlphabetic || s == "_" || s == ":"
    }

    private static func isNameChar(_ s: Unicode.Scalar) -> Bool {
        isNameStart(s) || s.properties.numericType != nil || s == "-" || s == "."
    }

    private mutating func skipSpace() {
        while let s = current, Self.isSpace(s) { index += 1 }
    }

    private mutating func expect(_ literal: String, _ what: String) throws {
        guard starts(with: literal) else { throw error("expected \(what)") }
        index += literal.unicodeScalars.count
    }

    private mutating func name(_ what: String) throws -> String {
        guard let first = current, Self.isNameStart(first) else { throw error("expected \(what)") }
        var view = String.UnicodeScalarView()
        while let s = current, Self.isNameChar(s) {
            view.append(s)
            index += 1
            if view.count > 64 { throw error("\(what) is too long") }
        }
        return String(view)
    }

    /// After `&`: one of the five predefined entities or a numeric character reference.
    private mutating func reference() throws -> Unicode.Scalar {
        let start = index
        index += 1  // &
        var body = String.UnicodeScalarView()
        while let s = current, s != ";" {
            guard body.count < 12, !Self.isSpace(s), s != "<", s != "&" else {
                throw error("'&' must start an entity reference ending in ';' (write &amp; for a literal &)", at: start)
            }
            body.append(s)
            index += 1
        }
        guard current == ";" else {
            throw error("'&' must start an entity reference ending in ';' (write &amp; for a literal &)", at: start)
        }
        index += 1
        let name = String(body)
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default: break
        }
        if name.hasPrefix("#") {
            let digits = name.dropFirst()
            let value: UInt32?
            if digits.hasPrefix("x") {
                let hex = digits.dropFirst()
                value = hex.isEmpty || !hex.allSatisfy(\.isHexDigit) ? nil : UInt32(hex, radix: 16)
            } else {
                value = digits.isEmpty || !digits.allSatisfy({ $0.isASCII && $0.isNumber }) ? nil : UInt32(digits)
            }
            if let value, let scalar = Unicode.Scalar(value), Self.isXMLChar(scalar) { return scalar }
            throw error("'&\(name);' is not a valid character reference", at: start)
        }
        throw error(
            "unknown entity '&\(name);' (only &lt; &gt; &amp; &quot; &apos; and numeric references are accepted)",
            at: start)
    }

    // MARK: Document

    private struct Open {
        var element: MarkupElement
        var offset: Int
    }

    private mutating func parseDocument() throws -> MarkupElement {
        if starts(with: "\u{FEFF}") { index += 1 }
        if starts(with: "<?xml") { try xmlDeclaration() }
        try misc()
        guard !atEnd else { throw error("the document is empty: expected <\(vocabulary.root)>") }
        guard current == "<" else { throw error("text before the root element: expected <\(vocabulary.root)>") }

        var stack: [Open] = []
        var elementCount = 0
        var root: MarkupElement?
        var text = String.UnicodeScalarView()

        func flushText(into stack: inout [Open]) {
            guard !text.isEmpty else { return }
            stack[stack.count - 1].element.children.append(.text(String(text)))
            text = String.UnicodeScalarView()
        }

        while root == nil {
            guard let s = current else {
                let open = stack.last!
                throw error("unexpected end of the document: <\(open.element.name)> (\(describe(open.offset))) is not closed")
            }
            if s == "<" {
                if starts(with: "</") {
                    let start = index
                    index += 2
                    let name = try name("an element name after '</'")
                    skipSpace()
                    try expect(">", "'>' to end </\(name)>")
                    guard let open = stack.last else { throw error("</\(name)> closes nothing", at: start) }
                    guard open.element.name == name else {
                        throw error(
                            "</\(name)> does not close <\(open.element.name)> (\(describe(open.offset)))", at: start)
                    }
                    flushText(into: &stack)
                    let done = stack.removeLast().element
                    if vocabulary.empty.contains(name), !done.textContent.unicodeScalars.allSatisfy(Self.isSpace) {
                        throw error("<\(name)> must be empty", at: open.offset)
                    }
                    if stack.isEmpty {
                        root = done
                    } else {
                        stack[stack.count - 1].element.children.append(.element(done))
                    }
                } else if starts(with: "<!--") {
                    try comment()
                } else if starts(with: "<!") {
                    throw error(
                        starts(with: "<!DOCTYPE") || starts(with: "<!ENTITY")
                            ? "DOCTYPE and ENTITY declarations are refused" : "'<!' declarations and CDATA are refused")
                } else if starts(with: "<?") {
                    throw error("processing instructions are refused")
                } else {
                    let start = index
                    if !stack.isEmpty { flushText(into: &stack) }
                    let (element, selfClosing) = try startTag()
                    elementCount += 1
                    guard elementCount <= limits.maxElements else {
                        throw error("more than \(limits.maxElements) elements", at: start)
                    }
                    if stack.isEmpty {
                        guard element.name == vocabulary.root else {
                            throw error("the root element must be <\(vocabulary.root)>, not <\(element.name)>", at: start)
                        }
                    } else {
                        guard element.name != vocabulary.root else {
                            throw error("<\(element.name)> may only be the root element", at: start)
                        }
                        let parent = stack[stack.count - 1].element.name
                        if vocabulary.textOnly.contains(parent) {
                            throw error("<\(parent)> may contain only text, not <\(element.name)>", at: start)
                        }
                        if vocabulary.empty.contains(parent) {
                            throw error("<\(parent)> must be empty", at: start)
                        }
                    }
                    if selfClosing {
                        if stack.isEmpty {
                            root = element
                        } else {
                            stack[stack.count - 1].element.children.append(.element(element))
                        }
                    } else {
                        guard stack.count < limits.maxDepth else {
                            throw error("elements nested more than \(limits.maxDepth) deep", at: start)
                        }
                        stack.append(Open(element: element, offset: start))
                    }
                }
            } else if s == "&" {
                text.append(try reference())
            } else if s == ">" && index >= 2 && scalars[index - 1] == "]" && scalars[index - 2] == "]" {
                throw error("']]>' is not allowed in text")
            } else {
                guard Self.isXMLChar(s) else {
                    throw error("character U+\(String(s.value, radix: 16, uppercase: true)) is not allowed in XML")
                }
                text.append(s)
                index += 1
            }
        }
        try misc()
        guard atEnd else { throw error("content after the root element </\(vocabulary.root)>") }
        return root!
    }

    private func describe(_ offset: Int) -> String {
        let (line, column) = lines.position(of: offset)
        return "opened at line \(line), column \(column)"
    }

    /// Whitespace and comments, outside the root element.
    private mutating func misc() throws {
        while true {
            skipSpace()
            if starts(with: "<!--") {
                try comment()
            } else if starts(with: "<!") {
                throw error(
                    starts(with: "<!DOCTYPE") || starts(with: "<!ENTITY")
                        ? "DOCTYPE and ENTITY declarations are refused" : "'<!' declarations are refused")
            } else if starts(with: "<?") {
                throw error("processing instructions are refused (an XML declaration only at the very start)")
            } else {
                return
            }
        }
    }

    private mutating func comment() throws {
        let start = index
        index += 4
        while !atEnd {
            if starts(with: "--") {
                guard starts(with: "-->") else { throw error("'--' inside a comment") }
                index += 3
                return
            }
            index += 1
        }
        throw error("unterminated comment", at: start)
    }

    /// `<?xml version="1.0" encoding="UTF-8"?>`, at offset 0 only.
    private mutating func xmlDeclaration() throws {
        let start = index
        index += 5
        guard let s = current, Self.isSpace(s) else { throw error("processing instructions are refused", at: start) }
        while !atEnd, !starts(with: "?>") {
            skipSpace()
            if starts(with: "?>") { break }
            let name = try name("an attribute of the XML declaration")
            skipSpace()
            try expect("=", "'=' after \(name)")
            skipSpace()
            let valueStart = index
            let value = try attributeValue()
            switch name {
            case "version":
                guard value == "1.0" || value == "1.1" else { throw error("XML version '\(value)'", at: valueStart) }
            case "encoding":
                guard value.lowercased() == "utf-8" else {
                    throw error("encoding '\(value)': the document is UTF-8", at: valueStart)
                }
            case "standalone": break
            default: throw error("unknown attribute '\(name)' in the XML declaration", at: valueStart)
            }
        }
        try expect("?>", "'?>' to end the XML declaration")
    }

    /// `<name attr="value" …>` or `…/>`, with the name and attributes checked against the vocabulary.
    private mutating func startTag() throws -> (MarkupElement, selfClosing: Bool) {
        let start = index
        index += 1
        let name = try name("an element name after '<'")
        guard let allowed = vocabulary.attributes[name] else {
            throw error(
                "unknown element <\(name)> (accepted: \(vocabulary.attributes.keys.sorted().joined(separator: ", ")))",
                at: start)
        }
        let (line, column) = lines.position(of: start)
        var element = MarkupElement(name: name, line: line, column: column)
        while true {
            let hadSpace = current.map(Self.isSpace) ?? false
            skipSpace()
            if starts(with: "/>") {
                index += 2
                return (element, true)
            }
            if current == ">" {
                index += 1
                return (element, false)
            }
            guard !atEnd else { throw error("unexpected end of the document inside <\(name)>", at: start) }
            guard hadSpace else { throw error("expected whitespace, '>' or '/>' in <\(name)>") }
            let attributeStart = index
            let attribute = try self.name("an attribute name in <\(name)>")
            let namespaceDeclaration =
                name == vocabulary.root && (attribute.hasPrefix("xmlns:") || attribute == "xsi:schemaLocation")
            guard allowed.contains(attribute) || namespaceDeclaration else {
                throw error("<\(name)> has no attribute '\(attribute)'", at: attributeStart)
            }
            guard element.attributes[attribute] == nil else {
                throw error("attribute '\(attribute)' repeated in <\(name)>", at: attributeStart)
            }
            skipSpace()
            try expect("=", "'=' after attribute '\(attribute)'")
            skipSpace()
            element.attributes[attribute] = try attributeValue()
        }
    }

    /// A quoted attribute value, entities replaced, at most `maxAttributeBytes` as written.
    private mutating func attributeValue() throws -> String {
        guard let quote = current, quote == "\"" || quote == "'" else {
            throw error("attribute values must be quoted")
        }
        let start = index
        index += 1
        var value = String.UnicodeScalarView()
        var bytes = 0
        while let s = current, s != quote {
            bytes += UTF8.width(s)
            guard bytes <= limits.maxAttributeBytes else {
                throw error("attribute value longer than \(limits.maxAttributeBytes) bytes", at: start)
            }
            switch s {
            case "<": throw error("'<' in an attribute value (write &lt;)")
            case "&":
                let before = index
                value.append(try reference())
                bytes += index - before - 1
            default:
                guard Self.isXMLChar(s) else {
                    throw error("character U+\(String(s.value, radix: 16, uppercase: true)) is not allowed in XML")
                }
                // Attribute-value normalisation: tabs and line breaks are spaces.
                value.append(Self.isSpace(s) ? " " : s)
                index += 1
            }
        }
        guard !atEnd else { throw error("unterminated attribute value", at: start) }
        index += 1
        return String(value)
    }
}
