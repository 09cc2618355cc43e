/// `a11ysay --help` as ArgumentParser renders it 80 columns wide (`COLUMNS=80 a11ysay -h`), printed
/// by `CommonForms` without building ArgumentParser's argument set. A test compares it with
/// ArgumentParser's own rendering (CommonFormsTests); when the options change, put the output of
/// `COLUMNS=80 a11ysay -h | sed 's/^./        &/'` between the delimiters.
enum HelpText {
    static let width = 80
    static let rendered = #"""
        OVERVIEW: Speak through the a11yd daemon, or control it.

        Examples:
          a11ysay "bonjour tout le monde"
          a11ysay --queue --wait "phrase numéro 2"
          a11ysay --screen "Réglages"          (new screen: earcon, flushes older
        items)
          a11ysay --pause --at word ; a11ysay --resume ; a11ysay --stop
        When nothing listens on the socket, a11ysay starts a11yd itself (log:
        $XDG_STATE_HOME/a11yd/a11yd.log) unless A11YD_NO_AUTOSPAWN=1 or
        daemon.autospawn = false.
        Exit status: 0 done (with --wait: spoken), 1 error (daemon unreachable, bad
        input), 2 with --wait when the item was not spoken to the end (interrupted,
        flushed, stopped, dropped, error).

        USAGE: a11ysay [<options>] [<text>]

        ARGUMENTS:
          <text>                  The text to speak.

        OPTIONS:
          --layout                Post as layoutChanged (part of the screen changed).
          --screen                Post as screenChanged (a new screen: earcon, high
                                  priority, flushes pending items).
          --scrolled              Post as pageScrolled (coalesces with other scroll
                                  announcements).
          --queue                 Wait behind what is already queued instead of
                                  interrupting (accessibilitySpeechQueueAnnouncement).
          --priority <priority>   Priority: low, default or high. (values: low,
                                  default, high)
          --lang <lang>           Language (BCP 47 or POSIX: fr, en-US, en_GB).
          --rate <rate>           Rate, 0 to 1 (0.5 is normal), as
                                  AVSpeechUtterance.rate.
          --pitch <pitch>         Pitch multiplier, 0.5 to 2 (1 is normal).
          --volume <volume>       Volume, 0 to 1.
          --wait                  Block until the text has been spoken; exit 2 if it
                                  was not spoken to the end.
          --ipa <WORD=IPA>        Say every occurrence of WORD with this IPA
                                  (repeatable).
          --spell <WORD>          Spell every occurrence of WORD letter by letter
                                  (repeatable).
          --ssml                  TEXT is SSML (a safe subset: phoneme, say-as, lang,
                                  break, prosody, mark…).
          --show-ipa              Print the IPA eSpeak-NG will pronounce for this
                                  input, without speaking.
          --output <FILE.wav>     Render the utterance to a WAV file instead of playing
                                  it.
          --pause                 Pause the daemon's speech.
          --at <at>               With --pause: immediate (default) or word (at the end
                                  of the current word).
          --resume                Resume paused speech where it stopped.
          --stop                  Stop the current item and empty the queue.
          --status                Show what the daemon is doing.
          --list-voices           List the installed voices.
          --lexicon-add <WORD=IPA>
                                  Say WORD with this IPA from now on, in every client's
                                  speech (with --lang: only in that language).
          --lexicon-alias <WORD=TEXT>
                                  Say TEXT instead of WORD from now on (an acronym read
                                  as a word, say).
          --lexicon-remove <WORD> Forget the lexicon entry for WORD (with --lang: the
                                  one for that language).
          --lexicon-list          List the lexicon entries in force and the files they
                                  come from.
          --case-sensitive        With --lexicon-add or --lexicon-alias: match WORD's
                                  case exactly.
          --socket <socket>       Socket path (default: $A11YD_SOCKET, else
                                  $XDG_RUNTIME_DIR/a11yd/socket).
          --json                  Print the daemon's replies and events as JSON Lines.
          -h, --help              Show help information.

        """#
}
