import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// a11ysay starts like a C program: no Foundation (only FoundationEssentials' JSON coding, through
/// A11yProtocol), the standard library linked in, and the common forms read without ArgumentParser
/// (`CommonForms`); everything else is ArgumentParser's `A11ySay`.
@main
enum Entry {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        if let help = CommonForms.help(arguments) {
            print(help)
            exit(0)
        }
        if let invocation = CommonForms.invocation(arguments) {
            exit(invocation.run())
        }
        A11ySay.main()
    }
}
