// SPDX-License-Identifier: GPL-3.0-or-later
/// One entry of a11ysay's option table (`CommandLineOption.table`): everything the parser, the help,
/// the completion scripts and the man page know about it.
public struct CommandLineOption: Sendable {
    public enum Kind: Sendable, Equatable {
        /// `--name`, on or off.
        case flag
        /// `--name VALUE` or `--name=VALUE`, at most once.
        case value
        /// `--name VALUE`, as many times as wanted.
        case repeatable
        /// The positional TEXT, at most one.
        case text
        /// `-h`, `--help`: print the help instead of doing anything.
        case help
    }

    /// What a shell offers after the option.
    public enum ValueCompletion: Sendable, Equatable {
        case none
        case files
        /// `allowedValues`.
        case choices
    }

    /// The long name without its dashes (`lang`); for the TEXT, its name in the help (`text`).
    public let name: String
    /// A one-letter alias (`h`), written `-h`.
    public let shortName: Character?
    public let kind: Kind
    /// What the value is called in the help (`WORD=IPA`); "" for flags.
    public let valueName: String
    /// The only values accepted, for options that take one of a few words; empty when any is.
    public var allowedValues: [String] { listAllowedValues() }
    /// Lists them only when asked: `allCases` instantiates array metadata (25 K instructions at
    /// start-up for two enums, callgrind), which parsing a valid value never needs.
    private let listAllowedValues: @Sendable () -> [String]
    public let completion: ValueCompletion
    public let help: String
    /// Sets the invocation's field from the value (a flag gets ""); false when the value is not one
    /// the option takes.
    let apply: @Sendable (inout Invocation, String) -> Bool
    /// What a value must be, for the error message when `apply` refuses one ("" for one of
    /// `allowedValues`, which the message lists).
    let expected: String

    /// `--name` as typed (`-h` for the help has `--help` too).
    public var spelling: String { kind == .text ? "<\(name)>" : "--\(name)" }

    /// Whether a value follows it (`--lang fr`, `--ipa WORD=IPA`).
    public var takesValue: Bool { kind == .value || kind == .repeatable }

    /// Every way to type it: `-h` and `--help`, `--lang`.
    public var spellings: [String] { (shortName.map { ["-\($0)"] } ?? []) + [spelling] }

    private init(
        _ name: String, kind: Kind, valueName: String = "", shortName: Character? = nil,
        allowedValues: @escaping @Sendable () -> [String] = { [] }, completion: ValueCompletion = .none, help: String,
        expected: String = "", apply: @escaping @Sendable (inout Invocation, String) -> Bool
    ) {
        self.name = name
        self.shortName = shortName
        self.kind = kind
        self.valueName = valueName
        self.listAllowedValues = allowedValues
        self.completion = completion
        self.help = help
        self.apply = apply
        self.expected = expected
    }

    /// An `apply` for an option that takes any value.
    private static func accepting(
        _ set: @escaping @Sendable (inout Invocation, String) -> Void
    ) -> @Sendable (inout Invocation, String) -> Bool {
        { invocation, value in
            set(&invocation, value)
            return true
        }
    }

    static func flag(_ name: String, help: String, _ set: @escaping @Sendable (inout Invocation) -> Void) -> Self {
        Self(name, kind: .flag, help: help, apply: accepting { invocation, _ in set(&invocation) })
    }

    static func value(
        _ name: String, valueName: String? = nil, completion: ValueCompletion = .none, help: String,
        _ set: @escaping @Sendable (inout Invocation, String) -> Void
    ) -> Self {
        Self(name, kind: .value, valueName: valueName ?? name, completion: completion, help: help, apply: accepting(set))
    }

    static func repeatable(
        _ name: String, valueName: String, help: String, _ append: @escaping @Sendable (inout Invocation, String) -> Void
    ) -> Self {
        Self(name, kind: .repeatable, valueName: valueName, help: help, apply: accepting(append))
    }

    static func number(_ name: String, help: String, _ set: @escaping @Sendable (inout Invocation, Double) -> Void) -> Self {
        Self(name, kind: .value, valueName: name, help: help, expected: "a number") { invocation, value in
            guard let number = Double(value), number.isFinite else { return false }
            set(&invocation, number)
            return true
        }
    }

    /// An option whose value is one of `choices`' names (`--priority high`), offered in their order.
    /// The names are the command line's own: the speech API's values have none.
    static func choice<Choice: Sendable>(
        _ name: String, _ choices: [(name: String, value: Choice)], help: String,
        _ set: @escaping @Sendable (inout Invocation, Choice) -> Void
    ) -> Self {
        Self(
            name, kind: .value, valueName: name, allowedValues: { choices.map(\.name) }, completion: .choices,
            help: help
        ) { invocation, value in
            guard let choice = choices.first(where: { $0.name == value })?.value else { return false }
            set(&invocation, choice)
            return true
        }
    }

    static func text(_ name: String, help: String, _ set: @escaping @Sendable (inout Invocation, String) -> Void) -> Self {
        Self(name, kind: .text, valueName: name, help: help, apply: accepting(set))
    }

    static func help(_ help: String) -> Self {
        Self("help", kind: .help, shortName: "h", help: help) { _, _ in true }
    }
}
