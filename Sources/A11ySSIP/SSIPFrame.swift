// SPDX-License-Identifier: GPL-3.0-or-later
/// What the line framing hands the session: one line, or the news that one was too long.
public enum SSIPFrame: Sendable, Equatable {
    /// A line without its terminator. `crlf` is false when it ended in a bare LF (or at the end of
    /// the input): inside SPEAK data that LF belongs to the text, as in speech-dispatcher, whose lines
    /// end only at CRLF.
    case line([UInt8], crlf: Bool)
    /// A line longer than the framing accepts; its bytes were dropped up to its end.
    case overlong
}
