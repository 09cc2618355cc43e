// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yDaemon
import A11yProtocol
import A11ySayCommandLine
import A11ySystem
import A11yTestSupport
import Foundation
import Testing

/// `a11ysay` as a user runs it: the built binary against the real daemon.
@Suite(.serialized) struct CommandLineTests {
    /// The a11ysay built next to this test bundle.
    static let a11ysay: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundle.appendingPathComponent("a11ysay").path
    }()

    func run(_ arguments: [String], socket: String, timeout: Duration = .seconds(30)) async throws -> (status: Int32, out: String, err: String) {
        let child = try start(arguments, socket: socket)
        let status = try await child.waitForExit(timeout: timeout)
        return (status, child.log, child.errors)
    }

    func start(_ arguments: [String], socket: String) throws -> ChildProcess {
        let base = NSTemporaryDirectory() + "a11ysay-\(UUID().uuidString)"
        var environment = ProcessInfo.processInfo.environment
        environment["A11YD_SOCKET"] = socket
        environment["A11YD_NO_AUTOSPAWN"] = "1"
        return try ChildProcess(Self.a11ysay, arguments, environment: environment, logPath: base + ".out", errorPath: base + ".err")
    }

    @Test func anUnreachableDaemonIsOneLineOnStderrAndExitOne() async throws {
        let result = try await run(["bonjour"], socket: "/nonexistent/a11yd/socket")
        #expect(result.status == 1)
        let lines = result.err.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("/nonexistent/a11yd/socket") == true)
        #expect(lines.first?.contains("start it") == true)
    }

    @Test func speaksWaitsAndReportsWhyWhenNotSpoken() async throws {
        let daemon = try await DaemonHarness()
        let recorder = try daemon.recorder()
        let spoken = try await run(["--wait", "bonjour tout le monde"], socket: daemon.socketPath)
        #expect(spoken.status == 0, "\(spoken.err)")
        #expect(recorder.stop().rms() > 0.02)
        // A long item waited for, then cut off by a newer one: exit 2 and the reason.
        let long = try start(["--wait", longSentence], socket: daemon.socketPath)
        let client = try await daemon.client()
        try await client.send(RequestLine(.subscribe(all: true)))
        try await client.waitFor("long item speaking") { $0.event == "word" }
        let interrupting = try await run(["--wait", "plus urgent"], socket: daemon.socketPath)
        #expect(interrupting.status == 0)
        #expect(try await long.waitForExit(timeout: .seconds(20)) == 2)
        #expect(long.errors.contains("interrupted"))
        await daemon.shutDown()
    }

    /// After `--lexicon-add "pomme=ʃa" --lang fr`, "pomme" in French is said
    /// "chat" by every client, until `--lexicon-remove`.
    @Test func theLexiconFromTheCommandLine() async throws {
        let daemon = try await DaemonHarness()
        let chat = try await run(["--show-ipa", "--lang", "fr", "chat"], socket: daemon.socketPath)
        let before = try await run(["--show-ipa", "--lang", "fr", "une pomme"], socket: daemon.socketPath)
        let added = try await run(["--lexicon-add", "pomme=ʃa", "--lang", "fr"], socket: daemon.socketPath)
        #expect(added.status == 0, "\(added.err)")
        #expect(added.out.contains("pomme → /ʃa/ [fr]"), "\(added.out)")
        let after = try await run(["--show-ipa", "--lang", "fr", "une pomme"], socket: daemon.socketPath)
        #expect(after.out != before.out)
        #expect(after.out.contains(chat.out.replacingOccurrences(of: "(fr) ", with: "").trimmed), "\(after.out) vs \(chat.out)")
        let listed = try await run(["--lexicon-list"], socket: daemon.socketPath)
        #expect(listed.status == 0)
        #expect(listed.out.contains("pomme → /ʃa/ [fr]"), "\(listed.out)")
        #expect(listed.out.contains("lexicon.pls"), "the file it lives in: \(listed.out)")
        let alias = try await run(["--lexicon-alias", "SNCF=sncf", "--case-sensitive"], socket: daemon.socketPath)
        #expect(alias.out.contains("SNCF → \"sncf\" [all languages, case-sensitive]"), "\(alias.out)")
        let removed = try await run(["--lexicon-remove", "pomme", "--lang", "fr"], socket: daemon.socketPath)
        #expect(removed.status == 0, "\(removed.err)")
        #expect(try await run(["--show-ipa", "--lang", "fr", "une pomme"], socket: daemon.socketPath).out == before.out)
        let missing = try await run(["--lexicon-remove", "pomme", "--lang", "fr"], socket: daemon.socketPath)
        #expect(missing.status == 1)
        #expect(missing.err.contains("pomme"), "\(missing.err)")
        await daemon.shutDown()
    }

    @Test func stopSilencesFromTheCommandLine() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let id = try await client.post(.say(longSentence))
        try await client.waitFor("speaking") { $0.event == "word" && $0.utterance == id }
        let stop = try await run(["--stop"], socket: daemon.socketPath)
        #expect(stop.status == 0)
        #expect(try await client.finished(id).reason == .stopped)
        let idle = try await run(["--status"], socket: daemon.socketPath)
        #expect(idle.out.contains("state: idle"))
        await daemon.shutDown()
    }

    @Test func showIPAPrintsTheSeedExampleExactly() async throws {
        let daemon = try await DaemonHarness()
        let result = try await run(
            ["--lang", "fr", "--show-ipa", "--ipa", "blablabla=mɔ̃.daj.fɔ.nə.fɔ̃.ksjɔ.nə.paʀ.fɛ.tə.ˈmɑ̃", "blablabla"],
            socket: daemon.socketPath)
        #expect(result.status == 0, "\(result.err)")
        // The requested IPA without syllable dots; eSpeak's French r is written ʁ (ʀ and ʁ are one phoneme in French).
        #expect(result.out.contains("mɔ̃dajfɔnəfɔ̃ksjɔnəpaʁfɛtəmˈɑ̃"), "\(result.out)")
        let ssml = try await run(
            ["--show-ipa", "--ssml", #"<speak xml:lang="fr"><phoneme alphabet="ipa" ph="mɔ̃.daj.fɔ.nə.fɔ̃.ksjɔ.nə.paʀ.fɛ.tə.ˈmɑ̃">blablabla</phoneme></speak>"#],
            socket: daemon.socketPath)
        #expect(ssml.out.contains("mɔ̃dajfɔnəfɔ̃ksjɔnəpaʁfɛtəmˈɑ̃"), "\(ssml.out) \(ssml.err)")
        let bad = try await run(["--lang", "fr", "--show-ipa", "--ipa", "mot=mǂo", "un mot"], socket: daemon.socketPath)
        #expect(bad.status == 1)
        #expect(bad.err.contains("ǂ") && bad.err.contains("invalid_ipa"))
        await daemon.shutDown()
    }

    @Test func outputWritesAWAVFileInsteadOfPlaying() async throws {
        let daemon = try await DaemonHarness()
        let recorder = try daemon.recorder()
        let path = NSTemporaryDirectory() + "a11ysay-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await run(["--lang", "fr", "--output", path, "bonjour tout le monde"], socket: daemon.socketPath)
        #expect(result.status == 0, "\(result.err)")
        try await Task.sleep(for: .milliseconds(300))
        #expect(recorder.stop().rms() < 0.001, "nothing was played")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data.prefix(4) == Data("RIFF".utf8) && data.dropFirst(8).prefix(4) == Data("WAVE".utf8))
        let samples = data.dropFirst(44).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let seconds = Double(samples.count) / 22050
        #expect(seconds > 0.4 && seconds < 3, "\(seconds) s")
        let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot() / 32768
        #expect(rms > 0.02)
        await daemon.shutDown()
    }
}

/// a11ysay's start-up is what a user waits for first: it is one static executable, so nothing is
/// loaded or relocated before it runs (no Foundation, no Swift shared library, no dynamic loader at
/// all; the time itself is measured by `make bench`, not asserted).
@Suite struct CommandLineStartupTests {
    @Test func a11ysayIsOneStaticExecutable() throws {
        let elf = try Data(contentsOf: URL(fileURLWithPath: CommandLineTests.a11ysay))
        func integer(at offset: Int, size: Int) -> Int {
            (0..<size).reduce(0) { $0 | Int(elf[elf.startIndex + offset + $1]) << (8 * $1) }
        }
        #expect(elf.prefix(4) == Data([0x7f, 0x45, 0x4c, 0x46]) && elf[elf.startIndex + 4] == 2, "a 64-bit ELF file")
        let tableOffset = integer(at: 0x20, size: 8)
        let entrySize = integer(at: 0x36, size: 2)
        let count = integer(at: 0x38, size: 2)
        #expect(count > 0 && tableOffset + count * entrySize <= elf.count)
        let types = (0..<count).map { integer(at: tableOffset + $0 * entrySize, size: 4) }
        let interpreter = 3, dynamic = 2
        #expect(!types.contains(interpreter), "no dynamic loader named (PT_INTERP): \(types)")
        #expect(!types.contains(dynamic), "no dynamic section (PT_DYNAMIC): \(types)")
    }

    @Test func lddFindsNothingToLoad() async throws {
        let result = try await run("/usr/bin/ldd", [CommandLineTests.a11ysay], environment: ["PATH": "/usr/bin:/bin"])
        #expect((result.stdout + result.stderr).contains("not a dynamic executable"), "\(result.stdout) \(result.stderr)")
    }
}

/// Only the daemon's own user (and root, and the configured uids) is served, whatever the mode of
/// the socket: the peer is checked with SO_PEERCRED.
@Suite(.serialized) struct PeerCredentialTests {
    /// Runs a copy of a11ysay as `nobody` (uid 65534) from a folder anyone can read.
    func statusAsNobody(socket: String, folder: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        let copy = folder + "/a11ysay"
        if !FileManager.default.fileExists(atPath: copy) {
            try FileManager.default.copyItem(atPath: CommandLineTests.a11ysay, toPath: copy)
        }
        return try await run(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", copy, "--status", "--socket", socket],
            environment: ["PATH": "/usr/bin:/bin", "HOME": folder, "A11YD_NO_AUTOSPAWN": "1"])
    }

    func looseFolder() throws -> String {
        var template = Array("/tmp/a11y-peer-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
        let folder = String(cString: made)
        chmod(folder, 0o755)
        return folder
    }

    @Test func anotherUsersClientIsRefusedEvenWhenTheSocketIsOpenToAll() async throws {
        let folder = try looseFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let daemon = try await DaemonHarness(socketPath: folder + "/run/socket")
        // Loosened by hand, as a careless setup might.
        chmod(folder + "/run", 0o777)
        chmod(folder + "/run/socket", 0o777)
        let refused = try await statusAsNobody(socket: folder + "/run/socket", folder: folder)
        #expect(refused.status == 1, "\(refused.stdout) \(refused.stderr)")
        // Closed unanswered: a reset, a broken pipe or an end, depending on which came first.
        #expect(["without answering", "reset", "Broken pipe"].contains { refused.stderr.contains($0) }, "\(refused.stderr)")
        #expect(!refused.stdout.contains("state:"))
        // The daemon's own user is still served.
        let client = try await daemon.client()
        try await client.send(RequestLine(.status, id: .number(1)))
        #expect(try await client.waitFor("status") { $0.id == .number(1) }.state == "idle")
        await daemon.shutDown()
    }

    @Test func aConfiguredUIDIsServed() async throws {
        let folder = try looseFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = DaemonConfiguration()
        configuration.allowedUIDs = [65534]
        let daemon = try await DaemonHarness(configuration: configuration, socketPath: folder + "/run/socket")
        chmod(folder + "/run", 0o777)
        chmod(folder + "/run/socket", 0o777)
        let served = try await statusAsNobody(socket: folder + "/run/socket", folder: folder)
        #expect(served.status == 0, "\(served.stderr)")
        #expect(served.stdout.contains("state: idle"), "\(served.stdout)")
        await daemon.shutDown()
    }
}

/// The built a11ysay's command line, against a socket that records what it sends: the request
/// line of each form, the refusals (exit 64, one line naming the option, nothing sent), and the
/// help, completion scripts and man page it prints, which are A11ySayCommandLine's renderings.
@Suite(.serialized) struct CommandLineFormsTests {
    @Test func eachFormSendsItsRequestLine() async throws {
        let daemon = try RecordingSocket()
        let expected: [([String], String)] = [
            (["bonjour"], #"{"kind":"announcement","op":"post","text":"bonjour"}"#),
            (["--lang", "fr", "--queue", "--wait", "salut"], #"{"kind":"announcement","lang":"fr","op":"post","queue":true,"text":"salut"}"#),
            (["--lang=fr", "--", "-salut"], #"{"kind":"announcement","lang":"fr","op":"post","text":"-salut"}"#),
            (["--screen", "--priority=high", "x"], #"{"kind":"screenChanged","op":"post","priority":"high","text":"x"}"#),
            (["--scrolled", "--priority", "low", "x"], #"{"kind":"pageScrolled","op":"post","priority":"low","text":"x"}"#),
            (["--layout", "x"], #"{"kind":"layoutChanged","op":"post","text":"x"}"#),
            (["--rate", "0.7", "x"], #"{"kind":"announcement","op":"post","rate":0.7,"text":"x"}"#),
            (["--stop"], #"{"op":"stop"}"#),
            (["--pause"], #"{"at":"immediate","op":"pause"}"#),
            (["--pause", "--at=word"], #"{"at":"word","op":"pause"}"#),
            (["--resume"], #"{"op":"resume"}"#),
            (["--status", "--json"], #"{"op":"status"}"#),
            (["--list-voices"], #"{"op":"voices"}"#),
        ]
        for (argv, line) in expected {
            let result = try await daemon.exchange(CommandLineTests.a11ysay, ["--socket", daemon.path] + argv)
            #expect(result.line == line, "\(argv): \(result.err)")
        }
        let spelled = try await daemon.exchange(CommandLineTests.a11ysay, ["--socket=\(daemon.path)", "bonjour"])
        #expect(spelled.line == expected[0].1, "--socket=PATH: \(spelled.err)")
    }

    /// a11ysay writes the requests of the common forms by hand (`RequestWriter`, for start-up time):
    /// each line must be, byte for byte, what `LineCodec` writes for the same request.
    @Test func theHandWrittenLinesAreLineCodecs() async throws {
        let daemon = try RecordingSocket()
        let texts = [
            "bonjour", "", #"ça va ? "oui" \ / 🙂 {"op":"stop"}"#, "tab\there", "ligne\nsuivante", "del\u{7F}",
            "séparateur\u{2028}de ligne", "e\u{301}", "\u{1}", "日本語",
        ]
        for text in texts {
            let cases: [([String], Post)] = [
                (["--", text], Post(text: text, kind: .announcement)),
                (["--lang", "fr", "--queue", "--", text], Post(text: text, kind: .announcement, queue: true, lang: "fr")),
                (["--priority", "high", "--screen", "--lang=\(text)", "x"], Post(text: "x", kind: .screenChanged, priority: .high, lang: text)),
            ]
            for (argv, post) in cases {
                let result = try await daemon.exchange(CommandLineTests.a11ysay, ["--socket", daemon.path] + argv)
                #expect(result.line == LineCodec.encodeString(RequestLine(.post(post))), "\(argv): \(result.err)")
            }
        }
        for (argv, request) in [(["--stop"], Request.stop), (["--pause", "--at", "word"], .pause(.word)), (["--resume"], .resume), (["--status"], .status)] {
            let result = try await daemon.exchange(CommandLineTests.a11ysay, ["--socket", daemon.path] + argv)
            #expect(result.line == LineCodec.encodeString(RequestLine(request)), "\(argv): \(result.err)")
        }
    }

    @Test func aBadCommandLineExits64NamingTheOptionAndSendsNothing() async throws {
        let daemon = try RecordingSocket()
        let refused: [([String], String)] = [
            (["--nope", "x"], "unknown option '--nope'"),
            (["--lang"], "missing value for --lang <lang>"),
            (["--priority", "urgent", "x"], "the value 'urgent' is invalid for --priority <priority>: one of low, default, high is wanted"),
            (["--lang", "fr", "--lang", "en", "x"], "--lang given twice (it takes one value)"),
            (["un", "deux"], "unexpected second text 'deux'"),
            (["--stop", "bonjour"], "a control (--pause, --stop, …) takes no text"),
            ([], "nothing to say"),
        ]
        for (argv, message) in refused {
            let result = try await daemon.exchange(CommandLineTests.a11ysay, ["--socket", daemon.path] + argv)
            #expect(result.status == 64, "\(argv): \(result.err)")
            #expect(result.line == nil, "\(argv) sent nothing")
            #expect(result.out.isEmpty)
            let lines = result.err.split(separator: "\n")
            #expect(lines.first?.hasPrefix("a11ysay: \(message)") == true, "\(argv): \(result.err)")
            #expect(lines.dropFirst().first == "Usage: a11ysay [<options>] [<text>]", "\(argv): \(result.err)")
        }
    }

    /// What a11ysay prints for the help (at `$COLUMNS`, else 80 off a terminal) and the generators
    /// is the table's rendering.
    @Test func theHelpAndTheGeneratorsComeFromTheTable() async throws {
        var environment = ProcessInfo.processInfo.environment
        for columns in [nil, "80", "120", "50"] {
            environment["COLUMNS"] = columns
            for flag in ["--help", "-h"] {
                let help = try await A11yTestSupport.run(CommandLineTests.a11ysay, ["x", flag], environment: environment)
                #expect(help.status == 0)
                #expect(help.stdout == HelpPage.render(width: columns.flatMap { Int($0) } ?? 80), "COLUMNS=\(columns ?? "unset") \(flag)")
            }
        }
        for shell in CompletionScript.Shell.allCases {
            let script = try await A11yTestSupport.run(CommandLineTests.a11ysay, ["--generate-completion-script", shell.rawValue], environment: environment)
            #expect(script.status == 0 && script.stdout == CompletionScript.render(shell), "\(shell)")
        }
        let page = try await A11yTestSupport.run(CommandLineTests.a11ysay, ["--generate-manual"], environment: environment)
        #expect(page.status == 0 && page.stdout == ManualPage.render())
    }
}

/// Stands in for a11yd where only what a11ysay sends matters: records the first line of a
/// connection, then closes it unanswered.
final class RecordingSocket: Sendable {
    let path: String
    private let descriptor: Int32

    init() throws {
        path = NSTemporaryDirectory() + "a11ysay-forms-\(getpid())-\(UUID().uuidString.prefix(8)).sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0, let address = UnixSocketAddress(path: path),
            address.withSockaddr({ bind(descriptor, $0, $1) }) == 0, listen(descriptor, 8) == 0
        else { throw TestFailure("cannot listen on \(path): errno \(errno)") }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Runs a11ysay to its end, answering nothing; the line it sent (nil if it sent none), its
    /// exit status and output.
    func exchange(_ executable: String, _ arguments: [String]) async throws
        -> (line: String?, status: Int32, out: String, err: String)
    {
        var environment = ProcessInfo.processInfo.environment
        environment["A11YD_NO_AUTOSPAWN"] = "1"
        let base = NSTemporaryDirectory() + "a11ysay-forms-\(UUID().uuidString)"
        defer {
            unlink(base + ".out")
            unlink(base + ".err")
        }
        let child = try ChildProcess(executable, arguments, environment: environment, logPath: base + ".out", errorPath: base + ".err")
        var line: String?
        let deadline = ContinuousClock.now + .seconds(20)
        // Until it exits: a connection waiting to be accepted is served (a11ysay blocks on the reply).
        while child.isRunning || hasPendingConnection() {
            guard ContinuousClock.now < deadline else { throw TestFailure("a11ysay \(arguments) did not finish") }
            if hasPendingConnection() {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { throw TestFailure("accept: errno \(errno)") }
                line = Self.firstLine(connection)
                close(connection)
            } else {
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        let status = try await child.waitForExit()
        return (line, status, child.log, child.errors)
    }

    private func hasPendingConnection() -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) == 1
    }

    private static func firstLine(_ connection: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(connection, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }
}
