#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Orca, headless, speaking SSIP to a11yd: Xvfb, a session D-Bus, the AT-SPI bus and registry, a small GTK
# window (a label, two buttons, an entry), Orca pointed at the SSIP socket by SPEECHD_ADDRESS, and two Tab
# presses with xdotool. Never starts a speech-dispatcher (SPEECHD_CMD=/bin/false, DisableAutoSpawn).
#
#   scripts/orca-ssip-test.sh --socket PATH        an SSIP server already listening (a test's, or a11yd's)
#   scripts/orca-ssip-test.sh --a11yd BIN          start BIN --ssip-socket … on a private PulseAudio null sink,
#                                                  record its monitor, and check that speech was heard
#     --piper-voice NAME --data-home DIR           with --a11yd: Orca's own settings choose the `piper` output
#                                                  module and the voice NAME (as a user does in its preferences);
#                                                  a11yd finds the runtime and voices in DIR ($XDG_DATA_HOME) and
#                                                  must log that the Piper worker started for that speech
#     --detect-languages LIST                      French with English and German among it: Orca's settings give
#                                                  its voice LIST's first language (as a French user's do), the
#                                                  window is French (a first button "Annuler", focused with the
#                                                  window; a second one named with a French, an English and a
#                                                  German sentence), Tab is pressed once and the second button's
#                                                  name waited for until it has been said; with --a11yd, a11yd's
#                                                  configuration lists LIST (`[voice] detect_languages`, its
#                                                  `language` the first), e.g. fr,en,de,es,it
# Prints "ORCA-SSIP OK" on success. Logs stay in $ORCA_TEST_KEEP if set.
set -euo pipefail
socket="" a11yd="" piper_voice="" data_home="" detect_languages=""
usage="usage: $0 --socket PATH | --a11yd BIN [--piper-voice NAME --data-home DIR] [--detect-languages fr,en,…]"
while [ $# -gt 0 ]; do
    case "$1" in
        --socket) socket="$2"; shift 2 ;;
        --a11yd) a11yd="$2"; shift 2 ;;
        --piper-voice) piper_voice="$2"; shift 2 ;;
        --data-home) data_home="$2"; shift 2 ;;
        --detect-languages) detect_languages="$2"; shift 2 ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
[ -n "$socket" ] || [ -n "$a11yd" ] || { echo "$usage" >&2; exit 2; }
[ -z "$piper_voice" ] || { [ -n "$a11yd" ] && [ -n "$data_home" ]; } || { echo "$usage" >&2; exit 2; }
[ -z "$piper_voice" ] || [ -z "$detect_languages" ] || { echo "$usage" >&2; exit 2; }

work="$(mktemp -d /tmp/a11y-orca.XXXXXX)"
pids=()
cleanup() {
    # Their children too (the AT-SPI bus launcher's own dbus-daemon), found by parent before they go.
    for pid in "${pids[@]}"; do pids+=($(pgrep -P "$pid" 2>/dev/null || true)); done
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    sleep 0.3
    # Orca acts on SIGTERM only when an AT-SPI event wakes it: whatever is left is killed.
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    if [ -n "${ORCA_TEST_KEEP:-}" ]; then mkdir -p "$ORCA_TEST_KEEP"; cp "$work"/*.log "$ORCA_TEST_KEEP/" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
wait_for() {  # wait_for SECONDS COMMAND...
    local limit=$(( $1 * 20 )); shift
    for _ in $(seq 1 "$limit"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done
    return 1
}

export HOME="$work/home" XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config"
export GSETTINGS_BACKEND=memory NO_AT_BRIDGE=0 SPEECHD_CMD=/bin/false
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/speech-dispatcher"
chmod 700 "$XDG_RUNTIME_DIR"
printf 'DisableAutoSpawn\n' >"$XDG_CONFIG_HOME/speech-dispatcher/speechd.conf"

# X, without a window manager (orca-ssip.md: the test window is focused with xdotool). Xvfb picks a
# display no other X server holds and writes its number once it accepts (-displayfd): test lanes and
# other users' runs each get their own.
Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp 3>"$work/display" >"$work/xvfb.log" 2>&1 &
pids+=($!)
wait_for 10 test -s "$work/display" || { echo "Xvfb did not start: $(cat "$work/xvfb.log")" >&2; exit 1; }
export DISPLAY=":$(head -1 "$work/display")"
wait_for 10 xdotool getdisplaygeometry || { echo "Xvfb did not start" >&2; exit 1; }

# The session bus, then the accessibility bus and its registry (started by hand: D-Bus activation
# makes the registry outlive its bus launcher).
dbus-daemon --session --address="unix:path=$XDG_RUNTIME_DIR/bus" --nofork --nopidfile >"$work/dbus.log" 2>&1 &
pids+=($!)
export DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus"
wait_for 5 test -S "$XDG_RUNTIME_DIR/bus"
/usr/libexec/at-spi-bus-launcher --launch-immediately >"$work/at-spi-bus.log" 2>&1 &
pids+=($!)
sleep 0.5
/usr/libexec/at-spi2-registryd >"$work/registryd.log" 2>&1 &
pids+=($!)

recording=""
if [ -n "$a11yd" ]; then
    # A private PulseAudio with a null sink, always ours (even in a desktop session), so that what is
    # recorded is only this test's speech; it runs as root too, with a warning.
    mkdir -p "$work/pulse/run" "$work/pulse/home"
    chmod 700 "$work/pulse" "$work/pulse/run"
    printf 'load-module module-null-sink sink_name=nullsink rate=48000\nset-default-sink nullsink\nload-module module-native-protocol-unix auth-anonymous=1 socket=%s\n' \
        "$work/pulse/native" >"$work/pulse/server.pa"
    XDG_RUNTIME_DIR="$work/pulse/run" HOME="$work/pulse/home" pulseaudio -n --file="$work/pulse/server.pa" \
        --daemonize=no --exit-idle-time=-1 --use-pid-file=no >"$work/pulseaudio.log" 2>&1 &
    pids+=($!)
    export PULSE_SERVER="unix:$work/pulse/native"
    wait_for 10 pactl info || { echo "the private PulseAudio did not start" >&2; exit 1; }
    socket="$work/ssip.sock"
    # The Piper runtime and voices where a user's are ($XDG_DATA_HOME/a11yd), and none of the machine's.
    a11yd_environment=()
    [ -z "$piper_voice" ] || a11yd_environment=(env XDG_DATA_HOME="$data_home" XDG_DATA_DIRS=/nonexistent)
    if [ -n "$detect_languages" ]; then
        # What a French user who reads English and German writes in $XDG_CONFIG_HOME/a11yd/a11yd.toml.
        mkdir -p "$XDG_CONFIG_HOME/a11yd"
        listed="$(sed 's/[^,][^,]*/"&"/g; s/,/, /g' <<<"$detect_languages")"
        printf '[voice]\nlanguage = "%s"\ndetect_languages = [%s]\n' "${detect_languages%%,*}" "$listed" \
            >"$XDG_CONFIG_HOME/a11yd/a11yd.toml"
    fi
    "${a11yd_environment[@]}" "$a11yd" --socket "$work/a11yd.sock" --ssip-socket "$socket" >"$work/a11yd.log" 2>&1 &
    pids+=($!)
    recording="$work/monitor.raw"
    parec -d nullsink.monitor --raw --format=s16le --rate=48000 --channels=1 >"$recording" 2>/dev/null &
    pids+=($!)
fi
wait_for 10 python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])" "$socket" \
    || { echo "nothing listens on $socket" >&2; exit 1; }
export SPEECHD_ADDRESS="unix_socket:$socket"

# The window: a label, two buttons, an entry (its label and buttons' names in argv).
cat >"$work/window.py" <<'PY'
import gi, sys
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
window = Gtk.Window(title="a11y-orca-test")
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
box.pack_start(Gtk.Label(label=sys.argv[1]), False, False, 0)
for name in sys.argv[2:]:
    box.pack_start(Gtk.Button(label=name), False, False, 0)
box.pack_start(Gtk.Entry(), False, False, 0)
window.add(box)
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()
PY
window_text=("A small test window" "Apple" "Banana")
# Sentences of the kind a French user meets in mail and on the web, one in each of three languages.
[ -z "$detect_languages" ] || window_text=("Une petite fenêtre d'essai" "Annuler" \
    "Le rapport annuel sera publié demain matin sur le site. Please read the release notes carefully before you install the new version of the software. Die Bürgerinnen und Bürger können ihre Meinung bis Ende des Monats schriftlich einreichen.")
/usr/bin/python3 "$work/window.py" "${window_text[@]}" >"$work/window.log" 2>&1 &
window_pid=$!
pids+=($window_pid)
wait_for 10 xdotool search --name a11y-orca-test || { echo "the test window did not appear" >&2; exit 1; }

orca_settings=()
# What Orca's preferences dialog saves when the user picks the speech synthesizer "piper" and one of its
# voices: the module goes out as SET self OUTPUT_MODULE piper, the voice as SET self SYNTHESIS_VOICE NAME.
[ -z "$piper_voice" ] || orca_settings=("$piper_voice" en US "${ORCA_SPEECH_MODULE:-piper}")
# What it saves when the user gives the default synthesizer's voice a language: SET self LANGUAGE fr
# before every utterance, the text sent as it is.
[ -z "$detect_languages" ] || orca_settings=("" "${detect_languages%%,*}" "" "")
if [ ${#orca_settings[@]} -gt 0 ]; then
    # $XDG_DATA_HOME/orca/user-settings.conf, Orca 43's JSON backend: the voice's name, language,
    # dialect and speech module (an empty one: Orca's defaults).
    mkdir -p "$HOME/.local/share/orca"
    /usr/bin/python3 - "$HOME/.local/share/orca/user-settings.conf" "${orca_settings[@]}" <<'PY'
import json, sys
name, lang, dialect, module = (value or None for value in sys.argv[2:6])
voice = {"family": {"name": name, "lang": lang, "dialect": dialect, "variant": None}}
profile = {"profile": ["Default", "default"], "speechServerFactory": "speechdispatcherfactory",
           "voices": {"default": voice, "uppercase": {"average-pitch": 7.0}, "hyperlink": {}, "system": {}}}
if module:
    profile["speechServerInfo"] = [module, module]
json.dump({"general": dict(profile), "profiles": {"default": profile}, "pronunciations": {}, "keybindings": {}},
          open(sys.argv[1], "w"), indent=4)
PY
fi

# Orca will not start while any other process named orca runs as this user ("Another screen reader
# process is already running": `pgrep -u UID -x orca`), whatever its display: in PID and user
# namespaces of its own (its uid unchanged) it sees only itself, so that two of these tests can run
# at once (test lanes, another user's make test). Where namespaces are refused, Orca runs as it is.
own_pids=(unshare --user --map-current-user --pid --fork --mount-proc --kill-child)
"${own_pids[@]}" true 2>/dev/null || own_pids=()
"${own_pids[@]}" /usr/bin/orca --disable braille ${ORCA_DEBUG:+--debug-file="$work/orca-debug.log"} >"$work/orca.log" 2>&1 &
pids+=($!)
sleep "${ORCA_STARTUP_SECONDS:-6}"   # Orca's start-up message, spoken once it is ready

window_id="$(xdotool search --name a11y-orca-test | head -1)"
# No window manager: focus it directly (--sync would wait forever for a focus event).
xdotool windowfocus "$window_id" || true
sleep 1
if [ -n "$detect_languages" ]; then
    # The window's title and its first button said to their end ("Annuler"; a key cuts what Orca is
    # saying), then one Tab, to the button of three sentences, said to its end before the window closes.
    sleep "${ORCA_FOCUS_SECONDS:-4}"
    xdotool key Tab
    sleep "${ORCA_SPEECH_SECONDS:-20}"
else
    xdotool key Tab
    sleep 1
    xdotool key Tab
    sleep 1.5
fi
# Orca wakes to SIGTERM only on an AT-SPI event: close the window after.
kill "$window_pid" 2>/dev/null || true
sleep 0.5

if [ -n "$recording" ]; then
    rms="$(sox -t raw -r 48000 -e signed -b 16 -c 1 "$recording" -n stat 2>&1 | awk '/RMS +amplitude/ {print $3}')"
    echo "monitor RMS: ${rms:-none}"
    awk -v r="${rms:-0}" 'BEGIN { exit !(r > 0.01) }' || { echo "nothing was heard on the null sink" >&2; exit 1; }
fi
if [ -n "$piper_voice" ]; then
    # The Piper worker starts with the first request for a Piper voice (none is a default here): its log
    # line says Orca's speech went to the natural voice, and no item of it failed.
    grep -q "piper engine worker ready" "$work/a11yd.log" || { echo "no Piper worker started: $(cat "$work/a11yd.log")" >&2; exit 1; }
    ! grep -E "^[0-9T:.-]+ (error|critical) a11yd:" "$work/a11yd.log" >&2 || { echo "a11yd logged errors" >&2; exit 1; }
    echo "spoken by the Piper voice $piper_voice"
fi
echo "ORCA-SSIP OK"
