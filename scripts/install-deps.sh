#!/usr/bin/env bash
# Installs the Debian packages a11yd needs to build, run and test (through sudo when not root).
# Usage: scripts/install-deps.sh [--bench]   (--bench adds the incumbents measured by `make bench`)
set -euo pipefail
packages=(libespeak-ng-dev libpulse-dev pulseaudio pulseaudio-utils systemd)
if [[ "${1:-}" == "--bench" ]]; then
    packages+=(espeak-ng speech-dispatcher speech-dispatcher-espeak-ng sox valgrind)
fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
