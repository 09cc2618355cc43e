#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Speed and memory benchmark: a11yd next to speech-dispatcher and the espeak-ng CLI, in one run,
# on one private PulseAudio server with a null sink (nothing of the user's session is touched). The stop
# is measured again on PipeWire's pulse server (part stop_pipewire): a private pipewire, WirePlumber (no
# device monitors) and pipewire-pulse with a 48 kHz null sink and their own session bus, a second a11yd and
# speech-dispatcher playing to it; skipped with a note when PipeWire is not installed.
#
#   bench/run.sh                     binaries from .build/release
#   A11Y_BENCH_BIN=.build-bench/release bench/run.sh
#
# Environment: A11Y_BENCH_BIN (directory holding a11yd and a11ysay), BENCH_RUNS (first-sound runs
# per client, default 20), BENCH_CONTROL_RUNS (interrupt and stop runs per client, default 10),
# BENCH_UTTERANCES (utterances spoken before the second memory reading, default 50),
# BENCH_IDLE_SECONDS (default 10), BENCH_ORCA_BLOCKS (blocks of 24 keys Orca types per server, default 2),
# BENCH_ONLY (one part alone: orca_echo, stop_pipewire, language_detection), BENCH_RECORDER_MS (the monitor recorder's latency, which sets
# the null sink's mix block: default 1). Writes
# bench/out/bench-<date>.md and .json (and the daemons' logs in bench/out/bench-<date>-logs/) and prints
# the table.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bin_dir="${A11Y_BENCH_BIN:-$root/.build/release}"
bin_dir="$(cd "$bin_dir" && pwd)"
for tool in a11yd a11ysay; do
    [[ -x "$bin_dir/$tool" ]] || { echo "bench: no $bin_dir/$tool (build with: make binaries)" >&2; exit 1; }
done
for tool in pulseaudio pactl parec speech-dispatcher spd-say espeak-ng python3; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is missing (scripts/install-deps.sh --bench)" >&2; exit 1; }
done

work="$(mktemp -d /tmp/a11yd-bench.XXXXXX)"
chmod 700 "$work"
mkdir -p "$work/pulse/run" "$work/pulse/home" "$work/run" "$work/home" "$work/config" "$work/logs"
chmod 700 "$work/pulse/run" "$work/run"
pids=()

# Stops what this script started, newest first: TERM, then KILL after 3 s (bounded loops only).
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    local i pid
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        pid="${pids[$i]}"
        kill -TERM "$pid" 2>/dev/null || continue
        for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    # speech-dispatcher's output module is its child; make sure none outlived it.
    if [[ -n "${speechd_module_pids:-}" ]]; then
        for pid in $speechd_module_pids; do kill -KILL "$pid" 2>/dev/null || true; done
    fi
    if [[ -n "${out_base:-}" && -d "$work/logs" ]]; then
        mkdir -p "$out_base-logs" && cp -r "$work/logs/." "$out_base-logs/" 2>/dev/null || true
    fi
    if [[ $status -ne 0 && -d "$work/logs" ]]; then
        echo "bench: failed; logs kept in $work/logs" >&2
        rm -rf "$work/pulse" "$work/run" "$work/pipewire"
    else
        rm -rf "$work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_for() { # tries a command every 50 ms, at most $1 times
    local tries=$1; shift
    for _ in $(seq 1 "$tries"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done
    return 1
}

# 1. Private PulseAudio with a null sink (as scripts/private-pulse.sh does, but always our own).
cat >"$work/pulse/server.pa" <<PA
load-module module-null-sink sink_name=nullsink rate=48000
set-default-sink nullsink
load-module module-native-protocol-unix auth-anonymous=1 socket=$work/pulse/native
PA
XDG_RUNTIME_DIR="$work/pulse/run" HOME="$work/pulse/home" pulseaudio -n --file="$work/pulse/server.pa" \
    --daemonize=no --exit-idle-time=-1 --use-pid-file=no >"$work/logs/pulseaudio.log" 2>&1 &
pids+=($!)
pulse_pid=$!
export PULSE_SERVER="unix:$work/pulse/native"
wait_for 100 pactl info || { echo "bench: private PulseAudio did not start" >&2; cat "$work/logs/pulseaudio.log" >&2; exit 1; }

# Everything else sees only private directories.
export XDG_RUNTIME_DIR="$work/run" HOME="$work/home" XDG_CONFIG_HOME="$work/config"
# The bench starts a11yd itself: a11ysay must never autospawn a second one while it waits for it.
export A11YD_NO_AUTOSPAWN=1
unset DBUS_SESSION_BUS_ADDRESS SPEECHD_ADDRESS A11YD_SOCKET || true

# 2. speech-dispatcher with a private configuration: PulseAudio output, the espeak-ng module only.
cp -r /etc/speech-dispatcher "$work/speechd-conf"
cat >>"$work/speechd-conf/speechd.conf" <<CONF

# Added by a11yd bench/run.sh
AudioOutputMethod "pulse"
AddModule "espeak-ng" "sd_espeak-ng" "espeak-ng.conf"
DefaultModule espeak-ng
DefaultLanguage "fr"
DisableAutoSpawn
CONF
speechd_socket="$XDG_RUNTIME_DIR/speech-dispatcher/speechd.sock"
mkdir -p "$(dirname "$speechd_socket")" "$work/logs/speechd"
speech-dispatcher -s -t 0 -C "$work/speechd-conf" -L "$work/logs/speechd" -P "$work/speechd.pid" \
    -c unix_socket -S "$speechd_socket" >"$work/logs/speechd.out" 2>&1 &
pids+=($!)
speechd_pid=$!
wait_for 200 test -S "$speechd_socket" || { echo "bench: speech-dispatcher did not start" >&2; cat "$work/logs/speechd.out" >&2; exit 1; }
speechd_module_pids="$(ps -o pid= --ppid "$speechd_pid" 2>/dev/null || true)"

# 3. a11yd with its default configuration but for the Piper worker's idle unload (5 s, so that the bench
# sees its memory go back), and the natural voice install-deps.sh --bench put in .build-voices (docs/voices.md).
mkdir -p "$XDG_CONFIG_HOME/a11yd"
printf '[piper]\nidle_unload_seconds = 5\n' >"$XDG_CONFIG_HOME/a11yd/a11yd.toml"
if [[ -d "$root/.build-voices/a11yd/voices" ]]; then
    export XDG_DATA_HOME="$root/.build-voices" XDG_DATA_DIRS=/nonexistent
fi
a11yd_socket="$XDG_RUNTIME_DIR/a11yd/socket"
# Its SSIP front end on a path of its own: speech-dispatcher holds the default one in this run.
a11yd_ssip_socket="$XDG_RUNTIME_DIR/a11yd/ssip.sock"
"$bin_dir/a11yd" --socket "$a11yd_socket" --ssip-socket "$a11yd_ssip_socket" >"$work/logs/a11yd.log" 2>&1 &
pids+=($!)
a11yd_pid=$!
wait_for 200 "$bin_dir/a11ysay" --socket "$a11yd_socket" --status || {
    echo "bench: a11yd did not start" >&2; cat "$work/logs/a11yd.log" >&2; exit 1; }

# 4. PipeWire's pulse server for the stop_pipewire part, as Sources/A11yTestSupport/PrivatePipeWireServer.swift
# runs it: its own runtime, home and configuration folders and session bus, the null sink one of PipeWire's
# own objects (a drop-in of its configuration), pipewire-pulse only once WirePlumber has chosen the default
# sink. WirePlumber watches no devices: no sound card, camera or Bluetooth headset of this machine's.
pipewire_args=()
pipewire_missing=""
for tool in pipewire wireplumber pipewire-pulse pw-metadata dbus-daemon; do
    command -v "$tool" >/dev/null || pipewire_missing+=" $tool"
done
if [[ "${BENCH_ONLY:-}" == stop_pipewire && -n "$pipewire_missing" ]]; then
    echo "bench: stop_pipewire needs$pipewire_missing" >&2; exit 1
fi
if [[ -z "$pipewire_missing" && ( -z "${BENCH_ONLY:-}" || "$BENCH_ONLY" == stop_pipewire ) ]]; then
    pw="$work/pipewire"
    mkdir -p "$pw/run" "$pw/daemons-run" "$pw/home" "$pw/config/pipewire/pipewire.conf.d" \
        "$pw/config/wireplumber/main.lua.d" "$pw/config/wireplumber/bluetooth.lua.d"
    chmod 700 "$pw/run" "$pw/daemons-run"
    cat >"$pw/config/pipewire/pipewire.conf.d/a11y-null-sink.conf" <<'CONF'
context.objects = [
    {   factory = adapter
        args = {
            factory.name = support.null-audio-sink
            node.name = nullsink
            node.description = "a11y bench null sink"
            media.class = Audio/Sink
            audio.rate = 48000
            audio.position = [ FL FR ]
            monitor.channel-volumes = true
            object.linger = true
        }
    }
]
CONF
    printf 'alsa_monitor.enabled = false\nv4l2_monitor.enabled = false\nlibcamera_monitor.enabled = false\n' \
        >"$pw/config/wireplumber/main.lua.d/51-a11y-bench-no-devices.lua"
    printf 'bluez_monitor.enabled = false\n' >"$pw/config/wireplumber/bluetooth.lua.d/51-a11y-bench-no-devices.lua"
    # The private PipeWire's world alone, no server or bus of the caller's (a command, not a function, so
    # that `$!` is the server itself, which cleanup stops).
    pw_env=(env -u PULSE_SERVER -u PIPEWIRE_REMOTE -u PIPEWIRE_RUNTIME_DIR -u DISPLAY -u WAYLAND_DISPLAY
            XDG_RUNTIME_DIR="$pw/run" HOME="$pw/home" XDG_CONFIG_HOME="$pw/config"
            XDG_STATE_HOME="$pw/home/.local/state" DBUS_SESSION_BUS_ADDRESS="unix:path=$pw/run/bus")
    pw_default_sink_chosen() { "${pw_env[@]}" timeout 5 pw-metadata -n default 0 default.audio.sink | grep -q '"nullsink"'; }
    pipewire_server="unix:$pw/run/pulse/native"
    pw_pulse_default_sink() { [[ "$(PULSE_SERVER="$pipewire_server" timeout 5 pactl get-default-sink)" == nullsink ]]; }
    pipewire_failed() { echo "bench: private PipeWire did not start ($1)" >&2; tail -n 20 "$work/logs/pipewire"*.log "$work/logs/wireplumber.log" >&2; exit 1; }
    "${pw_env[@]}" dbus-daemon --session --address="unix:path=$pw/run/bus" --nofork --nopidfile >"$work/logs/pipewire-dbus.log" 2>&1 &
    pids+=($!)
    wait_for 100 test -S "$pw/run/bus" || pipewire_failed "session bus"
    "${pw_env[@]}" pipewire >"$work/logs/pipewire.log" 2>&1 &
    pids+=($!)
    wait_for 200 test -S "$pw/run/pipewire-0" || pipewire_failed "pipewire's socket"
    "${pw_env[@]}" wireplumber >"$work/logs/wireplumber.log" 2>&1 &
    pids+=($!)
    wait_for 200 pw_default_sink_chosen || pipewire_failed "WirePlumber's default sink"
    "${pw_env[@]}" pipewire-pulse >"$work/logs/pipewire-pulse.log" 2>&1 &
    pids+=($!)
    wait_for 200 pw_pulse_default_sink || pipewire_failed "pipewire-pulse with nullsink as its default sink"

    # A second a11yd (JSON Lines only) and speech-dispatcher, the same configurations, playing to it, with
    # a runtime folder of their own (a11yd keeps the streams it ducked there: not shared with the first).
    pipewire_a11yd_socket="$pw/daemons-run/a11yd/socket"
    XDG_RUNTIME_DIR="$pw/daemons-run" PULSE_SERVER="$pipewire_server" "$bin_dir/a11yd" \
        --socket "$pipewire_a11yd_socket" --no-ssip >"$work/logs/a11yd-pipewire.log" 2>&1 &
    pids+=($!)
    wait_for 200 "$bin_dir/a11ysay" --socket "$pipewire_a11yd_socket" --status || {
        echo "bench: a11yd on PipeWire did not start" >&2; cat "$work/logs/a11yd-pipewire.log" >&2; exit 1; }
    pipewire_speechd_socket="$pw/daemons-run/speech-dispatcher/speechd.sock"
    mkdir -p "$(dirname "$pipewire_speechd_socket")" "$work/logs/speechd-pipewire"
    XDG_RUNTIME_DIR="$pw/daemons-run" PULSE_SERVER="$pipewire_server" speech-dispatcher -s -t 0 -C "$work/speechd-conf" \
        -L "$work/logs/speechd-pipewire" -P "$work/speechd-pipewire.pid" -c unix_socket -S "$pipewire_speechd_socket" \
        >"$work/logs/speechd-pipewire.out" 2>&1 &
    pids+=($!)
    pipewire_speechd_pid=$!
    wait_for 200 test -S "$pipewire_speechd_socket" || {
        echo "bench: speech-dispatcher on PipeWire did not start" >&2; cat "$work/logs/speechd-pipewire.out" >&2; exit 1; }
    speechd_module_pids+=" $(ps -o pid= --ppid "$pipewire_speechd_pid" 2>/dev/null || true)"
    pipewire_args=(--pipewire-server "$pipewire_server" --pipewire-a11yd-socket "$pipewire_a11yd_socket"
                   --pipewire-speechd-socket "$pipewire_speechd_socket")
fi

# 5. The measurements (bounded by their own timeouts).
mkdir -p "$here/out"
stamp="$(date +%Y%m%d-%H%M%S)"
out_base="$here/out/bench-$stamp"
timeout 1800 python3 "$here/bench.py" \
    --bin-dir "$bin_dir" --a11yd-pid "$a11yd_pid" --a11yd-socket "$a11yd_socket" --a11yd-ssip-socket "$a11yd_ssip_socket" \
    --speechd-pid "$speechd_pid" --speechd-socket "$speechd_socket" --pulse-pid "$pulse_pid" \
    --runs "${BENCH_RUNS:-20}" --control-runs "${BENCH_CONTROL_RUNS:-10}" \
    --utterances "${BENCH_UTTERANCES:-50}" --idle-seconds "${BENCH_IDLE_SECONDS:-10}" \
    --orca-blocks "${BENCH_ORCA_BLOCKS:-2}" --recorder-ms "${BENCH_RECORDER_MS:-1}" \
    ${BENCH_ONLY:+--only "$BENCH_ONLY"} "${pipewire_args[@]}" --out "$out_base"
echo "bench: written to $out_base.md (daemon logs in $out_base-logs/)" >&2
