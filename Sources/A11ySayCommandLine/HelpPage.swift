/// `a11ysay --help`, rendered from the option table to a given width, in the layout
/// swift-argument-parser gave it (so that it reads as before): overview, examples, usage, the
/// TEXT, then one option a line with its help in a column.
///
/// Widths are counted in Unicode scalars, words found in the UTF-8 bytes, and the text built by
/// appending: grapheme breaking (`String.count`, splitting on a `Character`), appending scalars and
/// the generic `joined(separator:)` cost 3 M instructions (callgrind), most of `a11ysay --help`.
public enum HelpPage {
    /// Where the help column starts; a longer label puts its help on the next line.
    static let helpColumn = 26

    public static func render(width: Int, table: [CommandLineOption] = CommandLineOption.table) -> String {
        let width = max(width, helpColumn + 20)
        var out = ""
        out.reserveCapacity(4096)
        wrap("OVERVIEW: \(CommandDescription.abstract)", width: width, into: &out)
        out += "\nExamples:\n"
        for (command, note) in CommandDescription.examples {
            wrap(note.isEmpty ? command : "\(command)   (\(note))", width: width, indent: 2, hanging: 4, into: &out)
        }
        wrap(CommandDescription.autospawn, width: width, into: &out)
        var exit = "Exit status:"
        for (index, (status, meaning)) in CommandDescription.exitStatuses.enumerated() {
            exit += "\(index == 0 ? "" : ",") \(status) \(meaning)"
        }
        wrap(exit + ".", width: width, into: &out)
        out += "\nUSAGE: \(CommandDescription.usage)\n\n"
        if let text = table.first(where: { $0.kind == .text }) {
            out += "ARGUMENTS:\n"
            entry(label: "<\(text.name)>", help: text.help, width: width, into: &out)
            out += "\n"
        }
        out += "OPTIONS:\n"
        for option in table where option.kind != .text {
            entry(label: label(option), help: option.help, width: width, into: &out)
        }
        return out
    }

    /// `--lang <lang>`, `-h, --help`.
    static func label(_ option: CommandLineOption) -> String {
        let short = option.shortName.map { "-\($0), " } ?? ""
        let value = option.valueName.isEmpty ? "" : " <\(option.valueName)>"
        return short + option.spelling + value
    }

    /// The label, then its help wrapped in the help column (on the next line if the label reaches it).
    static func entry(label: String, help: String, width: Int, into out: inout String) {
        var labelWidth = 2
        for byte in label.utf8 where byte & 0xC0 != 0x80 { labelWidth += 1 }
        out += "  " + label
        if labelWidth < helpColumn {
            appendSpaces(helpColumn - labelWidth, to: &out)
            wrap(help, width: width, indent: helpColumn, skippingFirstIndent: true, into: &out)
        } else {
            out += "\n"
            wrap(help, width: width, indent: helpColumn, into: &out)
        }
    }

    /// Appends `text`'s words in lines of at most `width` scalars (a longer word gets a line of its
    /// own), the first line indented by `indent` (already written if `skippingFirstIndent`), the
    /// others by `hanging` (default: `indent`).
    static func wrap(
        _ text: String, width: Int, indent: Int = 0, hanging: Int? = nil, skippingFirstIndent: Bool = false,
        into out: inout String
    ) {
        if !skippingFirstIndent { appendSpaces(indent, to: &out) }
        var column = indent
        var lineIsEmpty = true
        let bytes = text.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == UInt8(ascii: " ") {
                bytes.formIndex(after: &index)
                continue
            }
            let start = index
            var wordWidth = 0
            while index < bytes.endIndex && bytes[index] != UInt8(ascii: " ") {
                // Continuation bytes (10xxxxxx) do not start a scalar.
                if bytes[index] & 0xC0 != 0x80 { wordWidth += 1 }
                bytes.formIndex(after: &index)
            }
            if !lineIsEmpty && column + 1 + wordWidth > width {
                out.append("\n")
                appendSpaces(hanging ?? indent, to: &out)
                column = hanging ?? indent
                lineIsEmpty = true
            }
            if !lineIsEmpty {
                out.append(" ")
                column += 1
            }
            out.append(contentsOf: text[start..<index])
            column += wordWidth
            lineIsEmpty = false
        }
        out.append("\n")
    }

    private static func appendSpaces(_ count: Int, to out: inout String) {
        let end = spaces.utf8.index(spaces.utf8.startIndex, offsetBy: min(count, spaces.utf8.count))
        out.append(contentsOf: spaces[..<end])
    }

    /// Indentation to copy from: wider than any help column.
    private static let spaces = "                                        "
}
