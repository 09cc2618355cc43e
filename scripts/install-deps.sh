#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the Debian packages a11yd needs to build, run and test (through sudo when not root).
# Usage: scripts/install-deps.sh [--test] [--bench]
#   --test adds the real clients the tests drive (spd-say, python3-speechd, Orca on Xvfb) and PipeWire's
#          pulse server, which the tests and make soak run beside PulseAudio;
#   --bench adds the incumbents measured by `make bench`;
#   --deb adds what `make deb` builds and checks the Debian package with;
#   --no-voices: the packages only, not the natural voice (`make test` installs it beside its build);
#   --beside CMD runs CMD (through bash) while apt installs what is missing, then sends it SIGTERM and
#          waits for it (make test: scripts/build-dependencies.sh); nothing missing, it is not run.
# --test includes --deb and what the live user-manager test runs (a user's systemd --user with its
# session bus from dbus-user-session): `make test` builds, installs and purges the package; zsh, fish and
# groff check the completion scripts and the man page a11ysay generates. --test also installs the natural
# voice (scripts/install-voices.sh: Piper in a venv, the worker, en_US-joe-medium) into the repository's
# .build-voices/a11yd, where the Piper tests look for it (they compare its loudness with the espeak-ng CLI's).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
voices=
# libc6-dev and libstdc++-12-dev: the static libc.a and libstdc++.a a11ysay is linked with (Swift needs them anyway).
# libcld2-dev and libexttextcat-dev (with libexttextcat-data's fingerprints): the language detector.
packages=(libespeak-ng-dev libpulse-dev libseccomp-dev libcld2-dev libexttextcat-dev libexttextcat-data pulseaudio pulseaudio-utils systemd libc6-dev libstdc++-12-dev)
# libsonic0: the Piper worker's time-stretch past its model's speed (libespeak-ng1 already depends on it).
packages+=(libsonic0)
beside=
no_voices=
while [[ $# -gt 0 ]]; do
    option=$1
    shift
    case "$option" in
        --test) packages+=(speech-dispatcher python3 python3-speechd orca xvfb xdotool at-spi2-core dbus dbus-x11
                          python3-gi gir1.2-gtk-3.0 util-linux pipewire pipewire-pulse wireplumber
                          dbus-user-session passwd debhelper lintian dpkg-dev
                          zsh fish groff-base python3-venv espeak-ng
                          speech-dispatcher-espeak-ng sox)  # the loudness tests' speech-dispatcher; orca-ssip-test.sh's meter
                voices=yes ;;
        --deb) packages+=(debhelper lintian dpkg-dev) ;;
        --bench) packages+=(espeak-ng speech-dispatcher speech-dispatcher-espeak-ng sox valgrind
                           orca xvfb xdotool at-spi2-core dbus python3-gi gir1.2-gtk-3.0 libxtst6  # bench/orca_echo.py
                           python3-venv python3-numpy)  # bench.py's and orca_echo.py's arrays
                 voices=yes ;;  # the natural voice's rows
        --no-voices) no_voices=yes ;;
        --beside) [[ $# -gt 0 ]] || { echo "--beside needs a command" >&2; exit 2; }
                  beside=$1; shift ;;
        *) echo "unknown option $option" >&2; exit 2 ;;
    esac
done
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    echo "installing: ${missing[*]}" >&2
    # What waits for nothing apt brings (make test: the Swift packages' build) runs meanwhile, and
    # is told to end (SIGTERM) once apt is done.
    beside_pid=
    if [[ -n $beside ]]; then
        echo "beside apt: $beside" >&2
        bash -c "exec $beside" &
        beside_pid=$!
    fi
    status=0
    { $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
        status=$?
    if [[ -n $beside_pid ]]; then
        kill -TERM "$beside_pid" 2>/dev/null || true
        wait "$beside_pid" || true
    fi
    [[ $status -eq 0 ]] || exit "$status"
fi
[[ -z $no_voices ]] || voices=
if [[ -n $voices ]]; then
    "$repo/scripts/install-voices.sh" --data-dir "$repo/.build-voices/a11yd"
fi
