import A11yCore
import A11yProtocol
import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

// No Foundation: a11ysay starts like a C program (docs/service.md, BENCHMARKS.md).
@main
struct A11ySay: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "a11ysay",
        abstract: "Speak through the a11yd daemon, or control it.",
        discussion: """
            Examples:
              a11ysay "bonjour tout le monde"
              a11ysay --queue --wait "phrase numéro 2"
              a11ysay --screen "Réglages"          (new screen: earcon, flushes older items)
              a11ysay --pause --at word ; a11ysay --resume ; a11ysay --stop
            When nothing listens on the socket, a11ysay starts a11yd itself (log: \
            $XDG_STATE_HOME/a11yd/a11yd.log) unless A11YD_NO_AUTOSPAWN=1 or daemon.autospawn = false.
            Exit status: 0 done (with --wait: spoken), 1 error (daemon unreachable, bad input), \
            2 with --wait when the item was not spoken to the end (interrupted, flushed, stopped, dropped, error).
            """)

    @Argument(help: "The text to speak.")
    var text: String?

    @Flag(help: "Post as layoutChanged (part of the screen changed).")
    var layout = false
    @Flag(help: "Post as screenChanged (a new screen: earcon, high priority, flushes pending items).")
    var screen = false
    @Flag(help: "Post as pageScrolled (coalesces with other scroll announcements).")
    var scrolled = false

    @Flag(help: "Wait behind what is already queued instead of interrupting (accessibilitySpeechQueueAnnouncement).")
    var queue = false
    @Option(help: "Priority: low, default or high.")
    var priority: Priority?
    @Option(help: "Language (BCP 47 or POSIX: fr, en-US, en_GB).")
    var lang: String?
    @Option(help: "Rate, 0 to 1 (0.5 is normal), as AVSpeechUtterance.rate.")
    var rate: Double?
    @Option(help: "Pitch multiplier, 0.5 to 2 (1 is normal).")
    var pitch: Double?
    @Option(help: "Volume, 0 to 1.")
    var volume: Double?
    @Flag(help: "Block until the text has been spoken; exit 2 if it was not spoken to the end.")
    var wait = false

    @Option(name: .customLong("ipa"), help: ArgumentHelp("Say every occurrence of WORD with this IPA (repeatable).", valueName: "WORD=IPA"))
    var ipa: [String] = []
    @Option(name: .customLong("spell"), help: ArgumentHelp("Spell every occurrence of WORD letter by letter (repeatable).", valueName: "WORD"))
    var spell: [String] = []
    @Flag(help: "TEXT is SSML (a safe subset: phoneme, say-as, lang, break, prosody, mark…).")
    var ssml = false
    @Flag(help: "Print the IPA eSpeak-NG will pronounce for this input, without speaking.")
    var showIPA = false
    @Option(help: ArgumentHelp("Render the utterance to a WAV file instead of playing it.", valueName: "FILE.wav"))
    var output: String?

    @Flag(help: "Pause the daemon's speech.")
    var pause = false
    @Option(help: "With --pause: immediate (default) or word (at the end of the current word).")
    var at: PauseBoundary?
    @Flag(help: "Resume paused speech where it stopped.")
    var resume = false
    @Flag(help: "Stop the current item and empty the queue.")
    var stop = false
    @Flag(help: "Show what the daemon is doing.")
    var status = false
    @Flag(help: "List the installed voices.")
    var listVoices = false

    @Option(help: ArgumentHelp("Say WORD with this IPA from now on, in every client's speech (with --lang: only in that language).", valueName: "WORD=IPA"))
    var lexiconAdd: String?
    @Option(help: ArgumentHelp("Say TEXT instead of WORD from now on (an acronym read as a word, say).", valueName: "WORD=TEXT"))
    var lexiconAlias: String?
    @Option(help: ArgumentHelp("Forget the lexicon entry for WORD (with --lang: the one for that language).", valueName: "WORD"))
    var lexiconRemove: String?
    @Flag(help: "List the lexicon entries in force and the files they come from.")
    var lexiconList = false
    @Flag(help: "With --lexicon-add or --lexicon-alias: match WORD's case exactly.")
    var caseSensitive = false

    @Option(help: "Socket path (default: $A11YD_SOCKET, else $XDG_RUNTIME_DIR/a11yd/socket).")
    var socket: String?
    @Flag(help: "Print the daemon's replies and events as JSON Lines.")
    var json = false

    func validate() throws {
        let controls = [pause, resume, stop, status, listVoices, lexiconAdd != nil, lexiconAlias != nil, lexiconRemove != nil, lexiconList]
            .filter { $0 }.count
        let kinds = [layout, screen, scrolled].filter { $0 }.count
        if controls > 1 { throw ValidationError("use one of --pause, --resume, --stop, --status, --list-voices at a time") }
        if controls == 1 && text != nil { throw ValidationError("a control (--pause, --stop, …) takes no text") }
        if controls == 0 && text == nil { throw ValidationError("nothing to say: give a TEXT, or a control such as --stop") }
        if kinds > 1 { throw ValidationError("use at most one of --layout, --screen, --scrolled") }
        if at != nil && !pause { throw ValidationError("--at goes with --pause") }
        for (flag, pair) in [("--lexicon-add", lexiconAdd), ("--lexicon-alias", lexiconAlias)] {
            if let pair, !pair.contains("=") { throw ValidationError("\(flag) takes WORD=\(flag == "--lexicon-add" ? "IPA" : "TEXT"), got '\(pair)'") }
        }
        if caseSensitive && lexiconAdd == nil && lexiconAlias == nil {
            throw ValidationError("--case-sensitive goes with --lexicon-add or --lexicon-alias")
        }
        if showIPA && output != nil { throw ValidationError("use one of --show-ipa and --output") }
        if ssml && (!ipa.isEmpty || !spell.isEmpty) { throw ValidationError("--ipa and --spell apply to plain text, not --ssml") }
        for pair in ipa where !pair.contains("=") { throw ValidationError("--ipa takes WORD=IPA, got '\(pair)'") }
        if let text, !ssml {
            for word in spell + ipa.map({ String($0.prefix { $0 != "=" }) }) where SpeechSpan.occurrences(of: word, in: text).isEmpty {
                throw ValidationError("'\(word)' does not occur as a word in the text")
            }
        }
    }

    func run() throws {
        let environment = Self.environment()
        let settings = ClientSettings.load(environment: environment)
        let path = SocketLocation.resolve(explicit: socket, configured: settings.socket, environment: environment)
        let request = makeRequest()
        let connection = try connect(path: path, environment: environment, settings: settings)

        var outcome: ExitCode = .success
        var utterance: UtteranceID?
        var answered = false
        do {
            try connection.exchange(request) { message in
                if json { print(LineCodec.encodeString(message)) }
                if case .event = message {} else { answered = true }
                switch message {
                case .failure(let error, _):
                    printError("\(error.message) (\(error.code))")
                    outcome = .failure
                    return false
                case .reply(let reply, _):
                    if case .posted(let id) = reply { utterance = id }
                    if case .audio(let audio) = reply, let output {
                        if let error = WAVFile.write(audio, to: output) {
                            printError("cannot write \(output): \(error)")
                            outcome = .failure
                            return false
                        }
                    }
                    if !json { report(reply) }
                    return wait && utterance != nil
                case .event(.finished(let id, _, let reason, let why)) where id == utterance:
                    if !reason.isSuccessful {
                        if !json { printError("not spoken: \(reason.rawValue)\(why.map { " (\($0))" } ?? "")") }
                        outcome = ExitCode(2)
                    }
                    return false
                case .event:
                    return true
                }
            }
        } catch {
            printError("lost the connection to a11yd: \(Self.describe(error))")
            throw ExitCode.failure
        }
        if !answered {
            printError("a11yd at \(path) closed the connection without answering (see its log)")
            throw ExitCode.failure
        }
        if outcome != .success { throw outcome }
    }

    /// Connects; when nothing listens, starts a11yd (autospawn) unless turned off or the request
    /// only controls speech that cannot exist (--pause, --resume, --stop).
    func connect(path: String, environment: [String: String], settings: ClientSettings) throws -> DaemonConnection {
        let refused: DaemonConnection.Refused
        do {
            return try DaemonConnection(path: path)
        } catch {
            refused = error
        }
        guard Autospawn.meansNothingListens(refused.errno) else {
            printError("cannot reach a11yd at \(path) (\(refused.description))")
            throw ExitCode.failure
        }
        if pause || resume || stop {
            printError("a11yd is not running at \(path); nothing to \(pause ? "pause" : resume ? "resume" : "stop")")
            throw ExitCode.failure
        }
        if let reason = Autospawn.disabledReason(environment: environment, settings: settings) {
            printError("cannot reach a11yd at \(path) (\(refused.description)); \(reason); start it with 'systemctl --user start a11yd.socket' or 'a11yd &'")
            throw ExitCode.failure
        }
        do {
            try Autospawn.ensureRunning(socketPath: path, environment: environment)
        } catch {
            printError("cannot reach a11yd at \(path) (\(refused.description)); autospawn failed: \(Self.describe(error))")
            throw ExitCode.failure
        }
        // Listening now (started by us, or by a racing a11ysay).
        do {
            return try DaemonConnection(path: path)
        } catch {
            printError("cannot reach a11yd at \(path) (\(error.description))")
            throw ExitCode.failure
        }
    }

    func makeRequest() -> RequestLine {
        if pause { return RequestLine(.pause(at ?? .immediate)) }
        if resume { return RequestLine(.resume) }
        if stop { return RequestLine(.stop) }
        if status { return RequestLine(.status) }
        if listVoices { return RequestLine(.voices) }
        if lexiconList { return RequestLine(.lexicon(LexiconRequest(.list))) }
        if let word = lexiconRemove { return RequestLine(.lexicon(LexiconRequest(.remove, grapheme: word, lang: lang))) }
        if let pair = lexiconAdd ?? lexiconAlias {
            let word = String(pair.prefix { $0 != "=" })
            let said = String(pair.dropFirst(word.count + 1))
            return RequestLine(.lexicon(LexiconRequest(
                .add, grapheme: word, ipa: lexiconAdd != nil ? said : nil, alias: lexiconAlias != nil ? said : nil,
                lang: lang, caseSensitive: caseSensitive ? true : nil)))
        }
        let kind: NotificationKind = layout ? .layoutChanged : screen ? .screenChanged : scrolled ? .pageScrolled : .announcement
        var post = Post(kind: kind, queue: queue ? true : nil, priority: priority, lang: lang, rate: rate, pitch: pitch, volume: volume)
        if ssml {
            post.ssml = text
        } else {
            post.text = text ?? ""
        }
        var spans: [SpeechSpan] = []
        for pair in ipa {
            let word = String(pair.prefix { $0 != "=" })
            spans += SpeechSpan.occurrences(of: word, in: text ?? "", ipa: String(pair.dropFirst(word.count + 1)))
        }
        for word in spell { spans += SpeechSpan.occurrences(of: word, in: text ?? "", spellOut: true) }
        if !spans.isEmpty { post.spans = spans.sorted { $0.start < $1.start } }
        if showIPA { return RequestLine(.pronounce(post)) }
        if output != nil { return RequestLine(.render(post)) }
        return RequestLine(.post(post))
    }

    /// Human output for replies that carry something to show.
    func report(_ reply: ServerMessage.Reply) {
        switch reply {
        case .control(effective: false):
            printError(pause ? "nothing was speaking" : resume ? "nothing was paused" : "nothing to stop")
        case .status(let status):
            print("state: \(status.state.rawValue)")
            if let current = status.current { print("speaking: #\(current.utterance) \(current.kind.rawValue) \(current.priority.rawValue): \(current.text)") }
            for item in status.queue { print("queued: #\(item.utterance) \(item.kind.rawValue) \(item.priority.rawValue): \(item.text)") }
        case .voices(let voices):
            for voice in voices { print("\(voice.identifier)\t\(voice.languages.joined(separator: ","))\t\(voice.name)") }
        case .pronunciation(let ipa):
            print(ipa)
        case .lexicon(let entries):
            if lexiconList && entries.isEmpty { print("no lexicon entries") }
            for listing in entries {
                if lexiconList {
                    print("\(listing.entry)\t(\(listing.source))")
                } else {
                    print("\(lexiconRemove != nil ? "removed" : "added"): \(listing.entry)")
                }
            }
        case .posted, .postedBatch, .control, .audio, .done:
            break
        }
    }

    func printError(_ text: String) {
        let line = Array("a11ysay: \(text)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    static func describe(_ error: any Error) -> String {
        String(describing: error).split(separator: "\n").joined(separator: " ")
    }

    /// The process environment, from `environ`.
    static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let pair = String(cString: pointer)
            if let equals = pair.firstIndex(of: "=") {
                result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }
}

extension Priority: ExpressibleByArgument {}
extension PauseBoundary: ExpressibleByArgument {}
