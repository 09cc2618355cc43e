// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// What one run of a11ysay was asked to do, as plain values: what `CommandLineParser` fills from
/// the option table (`CommandLineOption.table`), and what a11ysay's `run()` then does.
public struct Invocation: Equatable, Sendable {
    public var text: String?
    public var layout = false
    public var screen = false
    public var scrolled = false
    public var queue = false
    public var priority: Priority?
    public var lang: String?
    public var voice: String?
    public var rate: Double?
    public var pitch: Double?
    public var volume: Double?
    public var wait = false
    public var ipa: [String] = []
    public var spell: [String] = []
    public var ssml = false
    public var showIPA = false
    public var output: String?
    public var pause = false
    public var at: PauseBoundary?
    public var resume = false
    public var stop = false
    public var status = false
    public var listVoices = false
    public var lexiconAdd: String?
    public var lexiconAlias: String?
    public var lexiconRemove: String?
    public var lexiconList = false
    public var caseSensitive = false
    public var socket: String?
    public var json = false

    public init() {}

    /// Why these values do not make one request, or nil: the combinations the option table
    /// cannot say option by option.
    public func problem() -> String? {
        let controls = [pause, resume, stop, status, listVoices, lexiconAdd != nil, lexiconAlias != nil, lexiconRemove != nil, lexiconList]
            .filter { $0 }.count
        let kinds = [layout, screen, scrolled].filter { $0 }.count
        if controls > 1 { return "use one of --pause, --resume, --stop, --status, --list-voices at a time" }
        if controls == 1 && text != nil { return "a control (--pause, --stop, …) takes no text" }
        if controls == 0 && text == nil { return "nothing to say: give a TEXT, or a control such as --stop" }
        if kinds > 1 { return "use at most one of --layout, --screen, --scrolled" }
        if at != nil && !pause { return "--at goes with --pause" }
        for (flag, pair) in [("--lexicon-add", lexiconAdd), ("--lexicon-alias", lexiconAlias)] {
            if let pair, !pair.contains("=") { return "\(flag) takes WORD=\(flag == "--lexicon-add" ? "IPA" : "TEXT"), got '\(pair)'" }
        }
        if caseSensitive && lexiconAdd == nil && lexiconAlias == nil {
            return "--case-sensitive goes with --lexicon-add or --lexicon-alias"
        }
        if showIPA && output != nil { return "use one of --show-ipa and --output" }
        if ssml && (!ipa.isEmpty || !spell.isEmpty) { return "--ipa and --spell apply to plain text, not --ssml" }
        for pair in ipa where !pair.contains("=") { return "--ipa takes WORD=IPA, got '\(pair)'" }
        if let text, !ssml {
            for word in spell + ipa.map({ String($0.prefix { $0 != "=" }) }) where SpeechSpan.occurrences(of: word, in: text).isEmpty {
                return "'\(word)' does not occur as a word in the text"
            }
        }
        return nil
    }
}
