// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yConfiguration
import Testing

@Suite struct TOMLReaderTests {
    private func read(_ text: String) throws(TextError) -> TOMLTable { try TOMLReader.read(text) }

    @Test func everyValueKindIsRead() throws {
        let table = try read("""
            basic = "tab\\there \\"quoted\\" back\\\\slash \\u00e9\\U0001F600 \\b\\f\\r\\n"
            literal = 'C:\\Users\\a11y "as is"'
            empty = ""
            unicode = "bonjour à tous"
            decimal = +1_000
            negative = -17
            zero = 0
            hex = 0xDEAD_beef
            octal = 0o755
            binary = 0b1101
            smallest = -9223372036854775808
            fraction = 3.1415
            exponent = -2e-3
            both = 6.626_07E+34
            infinity = -inf
            notANumber = nan
            yes = true
            no = false
            """)
        #expect(table["basic"] == .string("tab\there \"quoted\" back\\slash é😀 \u{08}\u{0C}\r\n"))
        #expect(table["literal"] == .string("C:\\Users\\a11y \"as is\""))
        #expect(table["empty"] == .string(""))
        #expect(table["unicode"] == .string("bonjour à tous"))
        #expect(table["decimal"] == .integer(1000))
        #expect(table["negative"] == .integer(-17))
        #expect(table["zero"] == .integer(0))
        #expect(table["hex"] == .integer(0xDEAD_BEEF))
        #expect(table["octal"] == .integer(0o755))
        #expect(table["binary"] == .integer(13))
        #expect(table["smallest"] == .integer(Int.min))
        #expect(table["fraction"] == .float(3.1415))
        #expect(table["exponent"] == .float(-0.002))
        #expect(table["both"] == .float(6.62607e34))
        #expect(table["infinity"] == .float(-.infinity))
        #expect(table["notANumber"]?.float?.isNaN == true)
        #expect(table["yes"] == .boolean(true))
        #expect(table["no"] == .boolean(false))
    }

    @Test func arraysSpanLinesWithCommentsAndATrailingComma() throws {
        let table = try read("""
            uids = [ 1001, # the first
                1002 ,
              # a comment alone
                1003,
            ]
            empty = []
            nested = [[1, 2], ["a", 'b'], []]
            mixed = [1, "two", 3.0, false]
            """)
        #expect(table["uids"] == .array([.integer(1001), .integer(1002), .integer(1003)]))
        #expect(table["empty"] == .array([]))
        #expect(table["nested"] == .array([
            .array([.integer(1), .integer(2)]), .array([.string("a"), .string("b")]), .array([]),
        ]))
        #expect(table["mixed"] == .array([.integer(1), .string("two"), .float(3), .boolean(false)]))
    }

    @Test func tablesHeadersAndDottedKeys() throws {
        let table = try read("""
            \u{FEFF}# a comment before anything
            top = 1

            [voice]   # trailing comment
            rate = 175
            [ "quoted key" . 'and literal' ]
            x = 1
            [a.b.c]
            d = 2
            [a]
            e.f = 3
            e . g = "four"
            [a.e.h]
            i = 5
            """)
        #expect(table.keys == ["top", "voice", "quoted key", "a"])
        #expect(table["top"] == .integer(1))
        #expect(table["voice"]?.table?["rate"] == .integer(175))
        #expect(table["quoted key"]?.table?["and literal"]?.table?["x"] == .integer(1))
        let a = try #require(table["a"]?.table)
        #expect(a.keys == ["b", "e"])
        #expect(a["b"]?.table?["c"]?.table?["d"] == .integer(2))
        let e = try #require(a["e"]?.table)
        #expect(e.keys == ["f", "g", "h"])
        #expect(e["f"] == .integer(3))
        #expect(e["g"] == .string("four"))
        #expect(e["h"]?.table?["i"] == .integer(5))
    }

    @Test func windowsLineEndingsAndAnEmptyText() throws {
        let table = try read("[voice]\r\nrate = 100\r\n# done\r\n")
        #expect(table["voice"]?.table?["rate"] == .integer(100))
        #expect(try read("").keys.isEmpty)
        #expect(try read("\n\n  \t\n# only comments\n").keys.isEmpty)
    }

    @Test(arguments: [
        // Syntax
        ("rate = = 3", "line 1, column 8: expected a value (a string, number, true, false or an array), found '='"),
        ("[voice]\nrate 3", "line 2, column 6: expected '=' after the key, found '3'"),
        ("rate = 3 4", "line 1, column 10: expected the end of the line after the value, found '4'"),
        ("= 3", "line 1, column 1: expected a key (letters, digits, '_', '-', or a quoted string), found '='"),
        ("a. = 3", "line 1, column 4: expected a key (letters, digits, '_', '-', or a quoted string), found '='"),
        ("[voice", "line 1, column 7: expected ']' to end the table header, found the end of the file"),
        ("[voice] x = 1", "line 1, column 9: expected the end of the line after the table header, found 'x'"),
        ("[]", "line 1, column 2: expected a key (letters, digits, '_', '-', or a quoted string), found ']'"),
        ("a = 1\rb = 2", "line 1, column 6: a carriage return must be followed by a line feed"),
        ("a = 1 # bell \u{07}", "line 1, column 14: control character U+0007 in a comment"),
        // Strings
        ("a = \"open\nb = 1", "line 1, column 5: the string has no closing '\"' on its line"),
        ("a = 'open", "line 1, column 5: the string has no closing \"'\" on its line"),
        ("a = \"\\x41\"", "line 1, column 6: unknown escape '\\x' (use \\\\ for a backslash)"),
        ("a = \"\\u12\"", "line 1, column 6: \\u needs 4 hexadecimal digits"),
        ("a = \"\\uD800\"", "line 1, column 6: \\uD800 is not a Unicode scalar value"),
        ("a = \"tab\there, bell\u{07}\"", "line 1, column 20: control character U+0007 in a string (write it as \\u0007)"),
        ("a = 'bell\u{07}'", "line 1, column 10: control character U+0007 in a string"),
        ("a = \"\"\"multi\"\"\"", "line 1, column 5: multi-line strings (\"\"\") are not supported"),
        ("a = '''multi'''", "line 1, column 5: multi-line strings (''') are not supported"),
        // Numbers
        ("a = 9223372036854775808", "line 1, column 5: 9223372036854775808 does not fit in a 64-bit integer"),
        ("a = 0x1_0000_0000_0000_0000", "line 1, column 5: 0x1_0000_0000_0000_0000 does not fit in a 64-bit integer"),
        ("a = 007", "line 1, column 5: 007: leading zeros are not allowed"),
        ("a = 1__000", "line 1, column 5: an underscore must be between two digits"),
        ("a = _1", "line 1, column 5: expected a value (a string, number, true, false or an array), found '_'"),
        ("a = 1_", "line 1, column 5: an underscore must be between two digits"),
        ("a = 12abc", "line 1, column 5: 'a' is not allowed in a number"),
        ("a = -0x10", "line 1, column 5: a hexadecimal integer cannot have a sign"),
        ("a = 0b102", "line 1, column 5: '2' is not allowed in a binary integer"),
        ("a = 1.", "line 1, column 5: expected digits in the fraction"),
        ("a = 1e", "line 1, column 5: expected digits in the exponent"),
        ("a = 1e5.0", "line 1, column 5: 1e5.0 is not a number"),
        ("a = +", "line 1, column 5: expected digits in the number"),
        ("a = tru", "line 1, column 5: expected true or false, found 'tru'"),
        // What the subset leaves out
        ("when = 1979-05-27", "line 1, column 8: dates and times are not supported"),
        ("when = 07:32:00", "line 1, column 8: dates and times are not supported"),
        ("point = { x = 1 }", "line 1, column 9: inline tables ({…}) are not supported: write a [table] section"),
        ("[[voices]]\nrate = 1", "line 1, column 1: arrays of tables ([[…]]) are not supported: write one [table] per section"),
        // Arrays
        ("a = [1 2]", "line 1, column 8: expected ',' or ']' in the array, found '2'"),
        ("a = [1,\n", "line 2, column 1: expected a value (a string, number, true, false or an array), found the end of the file"),
        ("a = [,]", "line 1, column 6: expected a value (a string, number, true, false or an array), found ','"),
        // Definitions
        ("a = 1\na = 2", "line 2, column 1: 'a' is defined twice"),
        ("[voice]\nrate = 1\n[voice]", "line 3, column 1: table [voice] is defined twice"),
        ("a = 1\n[a]", "line 2, column 1: 'a' is already a value, not a table"),
        ("a = 1\n[a.b]", "line 2, column 1: 'a' is already a value, not a table"),
        ("a = 1\na.b = 2", "line 2, column 1: 'a' is already a value, not a table"),
        ("[a.b]\n[a]\nb = 1", "line 3, column 1: 'a.b' is defined twice"),
        ("[a]\nb.c = 1\n[a.b]", "line 3, column 1: table [a.b] is defined twice"),
        ("[a.b]\nc = 1\n[a]\nb.d = 1", "line 4, column 1: table [a.b] is already defined; add to it under its header"),
        ("\"a.b\" = 1\na.b = 2\n\"a b\" = 3\n\"a b\" = 4", "line 4, column 1: '\"a b\"' is defined twice"),
    ])
    func refusalsNameTheLineAndColumn(text: String, message: String) {
        #expect(throws: TextError.self) { try read(text) }
        do {
            _ = try read(text)
        } catch {
            #expect(error.located == message)
        }
    }

    @Test func limitsBoundWhatAFileCosts() {
        let large = String(repeating: "# padding\n", count: TOMLReader.maxInputBytes / 10 + 1)
        do {
            _ = try read(large)
            Issue.record("read a text larger than the limit")
        } catch {
            #expect(error.line == nil)
            #expect(error.located == "the text has \(large.utf8.count) bytes; at most \(TOMLReader.maxInputBytes) are accepted")
        }
        let deep = "a = " + String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        do {
            _ = try read(deep)
            Issue.record("read arrays nested 33 deep")
        } catch {
            #expect(error.located == "line 1, column 37: arrays nested more than 32 deep")
        }
        // A text made only of brackets cannot exhaust the stack either.
        #expect(throws: TextError.self) { try read("a = " + String(repeating: "[", count: 100_000)) }
        let allowed = "a = " + String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect((try? read(allowed)) != nil)
    }
}
