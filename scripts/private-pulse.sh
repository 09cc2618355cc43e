#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Makes sure a PulseAudio server is reachable. If `pactl info` already works (a desktop session,
# PipeWire's pulse server, or PULSE_SERVER), does nothing. Otherwise starts a private, headless
# server with a null sink in $A11Y_PULSE_DIR (default /tmp/a11yd-pulse-$UID) and prints the
# line to export:  eval "$(scripts/private-pulse.sh)"
set -euo pipefail
if pactl info >/dev/null 2>&1; then
    exit 0
fi
dir="${A11Y_PULSE_DIR:-/tmp/a11yd-pulse-$(id -u)}"
mkdir -p "$dir/run" "$dir/home"
chmod 700 "$dir" "$dir/run"
cat >"$dir/server.pa" <<PA
load-module module-null-sink sink_name=nullsink rate=48000
set-default-sink nullsink
load-module module-native-protocol-unix auth-anonymous=1 socket=$dir/native
PA
if ! PULSE_SERVER="unix:$dir/native" pactl info >/dev/null 2>&1; then
    XDG_RUNTIME_DIR="$dir/run" HOME="$dir/home" nohup pulseaudio -n --file="$dir/server.pa" \
        --daemonize=no --exit-idle-time=-1 --use-pid-file=no >"$dir/pulseaudio.log" 2>&1 &
    for _ in $(seq 1 100); do
        PULSE_SERVER="unix:$dir/native" pactl info >/dev/null 2>&1 && break
        sleep 0.05
    done
    PULSE_SERVER="unix:$dir/native" pactl info >/dev/null 2>&1 || {
        echo "private PulseAudio did not start; see $dir/pulseaudio.log" >&2
        exit 1
    }
    echo "started a private PulseAudio (null sink) at unix:$dir/native" >&2
fi
echo "export PULSE_SERVER=unix:$dir/native"
