// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

extension CommandLineOption {
    /// a11ysay's options, in the order the help lists them: the one definition that parsing,
    /// `--help`, the completion scripts and the man page all come from.
    public static let table: [CommandLineOption] = [
        .text("text", help: "The text to speak.") { $0.text = $1 },

        .flag("layout", help: "Post as layoutChanged (part of the screen changed).") { $0.layout = true },
        .flag("screen", help: "Post as screenChanged (a new screen: earcon, high priority, flushes pending items).") { $0.screen = true },
        .flag("scrolled", help: "Post as pageScrolled (coalesces with other scroll announcements).") { $0.scrolled = true },

        .flag("queue", help: "Wait behind what is already queued instead of interrupting (accessibilitySpeechQueueAnnouncement).") {
            $0.queue = true
        },
        .choice("priority", [("low", .low), ("default", .default), ("high", .high)], help: "Priority: low, default or high.") { $0.priority = $1 },
        .value("lang", help: "Language (BCP 47 or POSIX: fr, en-US, en_GB).") { $0.lang = $1 },
        .value("voice", valueName: "ID", help: "Voice by identifier from --list-voices (piper:en_US-joe-medium, fr).") { $0.voice = $1 },
        .number("rate", help: "Rate, 0 to 1 (0.5 is normal), as AVSpeechUtterance.rate.") { $0.rate = $1 },
        .number("pitch", help: "Pitch multiplier, 0.5 to 2 (1 is normal).") { $0.pitch = $1 },
        .number("volume", help: "Volume, 0 to 1.") { $0.volume = $1 },
        .flag("wait", help: "Block until the text has been spoken; exit 2 if it was not spoken to the end.") { $0.wait = true },

        .repeatable("ipa", valueName: "WORD=IPA", help: "Say every occurrence of WORD with this IPA (repeatable).") { $0.ipa.append($1) },
        .repeatable("spell", valueName: "WORD", help: "Spell every occurrence of WORD letter by letter (repeatable).") {
            $0.spell.append($1)
        },
        .flag("ssml", help: "TEXT is SSML (a safe subset: phoneme, say-as, lang, break, prosody, mark…).") { $0.ssml = true },
        .flag("show-ipa", help: "Print the IPA eSpeak-NG will pronounce for this input, without speaking.") { $0.showIPA = true },
        .value("output", valueName: "FILE.wav", completion: .files, help: "Render the utterance to a WAV file instead of playing it.") {
            $0.output = $1
        },

        .flag("pause", help: "Pause the daemon's speech.") { $0.pause = true },
        .choice("at", [("immediate", .immediate), ("word", .word)], help: "With --pause: immediate (default) or word (at the end of the current word).") {
            $0.at = $1
        },
        .flag("resume", help: "Resume paused speech where it stopped.") { $0.resume = true },
        .flag("stop", help: "Stop the current item and empty the queue.") { $0.stop = true },
        .flag("status", help: "Show what the daemon is doing, and where its sound server stands.") { $0.status = true },
        .flag("list-voices", help: "List the installed voices: identifier, engine, languages, quality, name.") { $0.listVoices = true },

        .value(
            "lexicon-add", valueName: "WORD=IPA",
            help: "Say WORD with this IPA from now on, in every client's speech (with --lang: only in that language)."
        ) { $0.lexiconAdd = $1 },
        .value("lexicon-alias", valueName: "WORD=TEXT", help: "Say TEXT instead of WORD from now on (an acronym read as a word, say).") {
            $0.lexiconAlias = $1
        },
        .value("lexicon-remove", valueName: "WORD", help: "Forget the lexicon entry for WORD (with --lang: the one for that language).") {
            $0.lexiconRemove = $1
        },
        .flag("lexicon-list", help: "List the lexicon entries in force and the files they come from.") { $0.lexiconList = true },
        .flag("case-sensitive", help: "With --lexicon-add or --lexicon-alias: match WORD's case exactly.") { $0.caseSensitive = true },

        .value("socket", completion: .files, help: "Socket path (default: $A11YD_SOCKET, else $XDG_RUNTIME_DIR/a11yd/socket).") {
            $0.socket = $1
        },
        .flag("json", help: "Print the daemon's replies and events as JSON Lines.") { $0.json = true },
        .help("Show help information."),
    ]
}

/// The words around the table, shared by `--help` and the man page.
public enum CommandDescription {
    public static let name = "a11ysay"
    public static let abstract = "Speak through the a11yd daemon, or control it."
    public static let examples = [
        (#"a11ysay "bonjour tout le monde""#, ""),
        (#"a11ysay --queue --wait "phrase numéro 2""#, ""),
        (#"a11ysay --screen "Réglages""#, "new screen: earcon, flushes older items"),
        ("a11ysay --pause --at word ; a11ysay --resume ; a11ysay --stop", ""),
    ]
    public static let autospawn = """
        When nothing listens on the socket, a11ysay starts a11yd itself (log: \
        $XDG_STATE_HOME/a11yd/a11yd.log) unless A11YD_NO_AUTOSPAWN=1 or daemon.autospawn = false.
        """
    /// Exit status and meaning, for the help and the man page.
    public static let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "done (with --wait: spoken)"),
        (1, "error (daemon unreachable, refused request, cannot write the --output file)"),
        (2, "with --wait, the item was not spoken to the end (interrupted, flushed, stopped, dropped, error)"),
        (usageStatus, "the command line is wrong (unknown option, missing or bad value, options that do not go together)"),
    ]
    /// EX_USAGE (sysexits.h), as swift-argument-parser exited before a11ysay had its own parser.
    public static let usageStatus: Int32 = 64
    public static let usage = "a11ysay [<options>] [<text>]"
}
