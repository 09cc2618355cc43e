import A11yCore
import A11yProtocol
import ArgumentParser

/// a11ysay's arguments as ArgumentParser reads them: the parser of record, its help and its errors
/// (the common forms skip it: `CommonForms`).
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

    /// The same values, plain: what both parsers hand on.
    var invocation: Invocation {
        Invocation(
            text: text, layout: layout, screen: screen, scrolled: scrolled, queue: queue, priority: priority,
            lang: lang, rate: rate, pitch: pitch, volume: volume, wait: wait, ipa: ipa, spell: spell, ssml: ssml,
            showIPA: showIPA, output: output, pause: pause, at: at, resume: resume, stop: stop, status: status,
            listVoices: listVoices, lexiconAdd: lexiconAdd, lexiconAlias: lexiconAlias, lexiconRemove: lexiconRemove,
            lexiconList: lexiconList, caseSensitive: caseSensitive, socket: socket, json: json)
    }

    func validate() throws {
        if let problem = invocation.problem() { throw ValidationError(problem) }
    }

    func run() throws {
        let status = invocation.run()
        if status != 0 { throw ExitCode(status) }
    }
}

extension Priority: ExpressibleByArgument {}
extension PauseBoundary: ExpressibleByArgument {}
