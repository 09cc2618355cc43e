// SPDX-License-Identifier: GPL-3.0-or-later

/// TOML text that `TOMLReader` reads back to the same values: what the documented example
/// configuration is written with (`DaemonConfiguration.documentedFile`), and what the TOML fuzzer
/// checks the reader against (what it accepts, written and read again, is written the same).
public enum TOMLWriter {
    /// The root's values, then each table under its header (`[a.b]`), depth first. Every table is
    /// given its header, so that an empty one is kept.
    public static func document(_ table: TOMLTable) -> String {
        var text = ""
        write(table, at: [], into: &text)
        return text
    }

    private static func write(_ table: TOMLTable, at path: [String], into text: inout String) {
        for name in table.keys {
            guard let value = table[name], value.table == nil else { continue }
            text += "\(key(name)) = \(Self.value(value))\n"
        }
        for name in table.keys {
            guard let child = table[name]?.table else { continue }
            let childPath = path + [name]
            text += "[\(childPath.map(key).joined(separator: "."))]\n"
            write(child, at: childPath, into: &text)
        }
    }

    /// A key as TOML writes it: bare when it can be (letters, digits, `_`, `-`), else quoted.
    public static func key(_ key: String) -> String {
        let bare = !key.isEmpty && key.unicodeScalars.allSatisfy { s in
            switch s {
            case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
            default: false
            }
        }
        return bare ? key : quoted(key)
    }

    /// A value on one line. A table has no one-line form in the subset (inline tables are
    /// refused): it is written by `document`, under its header, and here as `{}` only so that
    /// every value has some text.
    public static func value(_ value: TOMLValue) -> String {
        switch value {
        case .string(let string): quoted(string)
        case .integer(let integer): String(integer)
        case .float(let float): float.isNaN ? "nan" : String(describing: float)
        case .boolean(let boolean): String(boolean)
        case .array(let values): "[" + values.map(Self.value).joined(separator: ", ") + "]"
        case .table: "{}"
        }
    }

    /// A basic string: quotes, backslashes and every control character escaped (the reader
    /// refuses them raw).
    private static func quoted(_ string: String) -> String {
        var text = "\""
        for s in string.unicodeScalars {
            switch s {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case _ where s.value < 0x20 || s.value == 0x7F:
                let digits = String(s.value, radix: 16, uppercase: true)
                text += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            default: text.unicodeScalars.append(s)
            }
        }
        return text + "\""
    }
}
