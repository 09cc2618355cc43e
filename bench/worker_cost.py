#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the engine worker costs: the same a11yd binary with synthesis in its sandboxed
worker process (the default) and in process (A11YD_ENGINE_IN_PROCESS=1), each started on a private
socket of its own, one after the other, measured alike:

- first sound on an open connection: a raw JSON Lines post of "bonjour" (fr) on a connection
  opened before, to the first |sample| > LOUD mixed by the null sink (target: ≤ 3 ms);
- idle memory: the sum of Pss (/proc/PID/smaps_rollup) of a11yd and every child of it (its worker),
  read after the warm-up and the first-sound runs, once quiet (target: ≤ 20 MiB for both together);
- idle wake-ups: voluntary + involuntary context switches of every thread of a11yd and its worker
  over an idle window (target: none of their own; libdispatch's monitor makes about one a second).

Used by bench.py (`measure(bench)`, rows in its report), or on its own against a running pulse
server with a null sink named "nullsink" (PULSE_SERVER set):

    python3 bench/worker_cost.py --bin-dir .build/release [--runs 20] [--idle-seconds 10]

Standard library + numpy, like bench.py; its recorder, client and /proc readings are instruments.py's, which
bench.py uses too.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import tempfile
import time

from instruments import (LOUD, A11ydClient, Recorder, children, comm, cpu, cpu_delta, log, memory, ms, never_said_rate,
                         now, stats)

MODES = (
    ("worker", {}),
    ("in process", {"A11YD_ENGINE_IN_PROCESS": "1"}),
)


def _wait_for_socket(path, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(path)
                return True
        except OSError:
            time.sleep(0.05)
    return False


def _pss_total(pids):
    rows = []
    for pid in pids:
        try:
            rows.append({"pid": pid, "comm": comm(pid), **memory(pid)})
        except OSError:
            pass
    return rows, sum(r.get("Pss") or 0 for r in rows)


def _one_mode(name, extra_env, bin_dir, rec, runs, idle_seconds, work):
    """Starts a11yd in `name` mode, measures it, stops it. Returns its results."""
    socket_path = os.path.join(work, f"{name.replace(' ', '-')}.sock")
    log_path = os.path.join(work, f"a11yd-{name.replace(' ', '-')}.log")
    env = {k: v for k, v in os.environ.items() if k != "A11YD_ENGINE_IN_PROCESS"}
    env.update(extra_env)
    with open(log_path, "w") as log_file:
        daemon = subprocess.Popen([f"{bin_dir}/a11yd", "--socket", socket_path, "--no-ssip"], env=env,
                                  stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file)
    try:
        if not _wait_for_socket(socket_path):
            raise RuntimeError(f"a11yd ({name}) did not start: {open(log_path).read()}")
        time.sleep(0.5)
        workers = children(daemon.pid)
        client = A11ydClient(socket_path)
        # Warm-up: the first utterance loads the voice and connects the stream.
        for _ in range(2):
            rec.settle(300)
            n0 = rec.count()
            client.post("bonjour")
            rec.wait_loud(n0, LOUD, 5)
            rec.wait_quiet(rec.count(), 300, 10)
        values = []
        for i in range(runs):
            rec.settle(300)
            n0 = rec.count()
            t0 = now()
            # Said by the engine every time, in both modes alike (not replayed from a11yd's memory).
            client.post("bonjour", rate=never_said_rate(i + 1))
            k = rec.wait_loud(n0, LOUD, 3)
            rec.wait_quiet(rec.count(), 300, 10)
            values.append(None if k is None else rec.time_of(k) - t0)
        log(f"worker cost, {name}: first sound", ", ".join(ms(v) for v in values))
        client.close()
        time.sleep(2)
        pids = [daemon.pid] + children(daemon.pid)
        rows, pss = _pss_total(pids)
        before = {p: cpu(p) for p in pids}
        t0 = now()
        time.sleep(idle_seconds)
        seconds = now() - t0
        after = {p: cpu(p) for p in pids if os.path.exists(f"/proc/{p}")}
        wakeups = {}
        for p in after:
            d = cpu_delta(before[p], after[p])
            wakeups[f"{comm(p)}[{p}]"] = {"voluntary": d["vol"], "nonvoluntary": d["nonvol"], "cpu_ms": d["run_ns"] / 1e6}
        return {
            "processes": len(pids), "workers_at_start": len(workers),
            "first_sound": {"values": values, **stats(values)},
            "memory": rows, "pss_total_kb": pss,
            "idle": {"seconds": seconds, "per_process": wakeups,
                     "context_switches": sum(w["voluntary"] + w["nonvoluntary"] for w in wakeups.values())},
        }
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait(5)


def measure(bench):
    """bench.py's hook: both modes on bench.rec (a flowing recorder); results in bench.results."""
    with tempfile.TemporaryDirectory(prefix="a11yd-worker-cost.", dir=os.environ.get("XDG_RUNTIME_DIR")) as work:
        results = {name: _one_mode(name, env, bench.bin, bench.rec, bench.a.runs, bench.a.idle_seconds, work)
                   for name, env in MODES}
    bench.results["worker_cost"] = results
    return results


def markdown(results, idle_seconds):
    """Rows for bench.py's report."""
    if not results:
        return []
    L = ["#### The engine worker's cost: the same a11yd, synthesis in its worker vs in process",
         "",
         f"First sound: raw JSON post of \"bonjour\" on an open connection, to the first |sample| > {LOUD}. "
         "PSS: a11yd plus its worker (sum of smaps_rollup Pss), idle after speaking. "
         f"Wake-ups: context switches of both over {idle_seconds:g} s idle. PSS divides each shared page among "
         "every process mapping it: within `make bench` the bench's own a11yd and its worker map the same binary "
         "meanwhile, so these PSS figures read lower than a lone a11yd's (`bench/worker_cost.py` alone gives those).",
         "",
         "| synthesis | first sound median ms | p90 ms | min ms | ok/runs | processes | PSS total MiB | "
         "idle ctx switches | per process |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, r in results.items():
        s = r["first_sound"]
        per = ", ".join(f"{k}: {v['voluntary']}+{v['nonvoluntary']}" for k, v in r["idle"]["per_process"].items())
        pss = ", ".join(f"{m['comm']} {(m.get('Pss') or 0) / 1024:.1f}" for m in r["memory"])
        L.append(f"| {name} | {ms(s.get('median'))} | {ms(s.get('p90'))} | {ms(s.get('min'))} | "
                 f"{s['n']}/{s['n'] + s['failed']} | {r['processes']} | {r['pss_total_kb'] / 1024:.1f} ({pss}) | "
                 f"{r['idle']['context_switches']} | {per} |")
    L.append("")
    return L


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", default=".build/release")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--idle-seconds", type=float, default=10)
    p.add_argument("--out")
    args = p.parse_args()
    bin_dir = os.path.abspath(args.bin_dir)
    rec = Recorder()
    try:
        if not rec.wait_flowing(2.5):
            raise SystemExit("worker_cost: the monitor recording does not flow (PULSE_SERVER with a nullsink?)")
        with tempfile.TemporaryDirectory(prefix="a11yd-worker-cost.") as work:
            os.chmod(work, 0o700)
            results = {name: _one_mode(name, env, bin_dir, rec, args.runs, args.idle_seconds, work) for name, env in MODES}
    finally:
        rec.close()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    print("\n".join(markdown(results, args.idle_seconds)))


if __name__ == "__main__":
    main()
