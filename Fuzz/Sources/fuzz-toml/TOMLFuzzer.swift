import A11yCore
// SPDX-License-Identifier: GPL-3.0-or-later
import A11yConfiguration
import FuzzSupport

/// The configuration file's TOML reader (`TOMLReader`), as a11yd and a11ysay both read the file: any
/// text, then the keys a11ysay reads (`ClientKeys`) looked up in what was accepted.
///
/// Invariants: nothing traps; a refusal has a message and, the text being within the size limit, a
/// line and column inside the text; what is accepted, written again (`TOMLWriter`), reads back, and
/// writes the same text again (the writer's text is a fixed point: every value, key and table the
/// reader kept survives the trip).
@main enum Fuzzer {
    static func main() { runFuzzer(fuzzTOML) }
}

func fuzzTOML(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let text = input.restAsString()
    let table: TOMLTable
    do {
        table = try TOMLReader.read(text)
    } catch {
        requirePlaced(error, in: text)
        return 0
    }
    let written = TOMLWriter.document(table)
    do {
        let again = try TOMLReader.read(written)
        require(TOMLWriter.document(again) == written, "written again differs:\n\(written)\n---\n\(TOMLWriter.document(again))")
    } catch {
        require(false, "the writer's text is refused (\(error.located)):\n\(written)")
    }
    // a11ysay's keys: a value or a refusal, whatever the document holds where they are.
    _ = try? ClientKeys.socket.value(in: table)
    _ = try? ClientKeys.autospawn.value(in: table)
    return 0
}

/// A refusal names a place inside the text (1-based; the column may be one past the line's end).
func requirePlaced(_ error: TextError, in text: String) {
    require(!error.message.isEmpty, "a refusal without a message")
    guard let line = error.line, let column = error.column else {
        require(text.utf8.count > TOMLReader.maxInputBytes, "a refusal without a place: \(error.message)")
        return
    }
    let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
    require(line >= 1 && line <= lines.count, "line \(line) of \(lines.count): \(error.message)")
    require(column >= 1 && column <= lines[line - 1].count + 1, "column \(column) of line \(line): \(error.message)")
}
