// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import OrderedCollections

/// A value of the TOML subset a11yd's configuration is written in (see `TOMLReader`).
public enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case float(Double)
    case boolean(Bool)
    case array([TOMLValue])
    case table(TOMLTable)

    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var integer: Int? { if case .integer(let value) = self { value } else { nil } }
    public var float: Double? { if case .float(let value) = self { value } else { nil } }
    public var boolean: Bool? { if case .boolean(let value) = self { value } else { nil } }
    public var array: [TOMLValue]? { if case .array(let value) = self { value } else { nil } }
    public var table: TOMLTable? { if case .table(let value) = self { value } else { nil } }
}

/// A table: keys in the order they were first written (so that "the first unknown key" is the
/// first one in the file) and their values.
public struct TOMLTable: Sendable, Equatable {
    private var values: OrderedDictionary<String, TOMLValue> = [:]

    public init() {}

    /// In the order they were first set.
    public var keys: OrderedSet<String> { values.keys }

    /// Setting a key already there replaces its value in its place (the reader fills a table so);
    /// a new key goes last.
    public subscript(key: String) -> TOMLValue? {
        get { values[key] }
        set { values[key] = newValue }
    }
}

/// A strict reader for the part of TOML 1.0 a configuration file needs: comments, `[table]` and
/// `[dotted.table]` headers, bare, quoted and dotted keys, basic strings (with escapes) and literal
/// strings on one line, integers (decimal, `0x`, `0o`, `0b`, with `_` between digits), floats
/// (`inf` and `nan` too), booleans and arrays (over several lines, trailing comma allowed).
/// What a11yd does not need is refused by name rather than half-read: dates and times, inline
/// tables, arrays of tables and multi-line strings. So is everything TOML itself forbids
/// (a key or table defined twice, leading zeros, an integer beyond 64 bits, a control character).
/// Every refusal is a `TextError` with its place.
public struct TOMLReader {
    /// Whole text, UTF-8 bytes: far beyond any configuration, and a bound on what a file costs.
    public static let maxInputBytes = 1 << 20
    /// Arrays nested in arrays, at most.
    public static let maxDepth = 32

    public static func read(_ text: String) throws(TextError) -> TOMLTable {
        let bytes = text.utf8.count
        guard bytes <= maxInputBytes else {
            throw TextError(message: "the text has \(bytes) bytes; at most \(maxInputBytes) are accepted")
        }
        var reader = TOMLReader(text)
        try reader.readDocument()
        return reader.root
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private let lines: LineIndex

    private var root = TOMLTable()
    /// The table the next key/value pairs go to: the last header's, or the root.
    private var currentTable: [String] = []
    /// Tables that a header or dotted keys defined: a header may not open them again.
    private var defined: Set<[String]> = [[]]
    /// Tables that dotted keys created: the only ones dotted keys may add to.
    private var dotted: Set<[String]> = []

    private init(_ text: String) {
        scalars = Array(text.unicodeScalars)
        lines = LineIndex(scalars)
    }

    // MARK: Positions and errors

    private func error(_ message: String, at offset: Int? = nil) -> TextError {
        lines.error(message, at: offset ?? index)
    }

    /// What is at the reading position, for "expected …, found …".
    private var found: String {
        guard let s = current else { return "the end of the file" }
        switch s {
        case "\n", "\r": return "the end of the line"
        case " ", "\t": return "a space"
        default: return s.properties.generalCategory == .control ? "control character U+\(hex(s))" : "'\(s)'"
        }
    }

    private func hex(_ s: Unicode.Scalar) -> String {
        let digits = String(s.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    // MARK: Scanning

    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private mutating func skipBlanks() {
        while current == " " || current == "\t" { index += 1 }
    }

    /// A comment runs to the end of the line; it may hold any character but controls other than tab.
    private mutating func skipComment() throws(TextError) {
        guard current == "#" else { return }
        while let s = current, s != "\n", s != "\r" {
            if isForbiddenControl(s) { throw error("control character U+\(hex(s)) in a comment") }
            index += 1
        }
    }

    /// Blanks, an optional comment, then a line break or the end of the file.
    private mutating func endOfLine(after what: String) throws(TextError) {
        skipBlanks()
        try skipComment()
        guard try lineBreak() || current == nil else {
            throw error("expected the end of the line after \(what), found \(found)")
        }
    }

    /// Consumes `\n` or `\r\n`; a lone carriage return is refused.
    private mutating func lineBreak() throws(TextError) -> Bool {
        if current == "\n" {
            index += 1
            return true
        }
        if current == "\r" {
            guard peek(1) == "\n" else { throw error("a carriage return must be followed by a line feed") }
            index += 2
            return true
        }
        return false
    }

    /// Blanks, comments and line breaks, as allowed between the values of an array.
    private mutating func skipBlanksCommentsAndLines() throws(TextError) {
        while true {
            skipBlanks()
            try skipComment()
            guard try lineBreak() else { return }
        }
    }

    private func isForbiddenControl(_ s: Unicode.Scalar) -> Bool {
        (s.value < 0x20 && s != "\t") || s.value == 0x7F
    }

    // MARK: Document

    private mutating func readDocument() throws(TextError) {
        if current == "\u{FEFF}" { index += 1 }
        while current != nil {
            skipBlanks()
            switch current {
            case nil: return
            case "#", "\n", "\r": try endOfLine(after: "a comment")
            case "[": try tableHeader()
            default: try keyValue()
            }
        }
    }

    /// `[a.b]`: the table the following pairs go to.
    private mutating func tableHeader() throws(TextError) {
        let start = index
        index += 1
        if current == "[" {
            throw error("arrays of tables ([[…]]) are not supported: write one [table] per section", at: start)
        }
        skipBlanks()
        let path = try key()
        skipBlanks()
        guard current == "]" else { throw error("expected ']' to end the table header, found \(found)") }
        index += 1
        try endOfLine(after: "the table header")

        var table = root
        for depth in path.indices.dropLast() {
            let prefix = Array(path[...depth])
            switch table[path[depth]] {
            case nil, .table?: break
            case .some: throw error("'\(dottedName(prefix))' is already a value, not a table", at: start)
            }
            table = table[path[depth]]?.table ?? TOMLTable()
        }
        if let existing = table[path[path.count - 1]] {
            guard existing.table != nil else {
                throw error("'\(dottedName(path))' is already a value, not a table", at: start)
            }
            guard !defined.contains(path) else {
                throw error("table [\(dottedName(path))] is defined twice", at: start)
            }
        }
        try insert(.table(TOMLTable()), at: path, replacingTable: true, keyAt: start)
        defined.insert(path)
        currentTable = path
    }

    /// `key = value`, the key relative to the current table, possibly dotted.
    private mutating func keyValue() throws(TextError) {
        let start = index
        let relative = try key()
        skipBlanks()
        guard current == "=" else { throw error("expected '=' after the key, found \(found)") }
        index += 1
        skipBlanks()
        let value = try self.value(depth: 0)
        try endOfLine(after: "the value")

        let path = currentTable + relative
        // Dotted keys create and define the tables before their last part; they may not reach
        // into a table a header (or another part of the file) defined.
        for depth in currentTable.count..<(path.count - 1) {
            let prefix = Array(path[...depth])
            switch lookUp(prefix) {
            case nil:
                try insert(.table(TOMLTable()), at: prefix, replacingTable: false, keyAt: start)
                dotted.insert(prefix)
                defined.insert(prefix)
            case .table? where dotted.contains(prefix):
                break
            case .table?:
                throw error("table [\(dottedName(prefix))] is already defined; add to it under its header", at: start)
            case .some:
                throw error("'\(dottedName(prefix))' is already a value, not a table", at: start)
            }
        }
        try insert(value, at: path, replacingTable: false, keyAt: start)
    }

    private func dottedName(_ path: [String]) -> String {
        path.map { key in
            !key.isEmpty && key.unicodeScalars.allSatisfy(Self.isBareKeyScalar) ? key : "\"\(key)\""
        }.joined(separator: ".")
    }

    private func lookUp(_ path: [String]) -> TOMLValue? {
        var value: TOMLValue? = .table(root)
        for key in path { value = value?.table?[key] }
        return value
    }

    /// Puts `value` at `path` (whose parents are tables); a key already there is an error, unless
    /// `replacingTable` (a header opening a table that so far was only implied).
    private mutating func insert(_ value: TOMLValue, at path: [String], replacingTable: Bool, keyAt start: Int) throws(TextError) {
        func put(_ table: inout TOMLTable, _ rest: ArraySlice<String>) -> Bool {
            let key = rest[rest.startIndex]
            if let existing = table[key], existing.table == nil, rest.count > 1 { return false }
            if rest.count == 1 {
                if let existing = table[key] {
                    guard replacingTable, existing.table != nil else { return false }
                    return true  // already a table: headers only mark it defined
                }
                table[key] = value
                return true
            }
            var child = table[key]?.table ?? TOMLTable()
            guard put(&child, rest.dropFirst()) else { return false }
            table[key] = .table(child)
            return true
        }
        guard put(&root, path[...]) else {
            throw error("'\(dottedName(path))' is defined twice", at: start)
        }
    }

    // MARK: Keys

    private static func isBareKeyScalar(_ s: Unicode.Scalar) -> Bool {
        switch s {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
        default: false
        }
    }

    /// A key: bare or quoted parts joined by dots (blanks allowed around the dots).
    private mutating func key() throws(TextError) -> [String] {
        var parts: [String] = []
        while true {
            switch current {
            case "\"":
                if peek(1) == "\"" && peek(2) == "\"" { throw error("a key cannot be a multi-line string") }
                parts.append(try basicString())
            case "'":
                if peek(1) == "'" && peek(2) == "'" { throw error("a key cannot be a multi-line string") }
                parts.append(try literalString())
            case let s? where Self.isBareKeyScalar(s):
                var view = String.UnicodeScalarView()
                while let s = current, Self.isBareKeyScalar(s) {
                    view.append(s)
                    index += 1
                }
                parts.append(String(view))
            default:
                throw error("expected a key (letters, digits, '_', '-', or a quoted string), found \(found)")
            }
            skipBlanks()
            guard current == "." else { return parts }
            index += 1
            skipBlanks()
        }
    }

    // MARK: Values

    private mutating func value(depth: Int) throws(TextError) -> TOMLValue {
        switch current {
        case "\"":
            if peek(1) == "\"" && peek(2) == "\"" { throw error("multi-line strings (\"\"\") are not supported") }
            return .string(try basicString())
        case "'":
            if peek(1) == "'" && peek(2) == "'" { throw error("multi-line strings (''') are not supported") }
            return .string(try literalString())
        case "[":
            return try array(depth: depth + 1)
        case "{":
            throw error("inline tables ({…}) are not supported: write a [table] section")
        case "t", "f":
            return try boolean()
        case let s? where s == "+" || s == "-" || s == "i" || s == "n" || ("0"..."9").contains(s):
            return try number()
        default:
            throw error("expected a value (a string, number, true, false or an array), found \(found)")
        }
    }

    private mutating func boolean() throws(TextError) -> TOMLValue {
        let start = index
        let word = token()
        switch word {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        default: throw error("expected true or false, found '\(word)'", at: start)
        }
    }

    /// The scalars up to the next blank, line break, comma, closing bracket or comment.
    private mutating func token() -> String {
        var view = String.UnicodeScalarView()
        while let s = current, !" \t\n\r,]#".unicodeScalars.contains(s) {
            view.append(s)
            index += 1
        }
        return String(view)
    }

    private mutating func number() throws(TextError) -> TOMLValue {
        let start = index
        let text = token()
        let scalars = Array(text.unicodeScalars)
        func isDigit(_ s: Unicode.Scalar) -> Bool { ("0"..."9").contains(s) }
        // 1979-05-27, 07:32:00: TOML dates and times.
        let isDate = scalars.count >= 5 && scalars[0..<4].allSatisfy(isDigit) && scalars[4] == "-"
        let isTime = scalars.count >= 3 && scalars[0..<2].allSatisfy(isDigit) && scalars[2] == ":"
        if isDate || isTime {
            throw error("dates and times are not supported", at: start)
        }
        var body = Substring(text)
        var sign = ""
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        switch body {
        case "inf": return .float(sign == "-" ? -.infinity : .infinity)
        case "nan": return .float(.nan)
        default: break
        }
        for (prefix, radix, digits, name) in [("0x", 16, "0123456789abcdefABCDEF", "hexadecimal"),
                                              ("0o", 8, "01234567", "octal"), ("0b", 2, "01", "binary")]
        where body.hasPrefix(prefix) {
            guard text.first != "+" && text.first != "-" else {
                throw error("a \(name) integer cannot have a sign", at: start)
            }
            let joined = try digitGroups(body.dropFirst(2), allowed: digits, what: "\(name) integer", at: start)
            guard let value = Int(joined, radix: radix) else {
                throw error("\(text) does not fit in a 64-bit integer", at: start)
            }
            return .integer(value)
        }
        let decimal = "0123456789"
        // Integer part, then an optional fraction and exponent.
        let fractionStart = body.firstIndex(of: ".")
        let exponentStart = body.firstIndex(where: { $0 == "e" || $0 == "E" })
        let integerEnd = [fractionStart, exponentStart].compactMap { $0 }.min() ?? body.endIndex
        let integerPart = try digitGroups(body[..<integerEnd], allowed: decimal, what: "number", at: start)
        if integerPart.count > 1 && integerPart.first == "0" {
            throw error("\(text): leading zeros are not allowed", at: start)
        }
        guard fractionStart != nil || exponentStart != nil else {
            guard let value = Int(sign + integerPart) else {
                throw error("\(text) does not fit in a 64-bit integer", at: start)
            }
            return .integer(value)
        }
        var normalized = sign + integerPart
        if let fractionStart {
            guard exponentStart.map({ fractionStart < $0 }) ?? true else {
                throw error("\(text) is not a number", at: start)
            }
            let fraction = body[body.index(after: fractionStart)..<(exponentStart ?? body.endIndex)]
            normalized += "." + (try digitGroups(fraction, allowed: decimal, what: "fraction", at: start))
        }
        if let exponentStart {
            var exponent = body[body.index(after: exponentStart)...]
            var exponentSign = ""
            if let first = exponent.first, first == "+" || first == "-" {
                exponentSign = String(first)
                exponent = exponent.dropFirst()
            }
            normalized += "e" + exponentSign + (try digitGroups(exponent, allowed: decimal, what: "exponent", at: start))
        }
        guard let value = Double(normalized) else { throw error("\(text) is not a number", at: start) }
        return .float(value)
    }

    /// Digits with single underscores between them (`1_000`); returns them without underscores.
    private func digitGroups(_ text: Substring, allowed: String, what: String, at start: Int) throws(TextError) -> String {
        guard let first = text.first, let last = text.last, first != "_", last != "_" else {
            throw error(text.isEmpty ? "expected digits in the \(what)" : "an underscore must be between two digits", at: start)
        }
        var result = ""
        var previous: Character = " "
        for character in text {
            if character == "_" {
                guard previous != "_" else { throw error("an underscore must be between two digits", at: start) }
            } else {
                guard allowed.contains(character) else {
                    throw error("'\(character)' is not allowed in a \(what)", at: start)
                }
                result.append(character)
            }
            previous = character
        }
        return result
    }

    /// `"…"` with escapes `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`, on one line.
    private mutating func basicString() throws(TextError) -> String {
        let start = index
        index += 1
        var view = String.UnicodeScalarView()
        while true {
            guard let s = current, s != "\n", s != "\r" else {
                throw error("the string has no closing '\"' on its line", at: start)
            }
            index += 1
            switch s {
            case "\"":
                return String(view)
            case "\\":
                view.append(try escape())
            default:
                if isForbiddenControl(s) {
                    throw error("control character U+\(hex(s)) in a string (write it as \\u\(hex(s)))", at: index - 1)
                }
                view.append(s)
            }
        }
    }

    private mutating func escape() throws(TextError) -> Unicode.Scalar {
        let start = index - 1
        guard let s = current else { throw error("the string has no closing '\"'", at: start) }
        index += 1
        switch s {
        case "b": return "\u{08}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{0C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u", "U":
            let count = s == "u" ? 4 : 8
            var digits = ""
            for _ in 0..<count {
                guard let d = current, d.properties.isASCIIHexDigit else {
                    throw error("\\\(s) needs \(count) hexadecimal digits", at: start)
                }
                digits.unicodeScalars.append(d)
                index += 1
            }
            guard let value = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(value) else {
                throw error("\\\(s)\(digits) is not a Unicode scalar value", at: start)
            }
            return scalar
        default:
            throw error("unknown escape '\\\(s)' (use \\\\ for a backslash)", at: start)
        }
    }

    /// `'…'`: taken as written, on one line.
    private mutating func literalString() throws(TextError) -> String {
        let start = index
        index += 1
        var view = String.UnicodeScalarView()
        while true {
            guard let s = current, s != "\n", s != "\r" else {
                throw error("the string has no closing \"'\" on its line", at: start)
            }
            index += 1
            if s == "'" { return String(view) }
            if isForbiddenControl(s) { throw error("control character U+\(hex(s)) in a string", at: index - 1) }
            view.append(s)
        }
    }

    /// `[v, v, …]` over any number of lines, with comments, and a trailing comma allowed.
    private mutating func array(depth: Int) throws(TextError) -> TOMLValue {
        guard depth <= Self.maxDepth else { throw error("arrays nested more than \(Self.maxDepth) deep") }
        index += 1
        var values: [TOMLValue] = []
        while true {
            try skipBlanksCommentsAndLines()
            if current == "]" {
                index += 1
                return .array(values)
            }
            values.append(try value(depth: depth))
            try skipBlanksCommentsAndLines()
            switch current {
            case ",": index += 1
            case "]": break
            default: throw error("expected ',' or ']' in the array, found \(found)")
            }
        }
    }
}
