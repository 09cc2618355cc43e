// SPDX-License-Identifier: GPL-3.0-or-later
/// Why a text (an SSML or PLS document, a configuration file) was refused: a sentence and, unless
/// the whole text is at fault (too large), the 1-based line and column (Unicode scalars) where
/// reading stopped.
public struct TextError: Error, Sendable, Equatable {
    public var message: String
    public var line: Int?
    public var column: Int?

    public init(message: String, line: Int? = nil, column: Int? = nil) {
        self.message = message
        self.line = line
        self.column = column
    }

    /// "line 3, column 5: message", or the message alone.
    public var located: String {
        guard let line, let column else { return message }
        return "line \(line), column \(column): \(message)"
    }
}

/// Where each line of a text starts, so that a reader working on its Unicode scalars can say
/// where it stopped.
public struct LineIndex: Sendable {
    /// Offsets (in scalars) where each line starts.
    private let starts: [Int]
    private let count: Int

    public init(_ scalars: [Unicode.Scalar]) {
        var starts = [0]
        for (offset, scalar) in scalars.enumerated() where scalar == "\n" { starts.append(offset + 1) }
        self.starts = starts
        count = scalars.count
    }

    /// The 1-based line and column of `offset` (at most the end of the text).
    public func position(of offset: Int) -> (line: Int, column: Int) {
        let offset = min(offset, count)
        var low = 0, high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return (low + 1, offset - starts[low] + 1)
    }

    /// `message`, placed at `offset`.
    public func error(_ message: String, at offset: Int) -> TextError {
        let (line, column) = position(of: offset)
        return TextError(message: message, line: line, column: column)
    }
}
