// SPDX-License-Identifier: GPL-3.0-or-later
import A11yConfiguration
import A11yCore
import A11yProtocol
import A11ySayCommandLine
import A11ySystem

#if canImport(Glibc)
import Glibc
#endif

/// Doing what the command line asked (`Invocation`, filled by A11ySayCommandLine's parser).
extension Invocation {
    /// Sends the request and reports what comes back; returns the exit status.
    func run() -> Int32 {
        // Each variable read when needed (getenv): a `[String: String]` of even the five a11ysay
        // reads cost 0.23 M instructions (callgrind, mostly the dictionary's generic metadata
        // instantiated), a quarter of a11ysay's run, before the request could leave.
        let environment = Environment.variable
        let settings = ClientSettings.load(environment: environment)
        let path = SocketLocation.resolve(explicit: socket, configured: settings.socket, environment: environment)
        let request = makeRequest()
        guard let connection = connect(path: path, environment: environment, settings: settings) else { return 1 }

        var outcome: Int32 = 0
        var utterance: UtteranceID?
        var answered = false
        do {
            try connection.exchange(request) { message in
                if json { print(LineCodec.encodeString(message)) }
                if case .event = message {} else { answered = true }
                switch message {
                case .failure(let error, _):
                    printError("\(error.message) (\(error.code))")
                    outcome = 1
                    return false
                case .reply(let reply, _):
                    if case .posted(let id) = reply { utterance = id }
                    if case .audio(let audio) = reply, let output {
                        if let error = WAVFile.write(audio, to: output) {
                            printError("cannot write \(output): \(error)")
                            outcome = 1
                            return false
                        }
                    }
                    if !json { report(reply) }
                    return wait && utterance != nil
                case .event(.finished(let id, _, let reason, let why)) where id == utterance:
                    if !reason.isSuccessful {
                        if !json { printError("not spoken: \(reason.wireName)\(why.map { " (\($0))" } ?? "")") }
                        outcome = 2
                    }
                    return false
                case .event:
                    return true
                }
            }
        } catch {
            printError("lost the connection to a11yd: \(Self.describe(error))")
            return 1
        }
        if !answered {
            printError("a11yd at \(path) closed the connection without answering (see its log)")
            return 1
        }
        return outcome
    }

    /// Connects; when nothing listens, starts a11yd (autospawn) unless turned off or the request
    /// only controls speech that cannot exist (--pause, --resume, --stop). Nil once the reason is printed.
    func connect(path: String, environment: (String) -> String?, settings: ClientSettings) -> DaemonConnection? {
        let refused: DaemonConnection.Refused
        do {
            return try DaemonConnection(path: path)
        } catch {
            refused = error
        }
        guard Autospawn.meansNothingListens(refused.errno) else {
            printError("cannot reach a11yd at \(path) (\(refused.description))")
            return nil
        }
        if pause || resume || stop {
            printError("a11yd is not running at \(path); nothing to \(pause ? "pause" : resume ? "resume" : "stop")")
            return nil
        }
        if let reason = Autospawn.disabledReason(environment: environment, settings: settings) {
            printError("cannot reach a11yd at \(path) (\(refused.description)); \(reason); start it with 'systemctl --user start a11yd.socket' or 'a11yd &'")
            return nil
        }
        do {
            try Autospawn.ensureRunning(socketPath: path, environment: Environment.snapshot())
        } catch {
            printError("cannot reach a11yd at \(path) (\(refused.description)); autospawn failed: \(Self.describe(error))")
            return nil
        }
        // Listening now (started by us, or by a racing a11ysay).
        do {
            return try DaemonConnection(path: path)
        } catch {
            printError("cannot reach a11yd at \(path) (\(error.description))")
            return nil
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
        var post = Post(
            kind: kind, queue: queue ? true : nil, priority: priority, lang: lang, rate: rate, pitch: pitch, volume: volume, voice: voice)
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
            print("state: \(status.state.wireName)")
            if let current = status.current { print("speaking: #\(current.utterance) \(current.kind.wireName) \(current.priority.wireName): \(current.text)") }
            for item in status.queue { print("queued: #\(item.utterance) \(item.kind.wireName) \(item.priority.wireName): \(item.text)") }
            if let audio = status.audio { print("audio: \(audio.sentence)") }
        case .voices(let voices):
            for voice in voices {
                let columns = [voice.identifier, voice.engine, voice.languages.joined(separator: ","), voice.quality ?? "-", voice.name]
                print(columns.joined(separator: "\t") + (voice.problem.map { "\t(cannot speak: \($0))" } ?? ""))
            }
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
}
