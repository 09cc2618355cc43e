// SPDX-License-Identifier: GPL-3.0-or-later
extension StringProtocol {
    /// Without leading and trailing whitespace (Unicode's, newlines included): the one trim every
    /// module uses, Foundation or not.
    public var trimmed: String {
        var characters = self[...]
        while let first = characters.first, first.isWhitespace { characters.removeFirst() }
        while let last = characters.last, last.isWhitespace { characters.removeLast() }
        return String(characters)
    }
}
