// SPDX-License-Identifier: GPL-3.0-or-later
import Logging
import Testing

@testable import A11yEngineWorker

/// A worker's stderr made into a11yd's log messages, row by row: escape sequences and control
/// characters gone, the level read from the line, a traceback one message, lines and floods bounded.
struct WorkerStderrLinesTests {
    typealias Record = WorkerStderrLines.Record
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start.advanced(by: .milliseconds(Int(seconds * 1000))) }

    /// What `text` gives, read at once and then closed.
    func records(_ text: String, limits: WorkerStderrLines.Limits = .init()) -> [Record] {
        var lines = WorkerStderrLines(limits: limits)
        return lines.read(Array(text.utf8), now: start) + lines.finish(now: start)
    }

    /// onnxruntime's line as it writes it on a terminal (its colour for a warning, then "reset").
    static let onnxruntimeWarning = "\u{1B}[0;93m2025-10-02 09:14:03.104613317 [W:onnxruntime:Default, device_discovery.cc:164 DiscoverDevicesForPlatform] GPU device discovery failed: device_discovery.cc:89 ReadFileContents Failed to open file: \"/sys/class/drm/card0/device/vendor\"\u{1B}[m\n"

    /// (what the worker wrote, the messages: level and text)
    static let rows: [(written: String, expected: [Record])] = [
        (onnxruntimeWarning, [Record(level: .warning, message: "2025-10-02 09:14:03.104613317 [W:onnxruntime:Default, device_discovery.cc:164 DiscoverDevicesForPlatform] GPU device discovery failed: device_discovery.cc:89 ReadFileContents Failed to open file: \"/sys/class/drm/card0/device/vendor\"")]),
        ("\u{1B}[1;31m2025-10-02 09:14:03.1 [E:onnxruntime:, inference_session.cc:2105 operator()] Exception during initialization\u{1B}[m\n",
         [Record(level: .error, message: "2025-10-02 09:14:03.1 [E:onnxruntime:, inference_session.cc:2105 operator()] Exception during initialization")]),
        ("[I:onnxruntime:Default, env.cc:1 Init] ready\n[V:onnxruntime:x] detail\n[F:onnxruntime:x] gone\n",
         [Record(level: .info, message: "[I:onnxruntime:Default, env.cc:1 Init] ready"), Record(level: .debug, message: "[V:onnxruntime:x] detail"),
          Record(level: .critical, message: "[F:onnxruntime:x] gone")]),
        ("a11yd-piper: piper:fr has no phoneme 'ʔ' (U+0294): dropped\n", [Record(level: .warning, message: "piper:fr has no phoneme 'ʔ' (U+0294): dropped")]),
        ("a11yd engine worker: cannot execute /nowhere/python3: No such file or directory\n",
         [Record(level: .error, message: "cannot execute /nowhere/python3: No such file or directory")]),
        ("/venv/lib/python3.11/site-packages/x.py:3: DeprecationWarning: old\n", [Record(level: .warning, message: "/venv/lib/python3.11/site-packages/x.py:3: DeprecationWarning: old")]),
        ("Fatal Python error: Segmentation fault\n", [Record(level: .critical, message: "Fatal Python error: Segmentation fault")]),
        ("something else\n", [Record(level: .notice, message: "something else")]),
        // Not an onnxruntime severity: a bracket in text.
        ("see [x:1] and [W:2]\n", [Record(level: .notice, message: "see [x:1] and [W:2]")]),
        // Control characters, C1 controls (as UTF-8), bidirectional overrides, separators, a tab.
        ("a\u{07}b\u{00}c\u{7F}d\u{08}e\tf\u{9B}g\u{202E}h\u{2066}i\u{2028}j\n", [Record(level: .notice, message: "abcde fghi j")]),
        // OSC: a window title ended by BEL, a hyperlink ended by ST; a charset designation; a CSI
        // with intermediate bytes; an ESC alone before a letter.
        ("\u{1B}]0;title\u{07}text \u{1B}]8;;http://x\u{1B}\\link\u{1B}]8;;\u{1B}\\ \u{1B}(Bplain \u{1B}[?25h\u{1B}[2 qcursor \u{1B}Mup\n",
         [Record(level: .notice, message: "text link plain cursor up")]),
        // An escape cut by the end of the line leaves the next line whole.
        ("cut \u{1B}[0;9\nnext\n", [Record(level: .notice, message: "cut"), Record(level: .notice, message: "next")]),
        ("osc \u{1B}]0;never ended\nnext\n", [Record(level: .notice, message: "osc"), Record(level: .notice, message: "next")]),
        // CR LF, a lone CR, blank lines and spaces.
        ("one\r\ntwo\rthree\n\n   \n\t four  \n", [Record(level: .notice, message: "one"), Record(level: .notice, message: "two"),
                                                   Record(level: .notice, message: "three"), Record(level: .notice, message: "four")]),
        // Bytes that are not UTF-8.
        ("ok \u{FFFD}\n", [Record(level: .notice, message: "ok \u{FFFD}")]),
        // The last line without its end, when the pipe closes.
        ("first\nlast words", [Record(level: .notice, message: "first"), Record(level: .notice, message: "last words")]),
        // A Python traceback, one error; the next line is a message of its own.
        ("Traceback (most recent call last):\n  File \"/w/a11yd_piper_worker.py\", line 12, in <module>\n    main()\n    ^^^^^^\nValueError: bad voice\nafter\n",
         [Record(level: .error, message: "Traceback (most recent call last): | File \"/w/a11yd_piper_worker.py\", line 12, in <module> | main() | ^^^^^^ | ValueError: bad voice"),
          Record(level: .notice, message: "after")]),
        // A traceback cut short by the worker's end.
        ("Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n", [Record(level: .error, message: "Traceback (most recent call last): | File \"x.py\", line 1, in f")]),
    ]

    @Test func eachLineBecomesAMessageAtItsLevelWithoutEscapesOrControls() {
        for row in Self.rows {
            #expect(records(row.written) == row.expected, "\(row.written.debugDescription)")
        }
    }

    @Test func invalidUTF8BecomesReplacementCharacters() {
        var lines = WorkerStderrLines()
        let read = lines.read([0x61, 0xFF, 0xC3, 0x62, 0x0A], now: start)
        #expect(read == [Record(level: .notice, message: "a\u{FFFD}\u{FFFD}b")])
    }

    /// Byte by byte, the same messages: an escape sequence or a character split between two reads.
    @Test func readsSplitAnywhereGiveTheSameMessages() {
        for row in Self.rows {
            var lines = WorkerStderrLines()
            var got: [Record] = []
            for byte in row.written.utf8 { got += lines.read([byte], now: start) }
            got += lines.finish(now: start)
            #expect(got == row.expected, "\(row.written.debugDescription)")
        }
    }

    /// A line past the limit keeps its first bytes (whole characters) and says how many more it
    /// had; escapes in it do not count.
    @Test func aLongLineIsCutAndSaysSo() {
        let limits = WorkerStderrLines.Limits(lineBytes: 10)
        #expect(records(String(repeating: "x", count: 25) + "\n", limits: limits) == [Record(level: .notice, message: "xxxxxxxxxx… (cut: 15 more bytes)")])
        // "é" is 2 bytes: the 10th byte would split the fifth.
        #expect(records("aéééééé\n", limits: limits) == [Record(level: .notice, message: "aéééé… (cut: 4 more bytes)")])
        #expect(records("\u{1B}[0;93m0123456789\u{1B}[m\n", limits: limits) == [Record(level: .notice, message: "0123456789")])
        // The default: 1,024 bytes of a line of 4 MiB without an end.
        var lines = WorkerStderrLines()
        let chunk = [UInt8](repeating: UInt8(ascii: "y"), count: 1 << 20)
        var got: [Record] = []
        for _ in 0..<4 { got += lines.read(chunk, now: start) }
        got += lines.finish(now: start)
        #expect(got.count == 1)
        #expect(got.first?.message == String(repeating: "y", count: 1024) + "… (cut: \(4 * (1 << 20) - 1024) more bytes)")
    }

    @Test func aLongTracebackKeepsItsFirstLinesAndCountsTheRest() {
        let limits = WorkerStderrLines.Limits(tracebackLines: 4)
        let frames = (1...10).map { "  File \"f.py\", line \($0), in g\n" }.joined()
        #expect(records("Traceback (most recent call last):\n" + frames + "RecursionError: deep\n", limits: limits) == [
            Record(level: .error, message: "Traceback (most recent call last): | File \"f.py\", line 1, in g | File \"f.py\", line 2, in g | File \"f.py\", line 3, in g | … (8 more lines)")
        ])
        let small = WorkerStderrLines.Limits(tracebackBytes: 70)
        #expect(records("Traceback (most recent call last):\n" + frames + "RecursionError: deep\n", limits: small) == [
            Record(level: .error, message: "Traceback (most recent call last): | File \"f.py\", line 1, in g | … (10 more lines)")
        ])
    }

    /// A traceback whose last line does not come is logged as it stands after the wait.
    @Test func aTracebackWithoutItsLastLineIsLoggedAfterTheWait() {
        var lines = WorkerStderrLines()
        #expect(lines.nextTick == nil)
        #expect(lines.read(Array("Traceback (most recent call last):\n  File \"x.py\", line 1\n".utf8), now: at(1)) == [])
        #expect(lines.nextTick == at(1.5))
        #expect(lines.tick(now: at(1.4)) == [])
        #expect(lines.tick(now: at(1.5)) == [Record(level: .error, message: "Traceback (most recent call last): | File \"x.py\", line 1")])
        #expect(lines.nextTick == nil)
        #expect(lines.finish(now: at(2)) == [])
    }

    /// A flood: the window's first messages, then nothing until the window is over, and then a
    /// note of how many were dropped, whether more comes (read), nothing does (tick) or the pipe
    /// closes (finish).
    @Test func aFloodIsCutToTheWindowsMessagesAndSaysHowManyWereDropped() {
        let flood = Array((1...100).map { "line \($0)\n" }.joined().utf8)
        let first = (1...40).map { Record(level: .notice, message: "line \($0)") }
        let note = Record(level: .warning, message: "60 more messages dropped (at most 40 and 16384 bytes in 10.0 seconds)")

        var lines = WorkerStderrLines()
        #expect(lines.read(flood, now: at(0)) == first)
        #expect(lines.nextTick == at(10))
        #expect(lines.read(Array("more\n".utf8), now: at(9.9)) == [])
        #expect(lines.read(Array("again\n".utf8), now: at(10)) == [Record(level: .warning, message: "61 more messages dropped (at most 40 and 16384 bytes in 10.0 seconds)"), Record(level: .notice, message: "again")])

        var quiet = WorkerStderrLines()
        _ = quiet.read(flood, now: at(0))
        #expect(quiet.tick(now: at(9)) == [])
        #expect(quiet.tick(now: at(10)) == [note])
        #expect(quiet.nextTick == nil)
        #expect(quiet.finish(now: at(11)) == [])

        var closed = WorkerStderrLines()
        _ = closed.read(flood, now: at(0))
        #expect(closed.finish(now: at(1)) == [note])
    }

    /// The bytes of a window are bounded as well as its messages.
    @Test func aWindowHoldsAtMostItsBytes() {
        let line = String(repeating: "z", count: 1000) + "\n"
        var lines = WorkerStderrLines()
        let got = lines.read(Array(String(repeating: line, count: 20).utf8), now: start)
        #expect(got.count == 16, "16 × 1000 bytes fit in 16 KiB, 17 do not")
        #expect(lines.finish(now: start) == [Record(level: .warning, message: "4 more messages dropped (at most 40 and 16384 bytes in 10.0 seconds)")])
    }
}
