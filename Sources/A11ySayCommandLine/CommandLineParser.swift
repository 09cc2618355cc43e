// SPDX-License-Identifier: GPL-3.0-or-later
/// What a command line asks a11ysay for.
public enum CommandLineRequest: Equatable, Sendable {
    case run(Invocation)
    case help
    case completionScript(CompletionScript.Shell)
    case manualPage
}

/// Why a command line was refused: one sentence naming the option, printed with the usage line.
public struct UsageError: Error, Equatable, Sendable {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }
}

/// Reads a whole command line against `CommandLineOption.table`.
///
/// Accepted: `--name`, `--name VALUE`, `--name=VALUE`, `-h`/`--help` anywhere before `--`,
/// `--` ending the options (a TEXT may then start with `-`), one TEXT anywhere. A value taken
/// from the next argument must not start with `-` (so `--lang --stop` says the value is missing),
/// except `-` itself; `--rate=-1` gives one that does. A flag may be repeated; an option with a
/// value, unless repeatable, may not. And for the build's generators, alone:
/// `--generate-completion-script SHELL` and `--generate-manual`.
public enum CommandLineParser {
    public static func parse(
        _ arguments: [String], table: [CommandLineOption] = CommandLineOption.table
    ) throws(UsageError) -> CommandLineRequest {
        if let generator = try generatorRequest(arguments) { return generator }
        // The help wins over everything else on the line, as it did with swift-argument-parser.
        for argument in arguments {
            if argument == "--" { break }
            if argument == "-h" || argument == "--help" { return .help }
        }

        var invocation = Invocation()
        // Names of the options (and the TEXT) that took a value: a few, so an array (a Set would
        // seed its hasher at start-up).
        var given: [String] = []
        var optionsEnded = false
        var next = 0
        while next < arguments.count {
            let argument = arguments[next]
            next += 1
            if !optionsEnded && argument == "--" {
                optionsEnded = true
                continue
            }
            guard !optionsEnded, argument.hasPrefix("-"), argument != "-" else {
                guard let text = table.first(where: { $0.kind == .text }) else {
                    throw UsageError("unexpected argument '\(argument)'")
                }
                guard !given.contains(text.name) else {
                    throw UsageError("unexpected second text '\(argument)' (quote the text to speak as one argument)")
                }
                given.append(text.name)
                _ = text.apply(&invocation, argument)
                continue
            }
            let (spelling, attached) = split(argument)
            guard let option = table.first(where: { $0.kind != .text && $0.matches(spelling) }) else {
                throw UsageError("unknown option '\(spelling)'")
            }
            switch option.kind {
            case .flag, .help, .text:
                if let attached { throw UsageError("\(spelling) takes no value, but '\(attached)' was given") }
                _ = option.apply(&invocation, "")
            case .value, .repeatable:
                let value: String
                if let attached {
                    value = attached
                } else if next < arguments.count, !arguments[next].hasPrefix("-") || arguments[next] == "-" {
                    value = arguments[next]
                    next += 1
                } else {
                    throw UsageError("missing value for \(spelling) <\(option.valueName)>")
                }
                if option.kind == .value {
                    guard !given.contains(option.name) else { throw UsageError("\(spelling) given twice (it takes one value)") }
                    given.append(option.name)
                }
                guard option.apply(&invocation, value) else {
                    let expected = option.allowedValues.isEmpty ? option.expected : "one of " + option.allowedValues.joined(separator: ", ")
                    throw UsageError("the value '\(value)' is invalid for \(spelling) <\(option.valueName)>: \(expected) is wanted")
                }
            }
        }
        if let problem = invocation.problem() { throw UsageError(problem) }
        return .run(invocation)
    }

    /// `--name=value` as its two halves; a short option has no attached value.
    private static func split(_ argument: String) -> (spelling: String, attached: String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// The generators `make install` runs, recognised only as the whole command line.
    private static func generatorRequest(_ arguments: [String]) throws(UsageError) -> CommandLineRequest? {
        guard let first = arguments.first else { return nil }
        let (spelling, attached) = split(first)
        switch spelling {
        case "--generate-manual":
            guard arguments.count == 1, attached == nil else { throw UsageError("--generate-manual takes nothing else") }
            return .manualPage
        case "--generate-completion-script":
            let values = (attached.map { [$0] } ?? []) + arguments.dropFirst()
            let shells = CompletionScript.Shell.allCases.map(\.rawValue)
            guard values.count == 1, let shell = CompletionScript.Shell(rawValue: values[0]) else {
                throw UsageError("--generate-completion-script takes one of \(shells.joined(separator: ", "))")
            }
            return .completionScript(shell)
        default:
            return nil
        }
    }
}

extension CommandLineOption {
    /// Whether `spelling` (`--lang`, `-h`) names this option.
    func matches(_ spelling: String) -> Bool {
        if spelling.hasPrefix("--") { return spelling.utf8.count == name.utf8.count + 2 && spelling.hasSuffix(name) }
        guard let shortName else { return false }
        return spelling.count == 2 && spelling.last == shortName
    }
}
