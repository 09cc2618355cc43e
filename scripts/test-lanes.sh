#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs the built test suite in parallel lanes: each lane is its own test process running whole
# top-level suites one after another (--no-parallel inside a lane, as before), the suites dealt to
# the lanes by their measured seconds (Tests/suite-times.tsv) so that the lanes end together. The
# tests mostly wait for speech to be heard, not for the CPU. Lanes share nothing by name: every
# sound server, daemon socket, runtime and config folder is a mkdtemp folder of its test, files
# named after a process carry its pid, Orca's Xvfb takes a free display (-displayfd) and Orca
# runs in PID namespaces of its own (it refuses to start beside another orca of its user), the
# live user-manager test makes a user of a random name; what is one per machine
# (/run/systemd/system, which only LiveUserManagerTests makes) is one suite's, in one lane.
#
#   scripts/test-lanes.sh [--lanes N] [--unit | --pure] [--record] [--plan] [--beside COMMAND] [--with COMMAND]... [--after COMMAND]...
#     --lanes N          N test processes (default $TEST_LANES, else 4)
#     --unit             only the suites Tests/suite-times.tsv marks `unit` or `pure` (no sound
#                        server, no daemon process), from the whole build: `make unit`
#     --pure             the pure build's test binary (.build-check, A11YD_PURE=1: Package.swift) and
#                        every suite it lists, which are the suites Tests/suite-times.tsv marks `pure`
#                        (it refuses to run if the two disagree): `make check`
#     --record           write the seconds each suite took in this run into Tests/suite-times.tsv
#     --plan             print which suites each lane would run, and run nothing (which suites shared
#                        a process with one that crashed in CI)
#     --beside COMMAND   run COMMAND (bash -c) meanwhile, only on the CPU the lanes leave (SCHED_IDLE,
#                        nice 19; as root, back to the usual priority once the lanes are done): work
#                        that needs the CPU the waiting lanes do not (make test: the package built
#                        and checked); its failure fails the run
#     --with COMMAND     run COMMAND (bash -c) beside the lanes as one more of them, at their priority,
#                        with its own log (make test: the natural voice's worker tests, which time its
#                        cancels and must not share the CPU with the natural voice's `alone` suites);
#                        its failure fails the run
#     --after COMMAND    once the lanes passed and the command beside is done, run COMMAND (bash -c)
#                        side by side with the suites that run alone, at their priority, and with the
#                        other commands --after names, each with its log (make test: the package
#                        installed and heard); its failure fails the run
#
# Every test `--list-tests` names runs exactly once: the script refuses to start if a suite is in no
# lane or in two, and fails if the lanes together ran another number of tests than were listed.
# Each lane writes .build/test-lanes/laneN.log (and .xml; .build-check/test-lanes with --pure); the log
# of a lane that failed is printed at the end. Needs the tests built first (the Makefile's TEST_BUILD,
# or CHECK_BUILD for --pure).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
lanes=${TEST_LANES:-4}
unit=0 pure=0 record=0 plan_only=0 beside="" with=() after=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --lanes) lanes="$2"; shift 2 ;;
        --unit) unit=1; shift ;;
        --pure) pure=1; shift ;;
        --record) record=1; shift ;;
        --plan) plan_only=1; shift ;;
        --beside) beside="$2"; shift 2 ;;
        --with) with+=("$2"); shift 2 ;;
        --after) after+=("$2"); shift 2 ;;
        *) echo "usage: $0 [--lanes N] [--unit | --pure] [--record] [--plan] [--beside COMMAND] [--with COMMAND]... [--after COMMAND]..." >&2; exit 2 ;;
    esac
done
[[ $lanes =~ ^[1-9][0-9]*$ ]] || { echo "--lanes takes a number, not '$lanes'" >&2; exit 2; }
[[ $unit -eq 0 || $pure -eq 0 ]] || { echo "--unit or --pure, not both" >&2; exit 2; }
times_file=Tests/suite-times.tsv
# What --unit takes from the times file: the pure suites are unit suites too.
kinds="unit pure"
logs=.build/test-lanes
if [[ $pure -eq 1 ]]; then
    kinds=pure unit=1 logs=.build-check/test-lanes
fi

# The test binary itself, not `swift test`: SwiftPM holds the lock on .build while tests run, so two
# `swift test` processes (or a build beside them) would wait for each other. The pure build's is where
# its scratch path says (asking SwiftPM would evaluate the manifest again: a second of make check's).
if [[ $pure -eq 1 ]]; then bin=.build-check/debug; else bin=$("$SWIFT" build --show-bin-path); fi
tests=$(ls -d "$bin"/*PackageTests.xctest 2>/dev/null | head -1)
[[ -x $tests ]] || { echo "no test binary in $bin: run 'make $([[ $pure -eq 1 ]] && echo check || echo unit)' first" >&2; exit 1; }

listed=$(mktemp)
declare -A pids
beside_pid="" ticker_pid="" with_pids=() after_pids=() alone_pids=()
# Interrupted: the lanes (and the command beside them) still running are stopped too, by their ids.
trap 'for pid in "${pids[@]}" $ticker_pid "${with_pids[@]}" "${alone_pids[@]}" "${after_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
      [[ -z $beside_pid ]] || kill -- "-$beside_pid" 2>/dev/null || true; rm -f "$listed"' EXIT
"$tests" --testing-library swift-testing --list-tests >"$listed"
[[ -s $listed ]] || { echo "the test binary listed no tests" >&2; exit 1; }
# A test's ID is Module.Suite/…/test(): a lane takes whole top-level suites, Module.Suite.
if grep -qv '^[A-Za-z0-9_]*\.[A-Za-z0-9_]*/' "$listed"; then
    echo "tests outside a suite (a lane takes whole suites; put them in one):" >&2
    grep -v '^[A-Za-z0-9_]*\.[A-Za-z0-9_]*/' "$listed" >&2
    exit 1
fi

# Deal the suites, longest first, each to the lane with the fewest seconds so far. A suite missing
# from the times file counts 10 s until --record measures it; one the file marks `unit` or `pure` is
# the only kind --unit runs, `pure` the only kind --pure runs.
if [[ $pure -eq 1 ]]; then
    # The pure build's suites are the ones the times file marks `pure`, no more, no fewer.
    built=$(cut -d/ -f1 "$listed" | sort -u)
    marked=$(awk -F'\t' '!/^#/ && $3 == "pure" { print $1 }' "$times_file" | sort -u)
    unmarked=$(comm -23 <(echo "$built") <(echo "$marked"))
    unbuilt=$(comm -13 <(echo "$built") <(echo "$marked"))
    [[ -z $unmarked ]] || printf 'in the pure build but not marked pure in %s:\n%s\n' "$times_file" "$unmarked" >&2
    [[ -z $unbuilt ]] || printf 'marked pure in %s but not in the pure build (Package.swift, A11YD_PURE):\n%s\n' "$times_file" "$unbuilt" >&2
    [[ -z $unmarked && -z $unbuilt ]] || { echo "nothing run" >&2; exit 1; }
fi
plan=$(cut -d/ -f1 "$listed" | sort | uniq -c | awk -v lanes="$lanes" -v unit="$unit" -v kinds="$kinds" -v file="$times_file" '
    BEGIN {
        split(kinds, k, " "); for (i in k) taken[k[i]] = 1
        while ((getline line < file) > 0) {
            if (line ~ /^#/ || line == "") continue
            split(line, f, "\t"); seconds[f[1]] = f[2]; kind[f[1]] = f[3]
        }
    }
    {
        suite = $2
        if (unit && !(kind[suite] in taken)) next
        if (kind[suite] == "alone") next
        t = (suite in seconds) ? seconds[suite] : 10
        if (!(suite in seconds)) printf "note: %s has no measured time in %s (counted as 10 s)\n", suite, file > "/dev/stderr"
        n++; name[n] = suite; cost[n] = t; count[n] = $1
    }
    END {
        # Longest first (insertion sort: a few dozen suites).
        for (i = 2; i <= n; i++) for (j = i; j > 1 && cost[j] > cost[j-1]; j--) {
            t = cost[j]; cost[j] = cost[j-1]; cost[j-1] = t
            t = name[j]; name[j] = name[j-1]; name[j-1] = t
            t = count[j]; count[j] = count[j-1]; count[j-1] = t
        }
        for (i = 1; i <= n; i++) {
            best = 1
            for (l = 2; l <= lanes; l++) if (load[l] < load[best]) best = l
            load[best] += cost[i]; tests[best] += count[i]
            suites[best] = suites[best] (suites[best] == "" ? "" : " ") name[i]
        }
        for (l = 1; l <= lanes; l++) if (suites[l] != "") printf "%d\t%.0f\t%d\t%s\n", l, load[l], tests[l], suites[l]
    }')
[[ -n $plan ]] || { echo "no suite to run" >&2; exit 1; }

# Each lane's filter: its suites, as the start of the IDs of their tests. The slash matters twice:
# DaemonTests must not take SSIPDaemonTests' tests, and a suite without @Suite (a struct that only
# holds tests) is never matched by its own ID, only its tests are.
declare -a filters expected
while IFS=$'\t' read -r lane _ count suites; do
    filters[lane]="^($(sed 's/\./\\./g; s/ /|/g' <<<"$suites"))/"
    expected[lane]=$count
done <<<"$plan"

# Every listed test in exactly one lane (checked with the filters themselves), or nothing runs.
wanted=$(mktemp) taken=$(mktemp)
# Suites marked `alone` run after the lanes, each in its own process, on a machine the lanes no longer load.
alone=$(awk -F'\t' '!/^#/ && $3 == "alone" { print $1 }' "$times_file" | sort -u)
if [[ $unit -eq 1 ]]; then
    awk -F'\t' -v kinds="$kinds" 'BEGIN { split(kinds, k, " "); for (i in k) taken[k[i]] = 1 }
        NR == FNR { if ($3 in taken) u[$1] = 1; next } { split($0, p, "/") } (p[1] in u)' "$times_file" "$listed" >"$wanted"
    alone=""
else
    awk -F'\t' 'NR == FNR { if ($3 == "alone") a[$1] = 1; next } { split($0, p, "/") } !(p[1] in a)' "$times_file" "$listed" >"$wanted"
fi
for lane in "${!filters[@]}"; do grep -E "${filters[lane]}" "$listed" || true; done | sort >"$taken"
missing=$(sort "$wanted" | comm -23 - "$taken")
twice=$(uniq -d "$taken")
extra=$(sort -u "$taken" | comm -13 <(sort "$wanted") -)
rm -f "$wanted" "$taken"
if [[ -n $missing || -n $twice || -n $extra ]]; then
    [[ -z $missing ]] || printf 'in no lane:\n%s\n' "$missing" >&2
    [[ -z $twice ]] || printf 'in two lanes or more:\n%s\n' "$twice" >&2
    [[ -z $extra ]] || printf 'in a lane but not wanted:\n%s\n' "$extra" >&2
    echo "the lanes do not run every test exactly once: nothing run" >&2
    exit 1
fi
total=0
for lane in "${!expected[@]}"; do total=$((total + expected[lane])); done

# What a lane that crashed was doing, for the last lines of the run (all a CI report may show): the
# runtime's message, the crashed thread's frames, and the tests started and never ended.
crash_summary() {
    awk '
        /^◇ Test (case passing|run started)/ { next }
        /^◇ Test .* started\.$/ { name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name); running[name] = 1; next }
        /^[^ ]+ Test .* (passed|failed|skipped)/ { name = $0; sub(/^[^ ]+ Test /, "", name); sub(/( with [0-9]+ test cases?)? (passed|failed|skipped).*/, "", name); delete running[name]; next }
        /Fatal error|Assertion failed|Assertion .* failed|Program crashed|Backtracing from/ { print; next }
        / crashed:$/ { inthread = 1; blanks = 0; print; next }
        inthread && /^$/ { blanks++; if (blanks == 2) inthread = 0; next }
        inthread && blanks == 1 { print }
        END { for (name in running) print "running when it ended: " name }
    ' "$1"
}
print_plan() {
    echo "$total tests in ${#filters[@]} lanes (logs: $logs/laneN.log):"
    while IFS=$'\t' read -r lane seconds count suites; do
        echo "  lane $lane: $count tests, ~${seconds} s: $suites"
    done <<<"$plan"
    [[ -z $alone ]] || echo "then alone: $(paste -sd' ' <<<"$alone")"
}
if [[ $plan_only -eq 1 ]]; then print_plan; exit 0; fi
rm -rf "$logs" && mkdir -p "$logs"
print_plan

start=$SECONDS began=$(date +%s)
if [[ -n $beside ]]; then
    echo "beside the lanes (SCHED_IDLE, log: $logs/beside.log): $beside"
    # Only on CPU time nothing else wants (a waking test preempts it at once), and in a process
    # group of its own, so that an interruption stops all of it (make, swift, dpkg…).
    idle=(chrt --idle 0 nice -n 19)
    "${idle[@]}" true 2>/dev/null || idle=(nice -n 19)
    setsid "${idle[@]}" bash -c 'bash -c "$1" >"$2/beside.log" 2>&1; status=$?; date +%s >"$2/beside.end"; exit $status' \
        beside "$beside" "$logs" &
    beside_pid=$!
fi
# Where it may (root), a lane runs at nice -5: the tests measure sound in milliseconds, so when
# they want the CPU they get it before the builds of the same machine (someone else's make, or
# the package beside the lanes); they want little of it, mostly waiting for speech to be heard.
priority=()
[[ $(id -u) -ne 0 ]] || priority=(nice -n "${TEST_LANES_NICE:--5}")
# A crash prints the crashed thread in full and no registers or images, so that it fits the end of a report
# (not `enable=yes`: a static a11ysay run by a test would then warn on stderr that it cannot backtrace).
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-registers=none,images=none}
for lane in "${!filters[@]}"; do
    NO_COLOR=1 "${priority[@]}" "$tests" --testing-library swift-testing --no-parallel --filter "${filters[lane]}" \
        --xunit-output "$logs/lane$lane.xml" >"$logs/lane$lane.log" 2>&1 &
    pids[$lane]=$!
done
for index in "${!with[@]}"; do
    echo "with the lanes (log: $logs/with$index.log): ${with[index]}"
    "${priority[@]}" bash -c "${with[index]}" >"$logs/with$index.log" 2>&1 &
    with_pids[index]=$!
done
# Every minute, how far each lane is.
(
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    while :; do
        sleep 60 >/dev/null 2>&1 &
        nap=$!
        wait "$nap"
        line="  … $((SECONDS - start)) s:"
        for lane in "${!filters[@]}"; do
            line+=" lane $lane $(grep -cE '^[^ ]+ Test .* after [0-9.]+ seconds' "$logs/lane$lane.log" || true)/${expected[lane]}"
        done
        echo "$line"
    done
) &
ticker_pid=$!
# How a test process (LABEL, its log, its exit status, the tests it was to run) ended, said on one line;
# it failed (status 1) unless it passed and ran exactly those tests (a filter that matched fewer passes).
report_run() {
    local label=$1 log=$2 status=$3 expected=$4 summary ran
    summary=$(grep -E '^[^ ]+ Test run with' "$log" | tail -1 || true)
    ran=$(sed -nE 's/^[^ ]+ Test run with ([0-9]+) tests?.*/\1/p' <<<"$summary")
    if [[ $status -eq 0 && $ran != "$expected" ]]; then
        echo "$label ran ${ran:-no} tests, $expected expected" >>"$log"
        status=1
    fi
    printf '%s %s after %d s: %s\n' "$label" "$([[ $status -eq 0 ]] && echo passed || echo FAILED)" \
        $((SECONDS - start)) "${summary:-exit status $status, no summary}"
    return "$status"
}
# Lanes that fail, in the order they end.
failed=()
remaining=${#pids[@]}
while [[ $remaining -gt 0 ]]; do
    status=0
    wait -n -p ended "${pids[@]}" || status=$?
    for lane in "${!pids[@]}"; do
        [[ ${pids[$lane]} == "$ended" ]] || continue
        report_run "lane $lane" "$logs/lane$lane.log" "$status" "${expected[lane]}" || failed+=("$lane")
        unset "pids[$lane]"
    done
    remaining=${#pids[@]}
done

kill "$ticker_pid" 2>/dev/null || true
ticker_pid=""
echo "lanes took $((SECONDS - start)) s"
# Waits for a command run --with or --after the lanes (KIND, its index, its pid, its command) and says
# how it ended, its log printed if it failed (and always with --show-log); its failure fails the run.
await_command() {
    local kind=$1 index=$2 pid=$3 command=$4 show=${5:-} status=0
    wait "$pid" || status=$?
    if [[ $status -eq 0 ]]; then
        [[ -z $show ]] || cat "$logs/$kind$index.log"
        echo "$kind the lanes, done after $((SECONDS - start)) s: $command"
    else
        echo
        echo "======== $kind the lanes FAILED (exit status $status): $command ========"
        cat "$logs/$kind$index.log"
        failed+=("$kind")
    fi
}
for index in "${!with_pids[@]}"; do await_command with "$index" "${with_pids[index]}" "${with[index]}"; done
with_pids=()
# The suites that must not share the CPU with the lanes (a natural voice synthesising slower than it
# plays under three lanes and a release build: Tests/suite-times.tsv marks them `alone`): after the
# lanes, each in a process of its own, side by side (suites that mostly wait for speech to be
# heard, on a machine the lanes no longer load; what runs after, beside them, is light: make test's
# package installed and heard. The natural voice's worker tests, which synthesise all along, run
# with the lanes instead: beside these, three syntheses on two cores told a word late, once).
if [[ -n $alone && ${#failed[@]} -eq 0 ]]; then
    echo "after the lanes, alone: $(paste -sd' ' <<<"$alone")"
    alone_names=() alone_counts=()
    index=0
    while read -r suite; do
        filter="^$(sed 's/\./\\./g' <<<"$suite")/"
        alone_names+=("$suite")
        alone_counts+=("$(grep -cE "$filter" "$listed" || true)")
        NO_COLOR=1 "${priority[@]}" "$tests" --testing-library swift-testing --no-parallel --filter "$filter" \
            --xunit-output "$logs/lanealone$index.xml" >"$logs/lanealone$index.log" 2>&1 &
        alone_pids+=($!)
        index=$((index + 1))
    done <<<"$alone"
fi
if [[ -n $beside_pid ]]; then
    if kill -0 "$beside_pid" 2>/dev/null && [[ $(id -u) -eq 0 ]]; then
        # The lanes no longer want the CPU: what is left of the command beside takes its fair share
        # again (only root may raise a priority back), as the builds of the same machine do.
        echo "the lanes are done: the rest of the command beside them at the usual priority"
        for _ in 1 2; do
            for pid in $(pgrep -g "$beside_pid"); do
                chrt --other -p 0 "$pid" 2>/dev/null || true
                renice -n 0 -p "$pid" >/dev/null 2>&1 || true
            done
        done
    fi
    status=0
    wait "$beside_pid" || status=$?
    beside_pid=""
    if [[ $status -eq 0 ]]; then
        echo "beside the lanes, done after $(($(cat "$logs/beside.end") - began)) s: $beside"
    else
        echo
        echo "======== beside the lanes FAILED (exit status $status): $beside ========"
        cat "$logs/beside.log"
        failed+=(beside)
    fi
fi
# What comes after the lanes and the command beside (make test: the package installed and heard), side by
# side with each other and with the suites that run alone, which do not wait for the command beside; at
# their priority, as a test should be (the package's test takes 35 s alone and 68-74 s beside them, at
# nice 0 or at theirs: the two cores are what it waits for).
if [[ ${#failed[@]} -eq 0 ]]; then
    for index in "${!after[@]}"; do
        echo "after the lanes (log: $logs/after$index.log): ${after[index]}"
        "${priority[@]}" bash -c "${after[index]}" >"$logs/after$index.log" 2>&1 &
        after_pids[index]=$!
    done
fi
for index in "${!alone_pids[@]}"; do
    status=0
    wait "${alone_pids[index]}" || status=$?
    report_run "alone ${alone_names[index]}" "$logs/lanealone$index.log" "$status" "${alone_counts[index]}" || failed+=("alone$index")
done

for index in "${!after_pids[@]}"; do await_command after "$index" "${after_pids[index]}" "${after[index]}" --show-log; done
after_pids=()
if [[ $record -eq 1 ]]; then
    # Seconds per top-level suite from the lanes' xUnit reports, replacing what the file said of
    # those suites; the others stay (a --unit run records the unit suites), unless no longer listed.
    recorded=$(mktemp)
    cut -d/ -f1 "$listed" | sort -u | awk -F'\t' '
        FILENAME == "-" { listed[$1] = 1; next }
        FILENAME ~ /\.xml$/ {
            if ($0 !~ /<testcase /) next
            match($0, /classname="[^"]*"/); c = substr($0, RSTART + 11, RLENGTH - 12)
            split(c, p, "."); suite = p[1] "." p[2]
            match($0, /time="[^"]*"/); measured[suite] += substr($0, RSTART + 6, RLENGTH - 7)
            next
        }
        /^#/ { print > "/dev/stderr"; next }
        { seconds[$1] = $2; kind[$1] = $3 }
        END {
            for (suite in measured) seconds[suite] = sprintf("%.3f", measured[suite])
            for (suite in seconds) if (suite in listed)
                printf "%s\t%s\t%s\n", suite, seconds[suite], (kind[suite] == "" ? "sound" : kind[suite])
        }' - "$logs"/lane*.xml "$times_file" 2>"$recorded.head" | sort -t$'\t' -k2,2gr -k1,1 >"$recorded"
    cat "$recorded.head" "$recorded" >"$times_file"
    rm -f "$recorded" "$recorded.head"
    echo "recorded each suite's seconds in $times_file"
fi

if [[ ${#failed[@]} -gt 0 ]]; then
    for lane in "${failed[@]}"; do
        [[ $lane == beside || $lane == with || $lane == after ]] && continue
        echo
        echo "======== lane $lane FAILED: $logs/lane$lane.log ========"
        cat "$logs/lane$lane.log"
    done
    echo
    for lane in "${failed[@]}"; do
        [[ $lane == beside || $lane == with || $lane == after ]] && continue
        grep -hE '^([^ ]+ Test .* recorded an issue|lane [0-9]+ ran)' "$logs/lane$lane.log" | sed "s/^/lane $lane: /" || true
        crash_summary "$logs/lane$lane.log" | sed "s/^/lane $lane: /"
    done
    echo "failed: $(printf '%s ' "${failed[@]}" | sed -E 's/(^| )([0-9]+)/\1lane \2/g')(logs in $logs)"
    exit 1
fi
