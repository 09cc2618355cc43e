// SPDX-License-Identifier: GPL-3.0-or-later
/// a11ysay(1) in man(7) macros, from the option table and `CommandDescription`
/// (`a11ysay --generate-manual`, run by `make install`). Written to pass `groff -ww -man -z` and
/// lintian: non-ASCII characters and backslashes escaped, option dashes as `\-`, no blank lines.
public enum ManualPage {
    public static func render(table: [CommandLineOption] = CommandLineOption.table) -> String {
        var lines = [
            #".TH A11YSAY 1 "" "a11yd" "User Commands""#,
            ".SH NAME",
            #"a11ysay \- "# + escaped(lowercasingFirst(CommandDescription.abstract.dropLast())),
            ".SH SYNOPSIS",
            ".B a11ysay",
            #"[\fIoptions\fR] [\fItext\fR]"#,
            ".SH DESCRIPTION",
            escaped("a11ysay sends TEXT to the a11yd speech daemon to be spoken, or controls what the daemon is saying."),
            escaped(CommandDescription.autospawn),
            ".SH OPTIONS",
        ]
        for option in table {
            lines.append(".TP")
            switch option.kind {
            case .text:
                lines.append(#".I \#(option.name)"#)
            case .flag, .help:
                lines.append(".B \(escaped(option.spellings.joined(separator: ", ")))")
            case .value, .repeatable:
                lines.append(#".BI \#(escaped(option.spelling)) " \#(escaped(option.valueName))""#)
            }
            var help = option.help
            if !option.allowedValues.isEmpty { help += " Values: " + option.allowedValues.joined(separator: ", ") + "." }
            lines.append(escaped(help))
        }
        lines.append(".SH EXIT STATUS")
        for (status, meaning) in CommandDescription.exitStatuses {
            lines += [".TP", ".B \(status)", escaped(uppercasingFirst(meaning) + ".")]
        }
        lines += [
            ".SH ENVIRONMENT",
            ".TP", ".B A11YD_SOCKET", escaped("The daemon's socket, when --socket is not given."),
            ".TP", ".B XDG_RUNTIME_DIR", escaped("Where the socket is by default: $XDG_RUNTIME_DIR/a11yd/socket."),
            ".TP", ".B XDG_CONFIG_HOME", escaped("Where a11yd's configuration file is (default: ~/.config)."),
            ".TP", ".B A11YD_NO_AUTOSPAWN", escaped("Set to 1: never start a11yd when nothing listens on the socket."),
            ".TP", ".B COLUMNS", escaped("The width of --help (default: the terminal's, else 80)."),
            ".SH FILES",
            ".TP", ".I ~/.config/a11yd/a11yd.toml",
            escaped("a11yd's configuration; a11ysay reads its daemon.socket and daemon.autospawn keys."),
            ".TP", ".I $XDG_STATE_HOME/a11yd/a11yd.log",
            escaped("The log of an a11yd that a11ysay started itself."),
            ".SH EXAMPLES",
        ]
        for (command, note) in CommandDescription.examples {
            lines += [".TP", ".B \(escaped(command))", escaped(note.isEmpty ? "" : uppercasingFirst(note) + ".")]
        }
        lines += [".SH SEE ALSO", ".BR a11yd (1),", ".BR spd\\-say (1)"]
        // An example without a note has an empty line after .B: drop it, groff warns of blank lines.
        return lines.filter { !$0.isEmpty }.joined(separator: "\n") + "\n"
    }

    /// `text` as roff input text: `\` as `\e`, `-` as `\-`, `"` as `\(dq` (macro arguments are quoted), non-ASCII as `\[uXXXX]`, and a leading
    /// `.` or `'` (a request) made text with `\&`.
    static func escaped(_ text: some StringProtocol) -> String {
        var out = text.first == "." || text.first == "'" ? #"\&"# : ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += #"\e"#
            case "-": out += #"\-"#
            case "\"": out += #"\(dq"#
            case _ where scalar.value > 0x7E:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += #"\[u"# + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func lowercasingFirst(_ text: some StringProtocol) -> String { text.prefix(1).lowercased() + text.dropFirst() }
    private static func uppercasingFirst(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }
}
