#if canImport(Glibc)
import Glibc
#endif

/// The common forms of a11ysay's arguments, read without ArgumentParser.
///
/// ArgumentParser stays the parser of record, but building its argument set was most of
/// a11ysay's start-up (11 M of the 15.5 M instructions of `a11ysay "bonjour"`, callgrind: type
/// metadata by mangled name and protocol conformance scans; 1.3 ms of CPU in the static build). So
/// the forms people type most, and the ones that must act fast (`--stop`, `--pause`, `--resume`),
/// are read here:
///
///     a11ysay [--socket PATH] [--lang LANG] [--queue] [--wait] [--json] TEXT
///     a11ysay [--socket PATH] [--json] --stop | --pause | --resume | --status
///     a11ysay --help                      (when the help is rendered 80 columns wide)
///
/// (`--lang`, `--queue` and `--wait` with a control are accepted and mean nothing, as with
/// ArgumentParser.)
///
/// Only these exact spellings, each at most once, in any order. Anything else — `--lang=fr`,
/// `-h`, another option, a value or a TEXT starting with `-`, a second TEXT, values that do not
/// make one request — is ArgumentParser's, which then reads the whole command line. The tests hold
/// these readings to ArgumentParser's: the same request line for a table of argvs, the same help.
enum CommonForms {
    /// The invocation `arguments` (without the program name) ask for, or nil for ArgumentParser.
    static func invocation(_ arguments: ArraySlice<String>) -> Invocation? {
        var invocation = Invocation()
        var rest = arguments
        while let argument = rest.popFirst() {
            switch argument {
            case "--socket", "--lang":
                guard let value = rest.popFirst(), !value.hasPrefix("-") else { return nil }
                if argument == "--socket" {
                    guard invocation.socket == nil else { return nil }
                    invocation.socket = value
                } else {
                    guard invocation.lang == nil else { return nil }
                    invocation.lang = value
                }
            case "--queue": guard set(&invocation.queue) else { return nil }
            case "--wait": guard set(&invocation.wait) else { return nil }
            case "--json": guard set(&invocation.json) else { return nil }
            case "--stop": guard set(&invocation.stop) else { return nil }
            case "--pause": guard set(&invocation.pause) else { return nil }
            case "--resume": guard set(&invocation.resume) else { return nil }
            case "--status": guard set(&invocation.status) else { return nil }
            default:
                guard !argument.hasPrefix("-"), invocation.text == nil else { return nil }
                invocation.text = argument
            }
        }
        guard invocation.problem() == nil else { return nil }
        return invocation
    }

    /// Sets a flag that was not set yet; false for a repeated flag.
    private static func set(_ flag: inout Bool) -> Bool {
        guard !flag else { return false }
        flag = true
        return true
    }

    /// `a11ysay --help` rendered 80 columns wide, or nil when ArgumentParser would render it at
    /// another width. ArgumentParser's width: `$COLUMNS` read as an Int, else the terminal on
    /// stdout, else 80.
    static func help(_ arguments: ArraySlice<String>) -> String? {
        guard arguments.count == 1, arguments.first == "--help" else { return nil }
        let width: Int
        if let columns = getenv("COLUMNS"), let value = Int(String(cString: columns)) {
            width = value
        } else {
            var size = winsize()
            width = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        }
        return width == HelpText.width ? HelpText.rendered : nil
    }
}
