// SPDX-License-Identifier: GPL-3.0-or-later
/// `a11ysay --help`, rendered from the option table to a given width, in the layout
/// swift-argument-parser gave it (so that it reads as before): overview, examples, usage, the
/// TEXT, then one option a line with its help in a column.
///
/// Built as UTF-8 bytes, widths counted in Unicode scalars: grapheme breaking (`String.count`,
/// splitting on a `Character`), appending to a `String` and the generic `joined(separator:)` cost
/// 3 M instructions (callgrind), most of `a11ysay --help`.
public enum HelpPage {
    /// Where the help column starts; a longer label puts its help on the next line.
    static let helpColumn = 26

    public static func render(width: Int, table: [CommandLineOption] = CommandLineOption.table) -> String {
        let width = max(width, helpColumn + 20)
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        wrap("OVERVIEW: " + CommandDescription.abstract, width: width, into: &out)
        out += "\nExamples:\n".utf8
        for (command, note) in CommandDescription.examples {
            wrap(note.isEmpty ? command : command + "   (" + note + ")", width: width, indent: 2, hanging: 4, into: &out)
        }
        wrap(CommandDescription.autospawn, width: width, into: &out)
        var exit = "Exit status:"
        for (index, (status, meaning)) in CommandDescription.exitStatuses.enumerated() {
            exit += (index == 0 ? " " : ", ") + String(status) + " " + meaning
        }
        wrap(exit + ".", width: width, into: &out)
        out += "\nUSAGE: \(CommandDescription.usage)\n\n".utf8
        if let text = table.first(where: { $0.kind == .text }) {
            out += "ARGUMENTS:\n".utf8
            entry(label: text.spelling, help: text.help, width: width, into: &out)
            out += "\n".utf8
        }
        out += "OPTIONS:\n".utf8
        for option in table where option.kind != .text {
            entry(label: label(option), help: option.help, width: width, into: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `--lang <lang>`, `-h, --help`.
    static func label(_ option: CommandLineOption) -> String {
        let value = option.valueName.isEmpty ? "" : " <" + option.valueName + ">"
        return option.spellings.joined(separator: ", ") + value
    }

    /// The label, then its help wrapped in the help column (on the next line if the label reaches it).
    static func entry(label: String, help: String, width: Int, into out: inout [UInt8]) {
        var labelWidth = 2
        for byte in label.utf8 where byte & 0xC0 != 0x80 { labelWidth += 1 }
        out += "  ".utf8
        out += label.utf8
        if labelWidth < helpColumn {
            appendSpaces(helpColumn - labelWidth, to: &out)
            wrap(help, width: width, indent: helpColumn, skippingFirstIndent: true, into: &out)
        } else {
            out.append(UInt8(ascii: "\n"))
            wrap(help, width: width, indent: helpColumn, into: &out)
        }
    }

    /// Appends `text`'s words in lines of at most `width` scalars (a longer word gets a line of its
    /// own), the first line indented by `indent` (already written if `skippingFirstIndent`), the
    /// others by `hanging` (default: `indent`).
    static func wrap(
        _ text: String, width: Int, indent: Int = 0, hanging: Int? = nil, skippingFirstIndent: Bool = false,
        into out: inout [UInt8]
    ) {
        if !skippingFirstIndent { appendSpaces(indent, to: &out) }
        var column = indent
        var lineIsEmpty = true
        var text = text
        // Contiguous bytes, so that a word is copied as a block.
        text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: " ") {
                    index += 1
                    continue
                }
                let start = index
                var wordWidth = 0
                while index < bytes.count && bytes[index] != UInt8(ascii: " ") {
                    // Continuation bytes (10xxxxxx) do not start a scalar.
                    if bytes[index] & 0xC0 != 0x80 { wordWidth += 1 }
                    index += 1
                }
                if !lineIsEmpty && column + 1 + wordWidth > width {
                    out.append(UInt8(ascii: "\n"))
                    appendSpaces(hanging ?? indent, to: &out)
                    column = hanging ?? indent
                    lineIsEmpty = true
                }
                if !lineIsEmpty {
                    out.append(UInt8(ascii: " "))
                    column += 1
                }
                out += UnsafeBufferPointer(rebasing: bytes[start..<index])
                column += wordWidth
                lineIsEmpty = false
            }
        }
        out.append(UInt8(ascii: "\n"))
    }

    private static func appendSpaces(_ count: Int, to out: inout [UInt8]) {
        out += repeatElement(UInt8(ascii: " "), count: max(count, 0))
    }
}
