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

    static func flag(_ name: String, help: String, _ set: @escaping @Sendable (inout Invocation) -> Void) -> Self {
        Self(
            name: name, shortName: nil, kind: .flag, valueName: "", listAllowedValues: { [] }, completion: .none, help: help,
            apply: { invocation, _ in
                set(&invocation)
                return true
            }, expected: "")
    }

    static func value(
        _ name: String, valueName: String? = nil, completion: ValueCompletion = .none, help: String,
        _ set: @escaping @Sendable (inout Invocation, String) -> Void
    ) -> Self {
        Self(
            name: name, shortName: nil, kind: .value, valueName: valueName ?? name, listAllowedValues: { [] }, completion: completion,
            help: help,
            apply: { invocation, value in
                set(&invocation, value)
                return true
            }, expected: "")
    }

    static func repeatable(
        _ name: String, valueName: String, help: String, _ append: @escaping @Sendable (inout Invocation, String) -> Void
    ) -> Self {
        Self(
            name: name, shortName: nil, kind: .repeatable, valueName: valueName, listAllowedValues: { [] }, completion: .none, help: help,
            apply: { invocation, value in
                append(&invocation, value)
                return true
            }, expected: "")
    }

    static func number(_ name: String, help: String, _ set: @escaping @Sendable (inout Invocation, Double) -> Void) -> Self {
        Self(
            name: name, shortName: nil, kind: .value, valueName: name, listAllowedValues: { [] }, completion: .none, help: help,
            apply: { invocation, value in
                guard let number = Double(value), number.isFinite else { return false }
                set(&invocation, number)
                return true
            }, expected: "a number")
    }

    /// An option whose value is one of `Choice`'s raw values (`--priority high`).
    static func choice<Choice: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, of _: Choice.Type, help: String, _ set: @escaping @Sendable (inout Invocation, Choice) -> Void
    ) -> Self where Choice.RawValue == String {
        Self(
            name: name, shortName: nil, kind: .value, valueName: name, listAllowedValues: { Choice.allCases.map(\.rawValue) },
            completion: .choices, help: help,
            apply: { invocation, value in
                guard let choice = Choice(rawValue: value) else { return false }
                set(&invocation, choice)
                return true
            }, expected: "")
    }

    static func text(_ name: String, help: String, _ set: @escaping @Sendable (inout Invocation, String) -> Void) -> Self {
        Self(
            name: name, shortName: nil, kind: .text, valueName: name, listAllowedValues: { [] }, completion: .none, help: help,
            apply: { invocation, value in
                set(&invocation, value)
                return true
            }, expected: "")
    }

    static func help(_ help: String) -> Self {
        Self(
            name: "help", shortName: "h", kind: .help, valueName: "", listAllowedValues: { [] }, completion: .none, help: help,
            apply: { _, _ in true }, expected: "")
    }
}
