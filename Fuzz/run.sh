#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Replays the inputs that once failed (Fuzz/regressions/NAME), runs each fuzzer for FUZZ_SECONDS
# on its corpus (Fuzz/corpus/NAME, new finds added), then minimises the corpus again (-merge=1).
# A crash or broken invariant stops that target, leaves the input in Fuzz/artifacts/ and makes the
# whole run fail (after the other targets ran).
# Usage: Fuzz/run.sh [NAME...]   (default: every target). See docs/fuzzing.md.
set -u
cd "$(dirname "$0")"
BIN=${FUZZ_BIN:-.build/release}
SECONDS_EACH=${FUZZ_SECONDS:-240}
# Each target's longest input: a JSON line or SSIP exchange with room for a few lines, a
# document, one IPA word or phrase, a text to speak (synthesis costs milliseconds per input), a
# configuration file (the documented one, config/a11yd.toml, is 5.4 KB).
max_len() {
    case $1 in
        lines) echo 1024 ;; ssip) echo 1024 ;; ssml) echo 2048 ;; ipa) echo 128 ;; render) echo 384 ;; frames) echo 4096 ;; toml) echo 8192 ;;
    esac
}
# The Swift runtime's backtracer would otherwise try to symbolicate each crash (minutes here).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:handle_abort=1}
mkdir -p artifacts
status=0
for name in ${*:-lines ssml ipa ssip render frames toml}; do
    fuzzer="$BIN/fuzz-$name"
    corpus="corpus/$name"
    mkdir -p "$corpus"
    dict=""
    [ -f "dictionaries/$name.dict" ] && dict="-dict=dictionaries/$name.dict"
    # Seeds (Fuzz/seeds.py) join the corpus only if they add coverage.
    if [ -d "seeds/$name" ]; then
        "$fuzzer" -merge=1 -max_len="$(max_len "$name")" $dict "$corpus" "seeds/$name" >"artifacts/$name-merge.log" 2>&1 || true
    fi
    # Every input that once failed (Fuzz/regressions/NAME) must pass before new ones are sought.
    if [ -d "regressions/$name" ] && ! "$fuzzer" regressions/"$name"/* >"artifacts/$name-regressions.log" 2>&1; then
        echo "fuzz-$name: a regression input fails again (artifacts/$name-regressions.log)"
        status=1
    fi
    echo "== fuzz-$name: $SECONDS_EACH s, max_len $(max_len "$name")"
    "$fuzzer" "$corpus" $dict -max_len="$(max_len "$name")" -max_total_time="$SECONDS_EACH" -timeout=20 \
        -rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix="artifacts/$name-" >"artifacts/$name.log" 2>&1
    result=$?
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|stat::peak_rss_mb' "artifacts/$name.log" | tail -4
    if [ $result -ne 0 ]; then
        echo "fuzz-$name FAILED (exit $result):"
        grep -E 'INVARIANT BROKEN|Fatal error|ERROR: AddressSanitizer|SUMMARY|Test unit written' "artifacts/$name.log" | head -8
        status=1
    fi
    # Keep the committed corpus small: the fewest inputs that reach every edge reached (without
    # -use_counters=0, every hit-count bucket of every edge: four times as many files).
    rm -rf "$corpus.min" && mkdir -p "$corpus.min"
    if "$fuzzer" -merge=1 -use_counters=0 -max_len="$(max_len "$name")" "$corpus.min" "$corpus" >>"artifacts/$name-merge.log" 2>&1; then
        rm -rf "$corpus" && mv "$corpus.min" "$corpus"
    else
        rm -rf "$corpus.min"
    fi
    echo "   corpus: $(ls "$corpus" | wc -l) inputs"
done
exit $status
