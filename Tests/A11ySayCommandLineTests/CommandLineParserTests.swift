// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Testing

@testable import A11ySayCommandLine

/// The whole command line, read against the option table: what each argv sets, and why the bad
/// ones are refused.
@Suite struct CommandLineParserTests {
    static func invocation(_ change: (inout Invocation) -> Void) -> Invocation {
        var invocation = Invocation()
        change(&invocation)
        return invocation
    }

    /// Every option of the table, in both spellings where it takes a value.
    static let accepted: [([String], Invocation)] = [
        (["bonjour"], invocation { $0.text = "bonjour" }),
        (["-"], invocation { $0.text = "-" }),
        (["help"], invocation { $0.text = "help" }),
        (["--", "--stop"], invocation { $0.text = "--stop" }),
        (["--lang", "fr", "--", "-x"], invocation { $0.text = "-x"; $0.lang = "fr" }),
        (["--voice", "piper:en_US-joe-medium", "hello"], invocation { $0.text = "hello"; $0.voice = "piper:en_US-joe-medium" }),
        (["x", "--layout"], invocation { $0.text = "x"; $0.layout = true }),
        (["--screen", "x"], invocation { $0.text = "x"; $0.screen = true }),
        (["--scrolled", "x"], invocation { $0.text = "x"; $0.scrolled = true }),
        (["--queue", "--queue", "x"], invocation { $0.text = "x"; $0.queue = true }),
        (["--priority", "high", "x"], invocation { $0.text = "x"; $0.priority = .high }),
        (["--priority=low", "x"], invocation { $0.text = "x"; $0.priority = .low }),
        (["--lang=en-US", "x"], invocation { $0.text = "x"; $0.lang = "en-US" }),
        (["--lang", "", "x"], invocation { $0.text = "x"; $0.lang = "" }),
        (["--lang", "-", "x"], invocation { $0.text = "x"; $0.lang = "-" }),
        (["--rate", "0.7", "--pitch=1.5", "--volume", "1", "x"], invocation { $0.text = "x"; $0.rate = 0.7; $0.pitch = 1.5; $0.volume = 1 }),
        (["--rate=-1", "x"], invocation { $0.text = "x"; $0.rate = -1 }),
        (["--wait", "x"], invocation { $0.text = "x"; $0.wait = true }),
        (["--ipa", "a=ɑ", "--ipa=b=be", "--spell", "c", "--spell=a", "a b c"],
         invocation { $0.text = "a b c"; $0.ipa = ["a=ɑ", "b=be"]; $0.spell = ["c", "a"] }),
        (["--ssml", "<speak>x</speak>"], invocation { $0.text = "<speak>x</speak>"; $0.ssml = true }),
        (["--show-ipa", "x"], invocation { $0.text = "x"; $0.showIPA = true }),
        (["--output", "a.wav", "x"], invocation { $0.text = "x"; $0.output = "a.wav" }),
        (["--pause"], invocation { $0.pause = true }),
        (["--pause", "--at", "word"], invocation { $0.pause = true; $0.at = .word }),
        (["--pause", "--at=immediate"], invocation { $0.pause = true; $0.at = .immediate }),
        (["--resume"], invocation { $0.resume = true }),
        (["--stop", "--stop"], invocation { $0.stop = true }),
        (["--status", "--json"], invocation { $0.status = true; $0.json = true }),
        (["--list-voices"], invocation { $0.listVoices = true }),
        (["--lexicon-add", "pomme=ʃa", "--lang", "fr"], invocation { $0.lexiconAdd = "pomme=ʃa"; $0.lang = "fr" }),
        (["--lexicon-alias=SNCF=sncf", "--case-sensitive"], invocation { $0.lexiconAlias = "SNCF=sncf"; $0.caseSensitive = true }),
        (["--lexicon-remove", "pomme"], invocation { $0.lexiconRemove = "pomme" }),
        (["--lexicon-list"], invocation { $0.lexiconList = true }),
        (["--socket", "/tmp/s", "--stop"], invocation { $0.socket = "/tmp/s"; $0.stop = true }),
        (["--socket=/tmp/s=1", "x"], invocation { $0.socket = "/tmp/s=1"; $0.text = "x" }),
    ]

    @Test(arguments: accepted)
    func reads(argv: [String], expected: Invocation) throws {
        #expect(try CommandLineParser.parse(argv) == .run(expected))
    }

    @Test func everyOptionOfTheTableIsReadSomewhereAbove() {
        let spelled = Set(Self.accepted.flatMap { $0.0 }.map { String($0.prefix { $0 != "=" }) })
        for option in CommandLineOption.table where option.kind != .text && option.kind != .help {
            #expect(spelled.contains("--\(option.name)"), "--\(option.name) has no case in `accepted`")
        }
    }

    static let refused: [([String], String)] = [
        (["--nope", "x"], "unknown option '--nope'"),
        (["-x"], "unknown option '-x'"),
        (["--nope=1"], "unknown option '--nope'"),
        (["--lang"], "missing value for --lang <lang>"),
        (["--lang", "--stop"], "missing value for --lang <lang>"),
        (["--rate", "-1", "x"], "missing value for --rate <rate>"),
        (["x", "--ipa"], "missing value for --ipa <WORD=IPA>"),
        (["--rate", "vite", "x"], "the value 'vite' is invalid for --rate <rate>: a number is wanted"),
        (["--volume=nan", "x"], "the value 'nan' is invalid for --volume <volume>: a number is wanted"),
        (["--priority", "urgent", "x"], "the value 'urgent' is invalid for --priority <priority>: one of low, default, high is wanted"),
        (["--pause", "--at", "now"], "the value 'now' is invalid for --at <at>: one of immediate, word is wanted"),
        (["--lang", "fr", "--lang=en", "x"], "--lang given twice (it takes one value)"),
        (["--stop=1"], "--stop takes no value, but '1' was given"),
        (["un", "deux"], "unexpected second text 'deux' (quote the text to speak as one argument)"),
        (["--", "un", "--", "deux"], "unexpected second text '--' (quote the text to speak as one argument)"),
        // Invocation.problem(): combinations.
        ([], "nothing to say: give a TEXT, or a control such as --stop"),
        (["--stop", "bonjour"], "a control (--pause, --stop, …) takes no text"),
        (["--stop", "--pause"], "use one of --pause, --resume, --stop, --status, --list-voices at a time"),
        (["--at", "word", "x"], "--at goes with --pause"),
        (["--layout", "--screen", "x"], "use at most one of --layout, --screen, --scrolled"),
        (["--ipa", "mot", "un mot"], "--ipa takes WORD=IPA, got 'mot'"),
        (["--spell", "zut", "un mot"], "'zut' does not occur as a word in the text"),
        (["--generate-completion-script", "tcsh"], "--generate-completion-script takes one of bash, zsh, fish"),
        (["--generate-manual", "x"], "--generate-manual takes nothing else"),
    ]

    @Test(arguments: refused)
    func refuses(argv: [String], message: String) {
        #expect(throws: UsageError(message)) { try CommandLineParser.parse(argv) }
    }

    @Test func theHelpWinsUntilTheEndOfOptions() throws {
        for argv in [["-h"], ["--help"], ["x", "-h"], ["--nope", "--help"], ["--lang", "--help"]] {
            #expect(try CommandLineParser.parse(argv) == .help, "\(argv)")
        }
        #expect(try CommandLineParser.parse(["--", "--help"]) == .run(Self.invocation { $0.text = "--help" }))
        #expect(throws: UsageError("--help takes no value, but 'x' was given")) { try CommandLineParser.parse(["--help=x"]) }
    }

    @Test func theGenerators() throws {
        for shell in CompletionScript.Shell.allCases {
            #expect(try CommandLineParser.parse(["--generate-completion-script", shell.rawValue]) == .completionScript(shell))
            #expect(try CommandLineParser.parse(["--generate-completion-script=\(shell.rawValue)"]) == .completionScript(shell))
        }
        #expect(try CommandLineParser.parse(["--generate-manual"]) == .manualPage)
        #expect(try CommandLineParser.parse(["--", "--generate-manual"]) == .run(Self.invocation { $0.text = "--generate-manual" }))
    }
}
