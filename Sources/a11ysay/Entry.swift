// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySayCommandLine

#if canImport(Glibc)
import Glibc
#endif

/// a11ysay starts like a C program: no Foundation (only FoundationEssentials' JSON coding, through
/// A11yProtocol), the standard library linked in, and its command line read against its own option
/// table (A11ySayCommandLine), which also gives the help, the completion scripts and the man page.
@main
enum Entry {
    static func main() {
        let request: CommandLineRequest
        do {
            request = try CommandLineParser.parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            let text = "a11ysay: \(error.message)\nUsage: \(CommandDescription.usage)\n  See 'a11ysay --help' for more information.\n"
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            exit(CommandDescription.usageStatus)
        }
        switch request {
        case .run(let invocation): exit(invocation.run())
        case .help: print(HelpPage.render(width: terminalWidth()), terminator: "")
        case .completionScript(let shell): print(CompletionScript.render(shell), terminator: "")
        case .manualPage: print(ManualPage.render(), terminator: "")
        }
        exit(0)
    }

    /// `$COLUMNS` read as a number, else the terminal on stdout, else 80.
    static func terminalWidth() -> Int {
        if let columns = getenv("COLUMNS"), let value = Int(String(cString: columns)), value > 0 { return value }
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }
}
