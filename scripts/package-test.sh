#!/usr/bin/env bash
# make test's last step: the Debian package for real. Builds it (make deb: debhelper, lintian),
# installs it with apt-get, runs the live user-manager test against the installed files (a new
# user, nothing enabled by hand: LiveUserManagerTests with A11YD_LIVE_INSTALLED=1, which also
# removes the package under a running session), then purges it and checks that nothing is left.
# Only where it disturbs nothing: as root on a machine not booted with systemd (CI); elsewhere it
# says why it is skipped and touches nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

# --would-run: only say whether it would run here (exit 0) or not (exit 1, and why), touching nothing:
# make test builds the release products beside the test lanes only when this test will use them.
would_run=0
[[ ${1:-} == --would-run ]] && would_run=1
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

make deb SWIFT="$SWIFT"
deb=$(ls dist/a11yd_*.deb)
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

A11YD_LIVE_INSTALLED=1 "$SWIFT" test --skip-build --no-parallel --filter LiveUserManagerTests

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
