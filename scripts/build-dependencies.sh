#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the Swift packages a11yd depends on (swift-nio, swift-log, …: every product Package.swift
# names), with the flags given, into .build: what the build that follows would compile first, done
# while scripts/install-deps.sh waits for apt (none of it needs a system package but Swift's own).
# The build that follows finds them built, with the same flags, and compiles only a11yd's modules.
#
# One product at a time (SwiftPM builds one target per call, and one call at a time in a folder).
# SIGTERM means the wait it filled is over: the product under way is finished (the next build
# would need it first anyway), and no other is begun. Its failures change nothing: the next build
# builds what is missing.
#
# Usage: SWIFT=swift scripts/build-dependencies.sh [swift build flags…]
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
stop=0
trap 'stop=1' TERM
products=$("$SWIFT" package dump-package 2>/dev/null | awk '/"product" : \[/ { getline; gsub(/[ ",]/, ""); print }' | sort -u)
for product in $products; do
    [[ $stop -eq 0 ]] || break
    "$SWIFT" build --target "$product" "$@" >/dev/null 2>&1 &
    child=$!
    # A trapped SIGTERM interrupts `wait`; the product's build goes on to its end.
    until wait "$child"; status=$?; [[ $status -lt 128 ]] || ! kill -0 "$child" 2>/dev/null; do :; done
    [[ $status -eq 0 ]] && outcome="built" || outcome="failed to build (exit $status; the next build tries again)"
    echo "build-dependencies: $outcome $product$([[ $stop -eq 0 ]] || echo ', then stopped: the packages are installed')"
done
