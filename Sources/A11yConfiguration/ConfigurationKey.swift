// SPDX-License-Identifier: GPL-3.0-or-later

/// One key of a11yd's configuration file: where it is, how its value is read (and refused, with
/// the key named) and how it is written. a11yd's table of keys (`DaemonConfiguration.keys`) is
/// made of these, and a11ysay reads the few it needs through the same ones (`ClientKeys`), so that
/// a value means the same to both.
public struct ConfigurationKey<Value: Sendable>: Sendable {
    /// The table the key is in: `voice` for `[voice]`.
    public let section: String
    /// nil when the section itself is the value (`[voices]`: any language = a voice).
    public let name: String?
    /// The values accepted, as the documented file says them (`80...450`), when the type alone
    /// does not say.
    public let accepted: String?
    private let parse: @Sendable (TOMLValue, _ key: String) throws(ConfigurationValueError) -> Value
    private let encode: @Sendable (Value) -> TOMLValue

    public init(
        section: String, name: String?, accepted: String? = nil,
        parse: @escaping @Sendable (TOMLValue, _ key: String) throws(ConfigurationValueError) -> Value,
        encode: @escaping @Sendable (Value) -> TOMLValue
    ) {
        self.section = section
        self.name = name
        self.accepted = accepted
        self.parse = parse
        self.encode = encode
    }

    /// `voice.rate`; `voices` for a whole section.
    public var dottedName: String { name.map { "\(section).\($0)" } ?? section }

    /// The key's value in a document, or nil when it is not there (nor its section, nor a table
    /// where its section should be: whoever reads every key says so, `DaemonConfiguration.parse`).
    public func value(in document: TOMLTable) throws(ConfigurationValueError) -> Value? {
        guard let section = document[section] else { return nil }
        guard let name else { return try parse(section, dottedName) }
        guard let value = section.table?[name] else { return nil }
        return try parse(value, dottedName)
    }

    /// A value as written in the file.
    public func value(_ written: TOMLValue) throws(ConfigurationValueError) -> Value {
        try parse(written, dottedName)
    }

    /// A value as the file writes it.
    public func written(_ value: Value) -> TOMLValue { encode(value) }
}

/// A value a key cannot take, with the key named.
public struct ConfigurationValueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Dotted: `voice.rate`, `voices.en`.
    public let key: String
    /// What it must be, as a sentence's end: "must be an integer".
    public let requirement: String

    public init(key: String, _ requirement: String) {
        self.key = key
        self.requirement = requirement
    }

    /// "'voice.rate' must be an integer".
    public var description: String { "'\(key)' \(requirement)" }
}

extension ConfigurationKey where Value == Int {
    /// An integer within `range`.
    public static func integer(_ section: String, _ name: String, in range: ClosedRange<Int>) -> Self {
        Self(
            section: section, name: name, accepted: "\(range.lowerBound)...\(range.upperBound)",
            parse: { value, key throws(ConfigurationValueError) in
                guard let number = value.integer else { throw ConfigurationValueError(key: key, "must be an integer") }
                guard range.contains(number) else {
                    throw ConfigurationValueError(key: key, "must be within \(range.lowerBound)...\(range.upperBound), got \(number)")
                }
                return number
            },
            encode: { .integer($0) })
    }
}

extension ConfigurationKey where Value == Bool {
    /// `true` or `false`.
    public static func boolean(_ section: String, _ name: String) -> Self {
        Self(
            section: section, name: name,
            parse: { value, key throws(ConfigurationValueError) in
                guard let bool = value.boolean else { throw ConfigurationValueError(key: key, "must be true or false") }
                return bool
            },
            encode: { .boolean($0) })
    }
}

extension ConfigurationKey where Value == String? {
    /// A string, where the empty string (what the documented file shows) means "not set": the
    /// default the key's documentation describes.
    public static func optionalString(_ section: String, _ name: String) -> Self {
        Self(
            section: section, name: name,
            parse: { value, key throws(ConfigurationValueError) in
                guard let string = value.string else { throw ConfigurationValueError(key: key, "must be a string") }
                return string.isEmpty ? nil : string
            },
            encode: { .string($0 ?? "") })
    }
}

extension ConfigurationKey where Value: CaseIterable {
    /// One of `Value`'s cases, by the name `caseName` gives it: for values whose names belong to
    /// another format than this file (SSIP's priorities), so that the type itself carries none.
    public static func choice(_ section: String, _ name: String, named caseName: @escaping @Sendable (Value) -> String) -> Self {
        let names = Value.allCases.map(caseName)
        let expected = names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + (names.last ?? "")
        return Self(
            section: section, name: name,
            parse: { value, key throws(ConfigurationValueError) in
                guard let string = value.string else { throw ConfigurationValueError(key: key, "must be a string") }
                guard let choice = Value.allCases.first(where: { caseName($0) == string }) else {
                    throw ConfigurationValueError(key: key, "must be \(expected), got \"\(string)\"")
                }
                return choice
            },
            encode: { .string(caseName($0)) })
    }
}

extension ConfigurationKey where Value: RawRepresentable<String> {
    /// One of the names `Value` has; `requirement` says which, given the name found.
    public static func choice(_ section: String, _ name: String, requirement: @escaping @Sendable (String) -> String) -> Self {
        Self(
            section: section, name: name,
            parse: { value, key throws(ConfigurationValueError) in
                guard let string = value.string else { throw ConfigurationValueError(key: key, "must be a string") }
                guard let choice = Value(rawValue: string) else { throw ConfigurationValueError(key: key, requirement(string)) }
                return choice
            },
            encode: { .string($0.rawValue) })
    }
}

/// The keys a11ysay reads too (`ClientSettings`), defined once: a11yd's table has these same rows.
public enum ClientKeys {
    /// `daemon.socket`: where the JSON socket is (`SocketLocation`); empty, the default place.
    public static let socket = ConfigurationKey<String?>.optionalString("daemon", "socket")
    /// `daemon.autospawn`: whether a11ysay may start a11yd when nothing listens.
    public static let autospawn = ConfigurationKey<Bool>.boolean("daemon", "autospawn")
}
