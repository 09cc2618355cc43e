// SPDX-License-Identifier: GPL-3.0-or-later
/// a11ysay's completion scripts for bash, zsh and fish, written from the option table
/// (`a11ysay --generate-completion-script SHELL`, run by `make install`): the long options,
/// the values of `--priority` and `--at`, files after `--output` and `--socket`.
public enum CompletionScript {
    public enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    public static func render(_ shell: Shell, table: [CommandLineOption] = CommandLineOption.table) -> String {
        let options = table.filter { $0.kind != .text }
        switch shell {
        case .bash: return bash(options)
        case .zsh: return zsh(options)
        case .fish: return fish(options)
        }
    }

    /// Sourced by bash-completion, so no `#!` line.
    static func bash(_ options: [CommandLineOption]) -> String {
        let words = options.flatMap(\.spellings)
        let taking = options.filter(\.takesValue)
        var cases: [String] = []
        for option in taking where option.completion == .choices {
            let values = option.allowedValues.joined(separator: " ")
            cases.append(#"        \#(option.spelling)) COMPREPLY=($(compgen -W '\#(values)' -- "$cur")); return ;;"#)
        }
        let files = taking.filter { $0.completion == .files }.map(\.spelling)
        cases.append(#"        \#(files.joined(separator: "|"))) compopt -o filenames; COMPREPLY=($(compgen -f -- "$cur")); return ;;"#)
        // Any other value is the user's to type.
        let others = taking.filter { $0.completion == .none }.map(\.spelling)
        cases.append("        \(others.joined(separator: "|"))) COMPREPLY=(); return ;;")
        return """
            # bash completion for a11ysay (a11ysay --generate-completion-script bash)
            _a11ysay() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                case $prev in
            \(cases.joined(separator: "\n"))
                esac
                if [[ $cur == -* ]]; then
                    COMPREPLY=($(compgen -W '\(words.joined(separator: " "))' -- "$cur"))
                fi
            }
            complete -F _a11ysay a11ysay

            """
    }

    static func zsh(_ options: [CommandLineOption]) -> String {
        var specs: [String] = []
        for option in options {
            let description = "[\(zshEscaped(option.help))]"
            switch option.kind {
            case .flag, .text:
                specs.append("'\(option.spelling)\(description)'")
            case .help:
                let names = option.spellings
                specs.append("'(\(names.joined(separator: " ")))'{\(names.joined(separator: ","))}'\(description)'")
            case .value, .repeatable:
                let action =
                    switch option.completion {
                    case .files: "_files"
                    case .choices: "(\(option.allowedValues.joined(separator: " ")))"
                    case .none: " "
                    }
                let repeated = option.kind == .repeatable ? "*" : ""
                specs.append("'\(repeated)\(option.spelling)=\(description):\(zshEscaped(option.valueName)):\(action)'")
            }
        }
        specs.append("':text:'")
        return """
            #compdef a11ysay
            # zsh completion for a11ysay (a11ysay --generate-completion-script zsh)
            _arguments -s \\
                \(specs.joined(separator: " \\\n    "))

            """
    }

    /// Inside a single-quoted `_arguments` spec: the quote itself, and what `_arguments` reads.
    static func zshEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "'": out += #"'\''"#
            case "[", "]", ":", "\\": out += "\\\(character)"
            default: out.append(character)
            }
        }
        return out
    }

    static func fish(_ options: [CommandLineOption]) -> String {
        var lines = [
            "# fish completion for a11ysay (a11ysay --generate-completion-script fish)",
            "complete -c a11ysay -f",
        ]
        for option in options {
            var line = "complete -c a11ysay"
            if let shortName = option.shortName { line += " -s \(shortName)" }
            line += " -l \(option.name)"
            if option.takesValue {
                switch option.completion {
                case .files: line += " -r -F"
                case .choices: line += " -x -a '\(option.allowedValues.joined(separator: " "))'"
                case .none: line += " -x"
                }
            }
            line += " -d '\(fishEscaped(option.help))'"
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Inside single quotes, fish reads `\'` and `\\`.
    static func fishEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "'" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
