// SPDX-License-Identifier: GPL-3.0-or-later
/// A lexicon file that could not be read, parsed or written: the file, the place (1-based line and
/// column in Unicode scalars, when the content is at fault) and a sentence. Printed as
/// `path:line:column: message`, the form editors jump to.
public struct LexiconFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(path: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.path = path
        self.line = line
        self.column = column
        self.message = message
    }

    public var description: String {
        var place = path
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        return "\(place): \(message)"
    }
}
