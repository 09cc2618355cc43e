#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# make test's last step: the Debian package for real. Builds it (make deb: debhelper, lintian),
# installs it with apt-get, runs the live user-manager test against the installed files (a new
# user, nothing enabled by hand: LiveUserManagerTests with A11YD_LIVE_INSTALLED=1, which also
# removes the package under a running session), then purges it and checks that nothing is left.
# Only where it disturbs nothing: as root on a machine not booted with systemd (CI); elsewhere it
# says why it is skipped and touches nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

# In two halves for make test, which builds the package while its tests run and installs it after:
#   --would-run  only say whether it would run here (exit 0) or not (exit 1, and why), touching nothing
#   --build      only build and check the package (make deb), touching nothing of the machine's
#   --built      the rest, with the package --build made (dist/a11yd_*.deb)
# DEB_CONFIGURATION is the build make deb packages: release (the default, as `make deb`), or debug,
# which make test passes: its tests' own build, already made, so that the package costs no second
# build of everything. What this test checks is the packaging (debhelper's files, lintian, the
# maintainer scripts, the units enabled for every user, what a new user hears, removal, purge), which
# is the same for either build; the optimiser is `make bench`'s and the soak's to exercise.
would_run=0 build=1 install=1
case "${1:-}" in
    --would-run) would_run=1 ;;
    --build) install=0 ;;
    --built) build=0 ;;
    "") ;;
    *) echo "usage: $0 [--would-run | --build | --built]" >&2; exit 2 ;;
esac
skip() {
    [[ $would_run -eq 1 ]] && { echo "package test would be skipped: $*"; exit 1; }
    echo "package test skipped: $*"; exit 0
}
[[ $(id -u) -eq 0 ]] || skip "needs root (apt-get install, remove and purge of a11yd)"
[[ "$(cat /proc/1/comm)" != systemd ]] || skip "this machine was booted with systemd; CI (root, no systemd as PID 1) runs it"
[[ ! -e /run/systemd/system ]] || skip "/run/systemd/system exists although PID 1 is not systemd (another run's? remove it if nothing uses it)"
if dpkg-query -W -f='${Status}' a11yd 2>/dev/null | grep -q "ok installed"; then
    skip "a11yd is installed on this machine already; this test installs and purges its own"
fi
[[ $would_run -eq 0 ]] || exit 0

[[ $build -eq 0 ]] || make deb SWIFT="$SWIFT" CONFIGURATION="${DEB_CONFIGURATION:-release}"
[[ $install -eq 1 ]] || exit 0
deb=$(ls dist/a11yd_*.deb 2>/dev/null | head -1)
[[ -n $deb ]] || { echo "package test FAILED: no dist/a11yd_*.deb (--built installs what --build made)" >&2; exit 1; }
files=$(mktemp)
installed=0
cleanup() {
    if [[ $installed -eq 1 ]]; then
        apt-get purge -y -qq -o DPkg::Lock::Timeout=300 a11yd >/dev/null 2>&1 || dpkg --purge a11yd >/dev/null 2>&1 || true
    fi
    rm -f "$files"
}
trap cleanup EXIT
fail() { echo "package test FAILED: $*" >&2; exit 1; }

echo "installing $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "./$deb" >/dev/null
installed=1
dpkg-query -L a11yd >"$files"
# dh_installsystemduser's `systemctl --global enable`: every user's sockets.target wants both sockets.
for unit in a11yd.socket a11yd-ssip.socket; do
    [[ -L /etc/systemd/user/sockets.target.wants/$unit ]] || fail "$unit is not enabled for every user"
done

# The natural voice's installer, as a package user runs it: found on the PATH with its man page, it installs
# the packaged worker and the voice. The venv make test already made is lent to it (hard links), so that
# this step neither downloads piper-tts again nor changes what the other tests use.
command -v a11yd-install-voices >/dev/null || fail "a11yd-install-voices is not on the PATH"
man -w a11yd-install-voices >/dev/null 2>&1 || fail "a11yd-install-voices has no man page"
if [[ -x .build-voices/a11yd/piper/venv/bin/python3 ]]; then
    voices_home=$(mktemp -d)
    mkdir -p "$voices_home/a11yd/piper"
    cp -al .build-voices/a11yd/piper/venv "$voices_home/a11yd/piper/venv"
    a11yd-install-voices --data-dir "$voices_home/a11yd" || { rm -rf "$voices_home"; fail "a11yd-install-voices failed"; }
    cmp -s /usr/share/a11yd/piper/a11yd_piper_worker.py "$voices_home/a11yd/piper/a11yd_piper_worker.py" \
        && diff -r -x __pycache__ /usr/share/a11yd/piper/a11yd_piper "$voices_home/a11yd/piper/a11yd_piper" >/dev/null \
        || { rm -rf "$voices_home"; fail "a11yd-install-voices did not install the packaged worker and its package"; }
    [[ -s $voices_home/a11yd/voices/en_US-joe-medium.onnx && -s $voices_home/a11yd/voices/en_US-joe-medium.onnx.json ]] \
        || { rm -rf "$voices_home"; fail "a11yd-install-voices installed no voice"; }
    rm -rf "$voices_home"
    echo "a11yd-install-voices from the package installed the worker and the voice"
fi

# The built test binary itself, as scripts/test-lanes.sh runs it: `swift test --skip-build` would first
# plan the build and run an empty XCTest pass (6 s on a quiet machine, more beside the suites that run alone).
tests=$(ls -d "$("$SWIFT" build --show-bin-path)"/*PackageTests.xctest 2>/dev/null | head -1)
[[ -x $tests ]] || fail "no test binary: the tests are built first (make test builds them)"
log=$(mktemp)
NO_COLOR=1 A11YD_LIVE_INSTALLED=1 "$tests" --testing-library swift-testing --no-parallel \
    --filter '^A11yServiceTests\.LiveUserManagerTests/' 2>&1 | tee "$log"
ran=$(grep -cE 'Test run with [1-9][0-9]* tests? .*passed' "$log" || true)
rm -f "$log"
[[ $ran -eq 1 ]] || fail "LiveUserManagerTests did not run and pass against the installed package"

# The live test removed the package under a running session; purge must leave nothing of it.
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=300 a11yd >/dev/null
installed=0
dpkg-query -W -f='${Status}' a11yd 2>/dev/null | grep -q "installed" && fail "a11yd still installed after purge"
while read -r path; do
    [[ -d $path ]] && continue  # shared folders (/usr/bin…) stay
    [[ -e $path || -L $path ]] && fail "purge left $path"
done <"$files"
leftovers=$(find /etc/systemd/user /var/lib/systemd/deb-systemd-user-helper-enabled -name '*a11yd*' 2>/dev/null || true)
[[ -z $leftovers ]] || fail "purge left unit state: $leftovers"
echo "package test passed: $deb installed, heard by a new user with nothing enabled by hand, removed under a running session, purged"
