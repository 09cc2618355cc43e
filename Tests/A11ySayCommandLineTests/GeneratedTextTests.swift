// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing

@testable import A11ySayCommandLine

/// `--help`, the completion scripts and the man page, each written from the option table: every
/// option is in each, and each is valid in its language.
@Suite struct GeneratedTextTests {
    static let options = CommandLineOption.table.filter { $0.kind != .text }

    @Test(arguments: [80, 120, 50])
    func theHelpListsEveryOptionOnceWithinTheWidth(width: Int) {
        let help = HelpPage.render(width: width)
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for option in Self.options {
            let label = HelpPage.label(option)
            let listed = lines.filter { $0.hasPrefix("  \(label) ") || $0 == "  \(label)" }
            #expect(listed.count == 1, "\(label) listed \(listed.count) times at width \(width)")
        }
        #expect(lines.contains("  <text>                  The text to speak."))
        for line in lines where line.count > width {
            // Only a word longer than the room it has may overrun, on a line of its own.
            #expect(line.split(separator: " ").count == 1, "\(line.count) > \(width): \(line)")
        }
        #expect(help.replacingOccurrences(of: "\n", with: " ").hasPrefix("OVERVIEW: \(CommandDescription.abstract) "))
        #expect(help.contains("USAGE: \(CommandDescription.usage)"))
    }

    @Test func theHelpWrapsUnderTheHelpColumn() {
        let help = HelpPage.render(width: 80)
        #expect(help.contains("""
              --screen                Post as screenChanged (a new screen: earcon, high
                                      priority, flushes pending items).
            """))
        #expect(help.contains("""
              --lexicon-alias <WORD=TEXT>
                                      Say TEXT instead of WORD from now on (an acronym read
            """))
    }

    @Test(arguments: CompletionScript.Shell.allCases)
    func eachCompletionScriptNamesEveryOption(shell: CompletionScript.Shell) {
        let script = CompletionScript.render(shell)
        for option in Self.options {
            let named =
                switch shell {
                case .bash, .zsh: script.contains("--\(option.name)")
                case .fish: script.contains("-l \(option.name) ")
                }
            #expect(named, "\(shell): --\(option.name)")
        }
        for values in ["low default high", "immediate word"] { #expect(script.contains(values), "\(shell): \(values)") }
        #expect(!script.hasPrefix("#!"), "sourced, not run")
    }

    @Test func bashCompletionIsValid() throws {
        try Self.check(CompletionScript.render(.bash), with: "bash")
    }

    @Test(.enabled(if: Self.installed("zsh"), "zsh is not installed: the zsh script is not checked"))
    func zshCompletionIsValid() throws {
        try Self.check(CompletionScript.render(.zsh), with: "zsh")
    }

    @Test(.enabled(if: Self.installed("fish"), "fish is not installed: the fish script is not checked"))
    func fishCompletionIsValid() throws {
        try Self.check(CompletionScript.render(.fish), with: "fish")
    }

    @Test func theManPageHasTheSectionsAndEveryOption() {
        let page = ManualPage.render()
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"] {
            #expect(page.contains("\n.SH \(section)\n"), "\(section)")
        }
        for option in Self.options {
            #expect(page.contains(ManualPage.escaped("--\(option.name)")), "--\(option.name)")
        }
        #expect(page.contains(".BR a11yd (1),") && page.contains(".BR spd\\-say (1)"))
        #expect(!page.contains("\n\n"), "no blank line")
        #expect(page.unicodeScalars.allSatisfy { $0.isASCII }, "non-ASCII escaped")
    }

    @Test(.enabled(if: Self.installed("groff"), "groff is not installed: the man page is not checked"))
    func theManPagePassesGroffsWarnings() throws {
        let result = try Self.run("groff", ["-ww", "-man", "-z"], input: ManualPage.render())
        #expect(result.status == 0 && result.errors.isEmpty, "\(result.errors)")
    }

    @Test func roffEscapes() {
        #expect(ManualPage.escaped(#".x "é" \ -"#) == #"\&.x \(dq\[u00E9]\(dq \e \-"#)
    }

    // MARK: Running a shell or groff on a script

    static func installed(_ tool: String) -> Bool {
        ["/usr/bin", "/bin", "/usr/local/bin"].contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }

    /// `shell -n`: parsed, not run.
    static func check(_ script: String, with shell: String) throws {
        let path = NSTemporaryDirectory() + "a11ysay-completion-\(UUID().uuidString)"
        try script.write(toFile: path, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try run(shell, ["-n", path], input: "")
        #expect(result.status == 0 && result.errors.isEmpty, "\(shell) -n: \(result.errors)")
    }

    static func run(_ tool: String, _ arguments: [String], input: String) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let stdin = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errors, as: UTF8.self))
    }
}
