#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Measurements for bench/run.sh (standard library + numpy).

Sound is detected by recording the null sink's monitor with parec (1 ms fragments by default, which also
sets the sink's latency: it mixes 1 ms at once; see Recorder), s16le mono 48 kHz. Each read is
timestamped with time.monotonic(); the moment a sample was mixed is estimated from the lower envelope of
(read time - samples still behind it in the read), i.e. with the smallest transport delay seen around
it. Latencies are that moment minus the monotonic time just before the command was issued (before
fork/exec for CLIs, before connect+send for the raw socket clients).
"""
import argparse
import itertools
import json
import math
import os
import re
import queue
import socket
import statistics
import subprocess
import time

import numpy as np

import orca_echo
import worker_cost
from instruments import (LOUD, QUIET, RATE, RECORDER_MS, A11ydClient, Recorder, SSIPClient, children, comm, cpu,
                         cpu_delta, log, memory, ms, never_said_rate, now, post_request, request_line, stats)

SILENCE = 0          # |sample| at or below this is silence where a cut ends: digital silence, where a ramp ends
CLICK = 1460         # a last millisecond before a cut's silence peaking at or above this clicks (-27 dBFS)
INTERRUPT_LOUD = 5000  # above the quiet background item (peaks ~2600), reached early by a full-volume item
LONG_TEXT = ("voici une longue phrase sans point qui continue de parler, avec des virgules, "
             "des mots et encore des mots, pour que la parole dure plusieurs secondes, "
             "et encore quelques mots, puis quelques autres, jusqu'à ce qu'on l'arrête")


# ---------------------------------------------------------------------------------------------
def run_cli(argv, env=None):
    """Starts a CLI without waiting (its start-up is part of what is measured)."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env)


REQUEST_ARRIVAL = 'a11ysay "bonjour": start → its request at the socket'
FIRST_HEARING = "a11yd: raw socket, never said before"
PROCESS_START = "true (a process start from here, for scale)"


def post_on_fresh_connection(path, text):
    """Connects and posts, as a client process does after it started (the connection is returned, to be
    closed once the sound is heard: closing it earlier would end the conversation)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(request_line(post_request(text)))
    return s


def reap(procs, timeout=10):
    for p in procs:
        if p is None:
            continue
        if isinstance(p, socket.socket):
            p.close()
            continue
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(3)


def cut_stats(peaks):
    """The last millisecond before each cut's silence: median and worst peak, and how many clicked."""
    if not peaks:
        return {"last_ms_peaks": []}
    return {"last_ms_peaks": peaks, "last_ms_median": int(statistics.median(peaks)), "last_ms_max": max(peaks),
            "clicks": sum(p >= CLICK for p in peaks)}


def link_order_coverage(binary):
    """How much of Sources/a11yd/a11yd.order (`make order-file`) this a11yd still defines: names missing are
    code that changed since the order was made, laid out anywhere, costing resident memory."""
    order = os.path.join(os.path.dirname(__file__), "..", "Sources", "a11yd", "a11yd.order")
    try:
        names = open(order).read().split()
        listing = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    defined = {parts[2] for parts in (line.split() for line in listing.splitlines()) if len(parts) == 3}
    return {"names": len(names), "found": sum(1 for n in names if n in defined)}


# ---------------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args):
        self.a = args
        self.bin = args.bin_dir
        self.results = {"first_sound": {}, "interrupt": {}, "stop": {}, "memory": {}, "idle": {},
                        "throughput": {}, "notes": []}
        self.rec = None
        # spd-say pointed at a11yd's SSIP front end (speech-dispatcher keeps the default path).
        self.a11yd_ssip_env = dict(os.environ, SPEECHD_ADDRESS="unix_socket:" + args.a11yd_ssip_socket,
                                   SPEECHD_CMD="/bin/false")

    def a11yd_status(self, why, socket_path=None):
        """Records what a11yd (the one at `socket_path`, else the main one) says it is doing when one of
        its measurements failed."""
        argv = [f"{self.bin}/a11ysay", "--socket", socket_path or self.a.a11yd_socket, "--status", "--json"]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=5)
            text = (out.stdout + out.stderr).strip().replace("\n", " ")
        except subprocess.TimeoutExpired:
            text = "a11ysay --status timed out"
        self.results["notes"].append(f"a11yd status after a failure ({why}): {text}")
        log("a11yd status:", text)

    def say_cmd(self, *extra):
        return [f"{self.bin}/a11ysay", "--socket", self.a.a11yd_socket, *extra]

    def procs(self):
        tops = {"a11yd": [self.a.a11yd_pid], "speech-dispatcher": [self.a.speechd_pid]}
        tops["speech-dispatcher"] += children(self.a.speechd_pid)
        return tops

    # -- memory ------------------------------------------------------------------------------
    def snapshot_memory(self, label):
        snap = {}
        for system, pids in self.procs().items():
            snap[system] = [{"pid": p, "comm": comm(p), **memory(p)} for p in pids]
        self.results["memory"][label] = snap
        log("memory", label, json.dumps(snap))

    # -- idle --------------------------------------------------------------------------------
    def idle(self, label):
        pids = {}
        for system, ps in self.procs().items():
            for p in ps:
                pids[f"{system}:{comm(p)}"] = p
        pids["pulseaudio (shared server)"] = self.a.pulse_pid
        before = {k: cpu(p) for k, p in pids.items()}
        t0 = now()
        time.sleep(self.a.idle_seconds)
        dt = now() - t0
        after = {k: cpu(p) for k, p in pids.items()}
        out = {}
        for k in pids:
            d = cpu_delta(before[k], after[k])
            out[k] = {"seconds": dt, "cpu_ms": d["run_ns"] / 1e6,
                      "cpu_ticks_ms": d["ticks"] * 1000 / os.sysconf("SC_CLK_TCK"),
                      "voluntary": d["vol"], "nonvoluntary": d["nonvol"],
                      "threads_exited": d["threads_exited"], "threads_created": d["threads_created"]}
        try:
            listing = subprocess.run(["pactl", "list", "sink-inputs"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            listing = ""
        inputs, current = [], {}
        for line in listing.splitlines():
            line = line.strip()
            if line.startswith("Sink Input #"):
                current = {"id": line.split("#")[1]}
                inputs.append(current)
            elif line.startswith("Corked:"):
                current["corked"] = line.split(":", 1)[1].strip()
            elif line.startswith("application.name =") or line.startswith("application.process.binary ="):
                current[line.split(" =")[0]] = line.split("=", 1)[1].strip().strip('"')
        out["sink inputs"] = inputs
        self.results["idle"][label] = out
        log("idle", label, json.dumps(out))

    # -- first sound -------------------------------------------------------------------------
    def first_sound(self):
        a11y = A11ydClient(self.a.a11yd_socket)
        ssip = SSIPClient(self.a.speechd_socket, "bench-raw")
        a11y_ssip = SSIPClient(self.a.a11yd_ssip_socket, "bench-raw")
        steps = itertools.count(1)
        clients = {
            "a11yd: a11ysay": lambda: run_cli(self.say_cmd("--lang", "fr", "bonjour")),
            "a11yd: raw socket": lambda: a11y.post("bonjour"),
            FIRST_HEARING: lambda: a11y.post("bonjour", rate=never_said_rate(next(steps))),
            "a11yd: raw socket, fresh connection": lambda: post_on_fresh_connection(self.a.a11yd_socket, "bonjour"),
            "a11yd: spd-say (SSIP)": lambda: run_cli(["spd-say", "-l", "fr", "bonjour"], env=self.a11yd_ssip_env),
            "a11yd: raw SSIP": lambda: a11y_ssip.speak("bonjour"),
            "speech-dispatcher: spd-say": lambda: run_cli(["spd-say", "-l", "fr", "bonjour"]),
            "speech-dispatcher: raw SSIP": lambda: ssip.speak("bonjour"),
            "espeak-ng CLI": lambda: run_cli(["espeak-ng", "-v", "fr", "bonjour"]),
        }
        values = {k: [] for k in clients}
        lags = {k: [] for k in clients}
        peaks = {k: [] for k in clients}
        for i in range(self.a.runs):
            for name, action in clients.items():
                self.rec.settle(300)
                n0 = self.rec.count()
                t0 = now()
                p = action()
                k = self.rec.wait_loud(n0, LOUD, 3)
                reap([p if isinstance(p, (subprocess.Popen, socket.socket)) else None])
                self.rec.wait_quiet(self.rec.count(), 300, 10)
                values[name].append(None if k is None else self.rec.time_of(k) - t0)
                if k is not None:
                    word = np.abs(self.rec.samples(k, k + RATE // 2))
                    peaks[name].append(int(word.max(initial=0)))
                    hits = np.nonzero(word > INTERRUPT_LOUD)[0]
                    if hits.size:
                        lags[name].append(hits[0] / RATE)
            log(f"first sound round {i + 1}/{self.a.runs}:",
                ", ".join(f"{n}={ms(v[-1])}" for n, v in values.items()))
        a11y.close()
        ssip.close()
        a11y_ssip.close()
        self.results["first_sound"] = {
            k: {"values": v, **stats(v), "peak": max(peaks[k], default=None),
                "lag_to_interrupt_threshold": statistics.median(lags[k]) if lags[k] else None}
            for k, v in values.items()}

    # -- interrupt ---------------------------------------------------------------------------
    def interrupt(self):
        a11y_bg = A11ydClient(self.a.a11yd_socket)
        a11y_hi = A11ydClient(self.a.a11yd_socket)
        ssip_bg = SSIPClient(self.a.speechd_socket, "bench-bg", priority="text", volume=-90)
        ssip_hi = SSIPClient(self.a.speechd_socket, "bench-hi", priority="important")
        ssip_ctl = SSIPClient(self.a.speechd_socket, "bench-ctl")
        a11y_ssip_bg = SSIPClient(self.a.a11yd_ssip_socket, "bench-bg", priority="text", volume=-90)
        a11y_ssip_hi = SSIPClient(self.a.a11yd_ssip_socket, "bench-hi", priority="important")
        a11y_bg_start = lambda: a11y_bg.post(LONG_TEXT, volume=0.1)
        ssip_bg_start = lambda: ssip_bg.speak(LONG_TEXT)
        a11y_ssip_bg_start = lambda: a11y_ssip_bg.speak(LONG_TEXT)
        cases = {
            "a11yd: spd-say -P important (SSIP)": (a11y_ssip_bg_start, lambda: run_cli(
                ["spd-say", "-P", "important", "-l", "fr", "bonjour"], env=self.a11yd_ssip_env), "a11yd"),
            "a11yd: raw SSIP, important": (a11y_ssip_bg_start, lambda: a11y_ssip_hi.speak("bonjour"), "a11yd"),
            "a11yd: a11ysay --priority high": (a11y_bg_start, lambda: run_cli(
                self.say_cmd("--priority", "high", "--lang", "fr", "bonjour")), "a11yd"),
            "a11yd: a11ysay (plain announcement)": (a11y_bg_start, lambda: run_cli(
                self.say_cmd("--lang", "fr", "bonjour")), "a11yd"),
            "a11yd: raw socket, priority high": (a11y_bg_start, lambda: a11y_hi.post("bonjour", priority="high"),
                                                 "a11yd"),
            "speech-dispatcher: spd-say -P important": (ssip_bg_start, lambda: run_cli(
                ["spd-say", "-P", "important", "-l", "fr", "bonjour"]), "speechd"),
            "speech-dispatcher: raw SSIP, important": (ssip_bg_start, lambda: ssip_hi.speak("bonjour"), "speechd"),
        }
        values = {k: [] for k in cases}
        background_peaks = {k: [] for k in cases}
        # The raw clients' interrupting "bonjour", said alone after silence: where its sound starts, so
        # that the same sound is found again over the background (`orca_echo.onset_by_match`), at its
        # onset rather than once it passes INTERRUPT_LOUD.
        matched_cases = {"a11yd: raw socket, priority high": lambda: a11y_hi.post("bonjour", priority="high"),
                         "speech-dispatcher: raw SSIP, important": lambda: ssip_hi.speak("bonjour")}
        references, matched = {}, {k: [] for k in matched_cases}
        for name, say in matched_cases.items():
            self.rec.settle(300)
            n0 = self.rec.count()
            say()
            references[name] = self.rec.wait_loud(n0, LOUD, 3)
            self.rec.wait_quiet(self.rec.count(), 300, 10)
        for i in range(self.a.control_runs):
            for name, (start_bg, action, system) in cases.items():
                self.rec.settle(300)
                nb = self.rec.count()
                start_bg()
                kb = self.rec.wait_loud(nb, LOUD // 4, 3)
                time.sleep(0.4)
                n0 = self.rec.count()
                peak = int(np.abs(self.rec.samples(max(nb, n0 - RATE // 3), n0)).max(initial=0))
                background_peaks[name].append(peak)
                t0 = now()
                p = action()
                k = self.rec.wait_loud(n0, INTERRUPT_LOUD, 3)
                reap([p if isinstance(p, subprocess.Popen) else None])
                if kb is None or peak >= INTERRUPT_LOUD or k is None:
                    why = ("background item never heard" if kb is None else
                           f"background too loud ({peak})" if peak >= INTERRUPT_LOUD else "interrupting item never heard")
                    self.results["notes"].append(f"interrupt, {name}, round {i + 1}: {why}")
                    log("FAILED:", self.results["notes"][-1])
                    if system == "a11yd":
                        self.a11yd_status(f"interrupt, {name}, round {i + 1}")
                    k = None  # background never heard, or too loud to tell the two apart
                values[name].append(None if k is None else self.rec.time_of(k) - t0)
                if name in matched and references.get(name) is not None and k is not None:
                    m = orca_echo.onset_by_match(self.rec, n0, k + RATE // 100, references[name])
                    matched[name].append(None if m is None else self.rec.time_of(m) - t0)
                time.sleep(0.2)
                if system == "a11yd":
                    a11y_bg.send({"op": "stop"})
                else:
                    ssip_ctl.command("CANCEL ALL")
                self.rec.wait_quiet(self.rec.count(), 300, 10)
            log(f"interrupt round {i + 1}/{self.a.control_runs}:",
                ", ".join(f"{n}={ms(v[-1])}" for n, v in values.items()))
        for c in (a11y_bg, a11y_hi, ssip_bg, ssip_hi, ssip_ctl, a11y_ssip_bg, a11y_ssip_hi):
            c.close()
        self.results["interrupt"] = {k: {"values": v, "background_peak_max": max(background_peaks[k]), **stats(v),
                                         **({"matched": stats(matched[k])} if k in matched else {})}
                                     for k, v in values.items()}

    # -- stop --------------------------------------------------------------------------------
    def stop(self):
        a11y_bg = A11ydClient(self.a.a11yd_socket)
        a11y_ctl = A11ydClient(self.a.a11yd_socket)
        ssip_bg = SSIPClient(self.a.speechd_socket, "bench-bg")
        ssip_ctl = SSIPClient(self.a.speechd_socket, "bench-ctl")
        a11y_ssip_bg = SSIPClient(self.a.a11yd_ssip_socket, "bench-bg")
        a11y_ssip_ctl = SSIPClient(self.a.a11yd_ssip_socket, "bench-ctl")
        a11y_bg_start = lambda: a11y_bg.post(LONG_TEXT)
        ssip_bg_start = lambda: ssip_bg.speak(LONG_TEXT)
        a11y_ssip_bg_start = lambda: a11y_ssip_bg.speak(LONG_TEXT)
        cases = {
            "a11yd: a11ysay --stop": (a11y_bg_start, lambda: run_cli(self.say_cmd("--stop"))),
            "a11yd: spd-say -C (SSIP)": (a11y_ssip_bg_start, lambda: run_cli(["spd-say", "-C"], env=self.a11yd_ssip_env)),
            "a11yd: raw SSIP CANCEL ALL": (a11y_ssip_bg_start, lambda: a11y_ssip_ctl.command("CANCEL ALL")),
            "a11yd: raw socket {\"op\":\"stop\"}": (a11y_bg_start, lambda: a11y_ctl.send({"op": "stop"})),
            "speech-dispatcher: spd-say -C": (ssip_bg_start, lambda: run_cli(["spd-say", "-C"])),
            "speech-dispatcher: spd-say -S": (ssip_bg_start, lambda: run_cli(["spd-say", "-S"])),
            "speech-dispatcher: raw SSIP CANCEL ALL": (ssip_bg_start, lambda: ssip_ctl.command("CANCEL ALL")),
        }
        self.results["stop"] = self.stop_runs("stop", cases, a11y_ctl, ssip_ctl)
        for c in (a11y_bg, a11y_ctl, ssip_bg, ssip_ctl, a11y_ssip_bg, a11y_ssip_ctl):
            c.close()

    def stop_runs(self, part, cases, a11y_ctl, ssip_ctl, a11yd_socket=None):
        """`control_runs` rounds of every case, name: (start a background item, stop it), each timed to
        digital silence on `self.rec`; the stats per case with its cuts' last-millisecond peaks.
        `a11y_ctl` and `ssip_ctl` silence both daemons after a failed case (`a11yd_socket`: that a11yd's)."""
        values = {k: [] for k in cases}
        last_ms = {k: [] for k in cases}
        for i in range(self.a.control_runs):
            for name, (start_bg, action) in cases.items():
                nb, kb, end, t0 = self.silence_after(start_bg, action)
                ok = kb is not None and end is not None
                values[name].append(self.rec.time_of(end) - t0 if ok else None)
                if ok:
                    last_ms[name].append(self.last_ms_peak(end))
                if not ok:
                    why = "background item never heard" if kb is None else "still sounding 5 s after the stop"
                    peak = int(np.abs(self.rec.samples(nb)).max(initial=0))
                    self.results["notes"].append(f"{part}, {name}, round {i + 1}: {why} (peak since post {peak})")
                    log("FAILED:", self.results["notes"][-1])
                    if name.startswith("a11yd"):
                        self.a11yd_status(f"{part}, {name}, round {i + 1}", a11yd_socket)
                if not ok:  # make sure nothing keeps talking into the next case
                    a11y_ctl.send({"op": "stop"})
                    ssip_ctl.command("CANCEL ALL")
            log(f"{part} round {i + 1}/{self.a.control_runs}:",
                ", ".join(f"{n}={ms(v[-1])}" for n, v in values.items()))
        return {k: {"values": v, **stats(v), **cut_stats(last_ms[k])} for k, v in values.items()}

    # -- stop on PipeWire's pulse server -----------------------------------------------------
    def stop_pipewire(self):
        """The stop row's two open-connection clients again on PipeWire's pulse server: a private PipeWire
        with its own null sink, and a second a11yd and speech-dispatcher playing to it (run.sh starts them),
        its monitor recorded as the PulseAudio one is. That server reads a stream a processing quantum at a
        time and cannot rewind what it read: a cut is silent only once the blocks read before it have
        played out, so the quantum a11yd asks for while it plays (64 frames) is what sets its time here.
        The recorder asks for the same 1 ms as on PulseAudio, which pipewire-pulse raises to its floor for
        a client (256 frames), so the graph runs no faster than a desktop's but for what a11yd asks. Its
        reads then come 256 frames at a time; the mixed clock's lower envelope still dates a sample within
        them (the tests' clock, each chunk's arrival, reads a11yd's cut about 5 ms later)."""
        if not self.a.pipewire_server:
            self.results["notes"].append("stop on PipeWire's pulse server not measured: no private PipeWire "
                                         "(pipewire, wireplumber, pipewire-pulse, pw-metadata, dbus-daemon)")
            return
        # PulseAudio's recorder rests meanwhile: its 1 ms wake-ups (the sink's and parec's) would load the CPU.
        self.rec.close()
        self.rec = Recorder(self.a.recorder_ms, env={"PULSE_SERVER": self.a.pipewire_server})
        a11y_bg = A11ydClient(self.a.pipewire_a11yd_socket)
        a11y_ctl = A11ydClient(self.a.pipewire_a11yd_socket)
        ssip_bg = SSIPClient(self.a.pipewire_speechd_socket, "bench-bg")
        ssip_ctl = SSIPClient(self.a.pipewire_speechd_socket, "bench-ctl")
        try:
            if not self.rec.wait_flowing(2.5):
                raise SystemExit("bench: PipeWire's monitor recording does not flow")
            cases = {
                "a11yd: raw socket {\"op\":\"stop\"}": (lambda: a11y_bg.post(LONG_TEXT),
                                                      lambda: a11y_ctl.send({"op": "stop"})),
                "speech-dispatcher: raw SSIP CANCEL ALL": (lambda: ssip_bg.speak(LONG_TEXT),
                                                           lambda: ssip_ctl.command("CANCEL ALL")),
            }
            self.results["stop_pipewire"] = self.stop_runs("stop on PipeWire", cases, a11y_ctl, ssip_ctl,
                                                           self.a.pipewire_a11yd_socket)
        finally:
            for c in (a11y_bg, a11y_ctl, ssip_bg, ssip_ctl):
                c.close()
            self.rec.close()
            self.rec = Recorder(self.a.recorder_ms)
            if not self.rec.wait_flowing(2.5):
                raise SystemExit("bench: the monitor recording does not flow")

    def last_ms_peak(self, end):
        """Peak |sample| of the millisecond before the silence that starts at sample `end`: a cut from
        speech level clicks, a ramp's last millisecond does not."""
        return int(np.abs(self.rec.samples(max(0, end - RATE // 1000), end)).max(initial=0))

    def silence_after(self, start_bg, action):
        """Starts a background item, waits until it is heard and speaking, then runs `action` (a
        stop or a pause) and waits for ≥ 700 ms of digital silence. Returns (sample count before the
        background item, its first loud sample or None, the start of the silence or None, the time
        `action` was issued). The silence starts after the last nonzero sample: where a cut's ramp
        ends, not where it falls below QUIET (about 1 ms before)."""
        self.rec.settle(300)
        nb = self.rec.count()
        start_bg()
        kb = self.rec.wait_loud(nb, LOUD, 3)
        time.sleep(0.5)
        n0 = self.rec.count()
        t0 = now()
        p = action()
        end = self.rec.wait_quiet(n0, 700, 5, threshold=SILENCE)
        reap([p if isinstance(p, subprocess.Popen) else None])
        return nb, kb, end, t0

    # -- pause and resume --------------------------------------------------------------------
    def controls(self):
        """Pause → silence, then resume → sound, for the same speaking item: a11ysay --pause and
        --resume, and the same requests on an open connection (JSON Lines, SSIP). speech-dispatcher
        0.11.4 is not measured: a PAUSE during plain text leaves it silent for good (field notes),
        which would wedge every measurement after this one; spd-say has no pause option."""
        a11y_bg = A11ydClient(self.a.a11yd_socket)
        a11y_ctl = A11ydClient(self.a.a11yd_socket)
        a11y_ssip_bg = SSIPClient(self.a.a11yd_ssip_socket, "bench-bg")
        a11y_ssip_ctl = SSIPClient(self.a.a11yd_ssip_socket, "bench-ctl")
        a11y_bg_start = lambda: a11y_bg.post(LONG_TEXT)
        a11y_ssip_bg_start = lambda: a11y_ssip_bg.speak(LONG_TEXT)
        fresh = []

        def pause_then_connect():
            """Pauses, then opens the connection that will resume: connected before the clock starts, as
            a client that lives connected, but new to the daemon: a second meter of the resume, independent of
            the connection that paused."""
            a11y_ctl.send({"op": "pause"})
            fresh.append(A11ydClient(self.a.a11yd_socket))

        cases = {  # name: (background, pause, resume)
            "a11yd: a11ysay --pause / --resume": (
                a11y_bg_start, lambda: run_cli(self.say_cmd("--pause")), lambda: run_cli(self.say_cmd("--resume"))),
            "a11yd: raw socket {\"op\":\"pause\"} / {\"op\":\"resume\"}": (
                a11y_bg_start, lambda: a11y_ctl.send({"op": "pause"}), lambda: a11y_ctl.send({"op": "resume"})),
            "a11yd: raw SSIP PAUSE ALL / RESUME ALL": (
                a11y_ssip_bg_start, lambda: a11y_ssip_ctl.command("PAUSE ALL"),
                lambda: a11y_ssip_ctl.command("RESUME ALL")),
            "a11yd: raw socket, resume on a fresh connection": (
                a11y_bg_start, pause_then_connect, lambda: fresh[-1].send({"op": "resume"})),
        }
        paused = {k: [] for k in cases}
        last_ms = {k: [] for k in cases}
        resumed = {k: [] for k in cases}
        for i in range(self.a.control_runs):
            for name, (start_bg, pause, resume) in cases.items():
                _, kb, end, t0 = self.silence_after(start_bg, pause)
                silent = kb is not None and end is not None
                paused[name].append(self.rec.time_of(end) - t0 if silent else None)
                if silent:
                    last_ms[name].append(self.last_ms_peak(end))
                k = None
                if silent:
                    n1 = self.rec.count()
                    t1 = now()
                    p = resume()
                    k = self.rec.wait_loud(n1, QUIET, 3)
                    reap([p if isinstance(p, subprocess.Popen) else None])
                resumed[name].append(self.rec.time_of(k) - t1 if k is not None else None)
                if not silent or k is None:
                    why = ("background item never heard" if kb is None else
                           "still sounding 5 s after the pause" if end is None else "not heard again after the resume")
                    self.results["notes"].append(f"pause/resume, {name}, round {i + 1}: {why}")
                    log("FAILED:", self.results["notes"][-1])
                    self.a11yd_status(f"pause/resume, {name}, round {i + 1}")
                a11y_ctl.send({"op": "stop"})
                a11y_ssip_ctl.command("CANCEL ALL")
                self.rec.wait_quiet(self.rec.count(), 300, 10)
            log(f"pause/resume round {i + 1}/{self.a.control_runs}:",
                ", ".join(f"{n}={ms(paused[n][-1])}/{ms(resumed[n][-1])}" for n in cases))
        for c in (a11y_bg, a11y_ctl, a11y_ssip_bg, a11y_ssip_ctl, *fresh):
            c.close()
        self.results["pause"] = {k: {"values": v, **stats(v), **cut_stats(last_ms[k])} for k, v in paused.items()}
        self.results["resume"] = {k: {"values": v, **stats(v)} for k, v in resumed.items()}

    # -- many posts (memory load) ------------------------------------------------------------
    def post_many(self, total=10_000, batch=100):
        """`total` short posts over one connection to each daemon, in batches of `batch` queued items each
        ended by a stop (so that it is quick: the first of a batch starts, the rest wait, all end
        `stopped`); done when every post has its `finished` (a11yd) or its reply (SSIP), then 1 s of rest."""
        t0 = now()
        a11y = A11ydClient(self.a.a11yd_socket)
        def posts(first, end):
            return "".join(json.dumps({"op": "post", "text": f"message {k + 1}", "lang": "fr", "queue": True}) + "\n"
                           for k in range(first, end)).encode()

        def finished_count(client):
            """How many `finished` came, once all `total` did or 120 s passed; closes the client."""
            deadline = now() + 120
            while len(client.finished) < total and now() < deadline:
                time.sleep(0.05)
            client.close()
            return len(client.finished)

        for start in range(0, total, batch):
            a11y.send_bytes(posts(start, min(total, start + batch)) + b'{"op":"stop"}\n')
        a11y_done = finished_count(a11y)
        a11y_seconds = now() - t0
        # The same posts queued at once and ended by one stop: the client, reading all along, is owed
        # `total` `finished` events in one burst, every one of them.
        t0 = now()
        burst = A11ydClient(self.a.a11yd_socket)
        burst.send_bytes(posts(0, total))
        replies = 0
        while replies < total and now() < t0 + 120:
            try:
                replies += "ok" in burst.lines.get(timeout=1) and 1
            except queue.Empty:
                pass
        accepted_seconds = now() - t0
        burst.send({"op": "stop"})
        burst_done = finished_count(burst)
        burst_seconds = now() - t0
        t0 = now()
        ssip = SSIPClient(self.a.speechd_socket, "bench-posts")
        for start in range(0, total, batch):
            for k in range(start, min(total, start + batch)):
                ssip.speak(f"message {k + 1}")
            ssip.command("CANCEL all")
        ssip.close()
        time.sleep(1)
        self.results["notes"].append(
            f"{total} posts over one connection (batches of {batch} queued posts, each batch then stopped): "
            f"a11yd {a11y_done}/{total} finished in {a11y_seconds:.1f} s; "
            f"speech-dispatcher (SSIP SPEAK, CANCEL all) in {now() - t0:.1f} s. "
            f"The same {total} queued at once, then one stop: a11yd accepted them in {accepted_seconds:.2f} s "
            f"({total / accepted_seconds:,.0f} posts/s) and told {burst_done}/{total} finished in {burst_seconds:.1f} s")

    # -- many utterances (memory load) -------------------------------------------------------
    def speak_many(self):
        a11y = A11ydClient(self.a.a11yd_socket)
        ssip = SSIPClient(self.a.speechd_socket, "bench-load")
        t0 = now()
        for i in range(self.a.utterances):
            a11y.post(f"bonjour {i + 1}", queue=True)
            ssip.speak(f"bonjour {i + 1}")
        # Both queues play at once on the shared sink; done when the sink has been quiet for 1.5 s.
        end = self.rec.wait_quiet(self.rec.count(), 1500, 30 + 3 * self.a.utterances)
        self.results["notes"].append(
            f"{self.a.utterances} queued utterances per daemon played in {now() - t0:.1f} s"
            + ("" if end is not None else " (timed out)"))
        a11y.close()
        ssip.close()

    # -- loudness ----------------------------------------------------------------------------
    def loudness(self):
        """The same sentence through spd-say -w to each daemon at each SSIP volume: RMS over the
        voiced part and peak, in 16-bit units (target: a11yd within 1.5 dB of speech-dispatcher, never at
        full scale)."""
        sentence = "Le train de la SNCF arrive en gare de Lyon à dix-huit heures trente."
        out = {}
        for volume in (None, "0", "-50"):
            row = {}
            for name, env in (("speech-dispatcher", None), ("a11yd", self.a11yd_ssip_env)):
                self.rec.settle(300)
                n0 = self.rec.count()
                argv = ["spd-say", "-w", "-l", "fr"] + (["-i", volume] if volume else []) + [sentence]
                reap([run_cli(argv, env=env)], timeout=30)
                self.rec.wait_quiet(self.rec.count(), 300, 10)
                s = self.rec.samples(n0)
                loud = np.nonzero(np.abs(s) > LOUD)[0]
                if not loud.size:
                    row[name] = None
                    continue
                voiced = s[loud[0]:loud[-1] + 1].astype(np.float64)
                row[name] = {"rms": float(np.sqrt(np.mean(voiced * voiced))), "peak": int(np.abs(s).max())}
            out["default" if volume is None else volume] = row
        self.results["loudness"] = out

    # -- Orca's key echo (bench/orca_echo.py) ----------------------------------------------
    def orca_echo(self):
        servers = {"a11yd": self.a.a11yd_ssip_socket, "speech-dispatcher": self.a.speechd_socket}
        pids = self.procs()
        if self.natural_voice_installed():
            # Orca with the natural voice chosen in its preferences: its echoes said ahead (EchoMemory).
            servers["a11yd, natural voice"] = (self.a.a11yd_ssip_socket, self.PIPER_VOICE.removeprefix("piper:"))
            pids["a11yd, natural voice"] = pids["a11yd"]
        try:
            self.results["orca_echo"] = orca_echo.measure(self.rec, servers, log, blocks=self.a.orca_blocks,
                                                          loud=LOUD, pids=pids)
        except (OSError, RuntimeError) as e:   # no Orca, Xvfb or X server here: the rest still runs
            self.results["notes"].append(f"Orca's key echo not measured: {e}")
            log("orca echo:", e)

    # -- the natural voice -----------------------------------------------------------------------
    PIPER_VOICE = "piper:en_US-joe-medium"
    PIPER_TEXTS = {
        "2 words": "Hello there.",
        "40 words": ("The meeting has moved to the small room on the third floor, next to the kitchen, because the "
                     "projector in the large room is broken again, and the technician will not be here before "
                     "Thursday afternoon, so please bring your own laptop."),
    }

    def piper_worker_pids(self):
        return [p for p in children(self.a.a11yd_pid) if "python" in comm(p)]

    @staticmethod
    def natural_voice_installed():
        return os.path.exists(os.path.join(os.environ.get("XDG_DATA_HOME", ""), "a11yd", "voices"))

    def piper(self):
        """First sound of a short and a 40-word announcement on an open connection in the Piper voice, beside
        eSpeak's English saying the same (a stop after each, heard through), and the Piper worker's memory:
        loaded, after the long texts, and after its idle unload (`[piper] idle_unload_seconds`, 5 s here)."""
        out = {"first_sound": {}, "memory": {}}
        if not self.natural_voice_installed():
            self.results["notes"].append("the natural voice not measured: no voices under XDG_DATA_HOME (make voices)")
            return
        a11y = A11ydClient(self.a.a11yd_socket)
        # The first item loads the model (at a11yd's start only when [voices] names a Piper voice).
        self.rec.settle(300)
        n0 = self.rec.count()
        t0 = now()
        a11y.post(self.PIPER_TEXTS["2 words"], voice=self.PIPER_VOICE, lang=None)
        k = self.rec.wait_loud(n0, LOUD, 30)
        out["cold first sound (worker started and model loaded by the item)"] = None if k is None else self.rec.time_of(k) - t0
        self.rec.wait_quiet(self.rec.count(), 300, 10)
        workers = self.piper_worker_pids()
        out["memory"]["worker, loaded"] = [memory(p) for p in workers]
        for voice, fields in [("piper", {"voice": self.PIPER_VOICE, "lang": None}), ("espeak-ng en-us", {"lang": "en-us"})]:
            for label, text in self.PIPER_TEXTS.items():
                values = []
                for run in range(max(self.a.runs // 2, 3)):
                    self.rec.settle(300)
                    n0 = self.rec.count()
                    t0 = now()
                    a11y.post(text, rate=never_said_rate(run + 1), **{k: v for k, v in fields.items() if v is not None})
                    k = self.rec.wait_loud(n0, LOUD, 5)
                    values.append(None if k is None else self.rec.time_of(k) - t0)
                    time.sleep(0.3)
                    a11y.send({"op": "stop"})
                    self.rec.wait_quiet(self.rec.count(), 300, 10)
                out["first_sound"][f"{voice}, {label}"] = {"values": values, **stats(values)}
                log(f"piper part: {voice}, {label}:", ms(stats(values).get("median")))
            # Stop → silence while each voice speaks the long text (the cut is the output's, whatever
            # the engine: the target is as fast as with eSpeak).
            stopper = A11ydClient(self.a.a11yd_socket)
            stops, last_ms = [], []
            for _ in range(max(self.a.control_runs, 3)):
                post = lambda: a11y.post(self.PIPER_TEXTS["40 words"], **{k: v for k, v in fields.items() if v is not None})
                nb, kb, end, t0 = self.silence_after(post, lambda: stopper.send({"op": "stop"}))
                ok = kb is not None and end is not None
                stops.append(self.rec.time_of(end) - t0 if ok else None)
                if ok:
                    last_ms.append(self.last_ms_peak(end))
                else:
                    stopper.send({"op": "stop"})
            stopper.close()
            out["stop"] = out.get("stop", {})
            out["stop"][voice] = {"values": stops, **stats(stops), **cut_stats(last_ms)}
            log(f"piper part: {voice}, stop → silence:", ms(stats(stops).get("median")))
            if voice == "piper":  # before eSpeak's runs outlast the worker's idle time
                out["memory"]["worker, after the long texts"] = [memory(p) for p in self.piper_worker_pids()]
        self.piper_echo_and_top_rate(a11y, out)
        time.sleep(7)
        out["memory"]["workers left after 7 s idle (unload at 5 s)"] = len(self.piper_worker_pids())
        out["memory"]["a11yd after the unload"] = memory(self.a.a11yd_pid)
        a11y.close()
        self.results["piper"] = out

    def until_workers_quiet(self, timeout=60):
        """Waits until the Piper workers' CPU time stops moving for 1 s (the characters said ahead are
        rendered): how long that took."""
        t0 = now()
        last = None
        while now() - t0 < timeout:
            ticks = sum(cpu(p)["ticks"] for p in self.piper_worker_pids())
            if ticks == last:
                return now() - t0
            last = ticks
            time.sleep(1)
        return None

    def echoes_ready(self):
        """What a11yd's log said last of the characters said ahead (their forms and bytes), from the file
        its standard error goes to; None when it said nothing."""
        try:
            path = os.readlink(f"/proc/{self.a.a11yd_pid}/fd/2")
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = [line for line in f if "characters a screen reader echoes are ready" in line]
        except OSError:
            return None
        if not lines:
            return None
        fields = dict(re.findall(r"(\w+)=(\d+)", lines[-1]))
        return {key: int(value) for key, value in fields.items() if key in ("forms", "bytes", "echoes_bytes", "echoes_bound")}

    def heard_through(self, post, timeout=30):
        """Posts (`post()`), waits until it is heard, then until the sink is quiet again."""
        n0 = self.rec.count()
        post()
        self.rec.wait_loud(n0, LOUD, timeout)
        self.rec.wait_quiet(self.rec.count(), 300, timeout)

    def piper_echo_and_top_rate(self, a11y, out):
        """Key echo in the natural voice: a-z posted one by one at a rate nothing was said at, once
        the voice spoke at it and its worker went quiet (the characters said ahead rendered), then the same
        letters again (from memory); eSpeak's English the same way. Then the top of the scale (rate 1.0): the
        40 words' first sound and the worker's CPU time over the audio's length (real-time factor)."""
        letters = "abcdefghijklmnopqrstuvwxyz"
        for voice, fields in [("piper", {"voice": self.PIPER_VOICE, "lang": None}), ("espeak-ng en-us", {"lang": "en-us"})]:
            rate = never_said_rate(50)
            kw = {k: v for k, v in fields.items() if v is not None}
            self.heard_through(lambda: a11y.post("Ready to type.", rate=rate, **kw))
            if voice == "piper":
                out["echoes rendered after (s)"] = self.until_workers_quiet()
                out["memory"]["echoes said ahead"] = self.echoes_ready()
            for when in ("first time", "said again"):
                values = []
                for letter in letters:
                    self.rec.settle(150)
                    n0 = self.rec.count()
                    t0 = now()
                    a11y.post(letter, rate=rate, **kw)
                    k = self.rec.wait_loud(n0, LOUD, 5)
                    values.append(None if k is None else self.rec.time_of(k) - t0)
                    self.rec.wait_quiet(self.rec.count(), 150, 5)
                out["first_sound"][f"{voice}, key echo a-z, {when}"] = {"values": values, **stats(values)}
                log(f"piper part: {voice}, key echo a-z, {when}:", ms(stats(values).get("median")))
        firsts, factors = [], []
        # The worker loaded again (its idle unload is 5 s here) before the runs measured: heard, then quiet
        # (waiting for quiet alone returned while a cold worker still loaded its model, and the first run
        # measured the load).
        self.heard_through(lambda: a11y.post("Ready.", voice=self.PIPER_VOICE, lang=None, rate=1.0))
        for _ in range(3):
            self.rec.settle(300)
            workers = self.piper_worker_pids()
            before = {p: cpu(p)["ticks"] for p in workers}
            n0 = self.rec.count()
            t0 = now()
            a11y.post(self.PIPER_TEXTS["40 words"], voice=self.PIPER_VOICE, lang=None, rate=1.0)
            k = self.rec.wait_loud(n0, LOUD, 10)
            end = self.rec.wait_quiet(self.rec.count(), 600, 30)
            firsts.append(None if k is None else self.rec.time_of(k) - t0)
            if k is not None and end is not None:
                heard = self.rec.time_of(end) - self.rec.time_of(k)
                used = sum(cpu(p)["ticks"] - before.get(p, 0) for p in workers) / os.sysconf("SC_CLK_TCK")
                factors.append(used / heard if heard > 0 else None)
        out["first_sound"]["piper, 40 words at the top rate (1.0)"] = {"values": firsts, **stats(firsts)}
        out["top rate real-time factor"] = stats([f for f in factors if f is not None])
        log("piper part: 40 words at the top rate:", ms(stats(firsts).get("median")), "real-time factor", factors)

    def run_only(self, part):
        """One part alone, with the recorder (`BENCH_ONLY=orca_echo bench/run.sh`)."""
        self.results["started"] = time.strftime("%Y-%m-%d %H:%M:%S")
        self.rec = Recorder(self.a.recorder_ms)
        if not self.rec.wait_flowing(2.5):
            raise SystemExit("bench: the monitor recording does not flow")
        getattr(self, part)()

    # -- throughput (optional) ---------------------------------------------------------------
    def throughput(self):
        """espeak-ng CLI synthesis speed without audio output (--stdout), for scale."""
        t0 = now()
        out = subprocess.run(["espeak-ng", "-v", "fr", "--stdout", LONG_TEXT * 4], capture_output=True, timeout=60)
        dt = now() - t0
        audio_s = max(0, len(out.stdout) - 44) / 2 / 22050
        self.results["throughput"]["espeak-ng --stdout"] = {"wall_s": dt, "audio_s": audio_s,
                                                            "x_realtime": audio_s / dt if dt else None}

    def cli_startup(self):
        cmds = {"a11ysay --help": [f"{self.bin}/a11ysay", "--help"], "spd-say -v": ["spd-say", "-v"],
                "espeak-ng --version": ["espeak-ng", "--version"],
                PROCESS_START: ["true"]}
        out = {}
        for name, argv in cmds.items():
            times = []
            for _ in range(max(5, self.a.control_runs)):
                t0 = now()
                subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
                times.append(now() - t0)
            out[name] = stats(times)
        out[REQUEST_ARRIVAL] = stats(self.request_arrival())
        self.results["cli_startup"] = out

    def language_detection(self):
        """What finding each sentence's language costs (`[voice] detect_languages`), in a11yd's own code
        built with the daemon: `a11y-pronounce-bench --language-cost` on bench/language/sentences.tsv."""
        tool = f"{self.bin}/a11y-pronounce-bench"
        sentences = os.path.join(os.path.dirname(os.path.abspath(__file__)), "language", "sentences.tsv")
        if not os.access(tool, os.X_OK):
            self.results["notes"].append(f"language detection not measured: no {tool}")
            return
        out = subprocess.run([tool, "--language-cost", sentences], capture_output=True, text=True, timeout=300)
        line = next((x for x in out.stdout.splitlines() if x.startswith("JSON ")), None)
        if out.returncode != 0 or line is None:
            self.results["notes"].append(f"language detection not measured: {tool} exited {out.returncode}")
            return
        self.results["language_detection"] = json.loads(line[len("JSON "):])
        log("language detection:", out.stdout.splitlines()[0])

    def request_arrival(self):
        """`a11ysay "bonjour"`'s start → its request line read at a listening socket, which answers as a11yd
        does: what a11ysay itself costs before the daemon can act, process start included."""
        work = os.path.join(os.path.dirname(self.a.out), "request-arrival")
        os.makedirs(work, exist_ok=True)
        path = os.path.join(work, "socket")
        if os.path.exists(path):
            os.unlink(path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(4)
        argv = [f"{self.bin}/a11ysay", "--socket", path, "--lang", "fr", "bonjour"]
        env = dict(os.environ, A11YD_NO_AUTOSPAWN="1")
        times = []
        try:
            for _ in range(max(5, self.a.control_runs)):
                t0 = now()
                p = run_cli(argv, env=env)
                conn, _ = listener.accept()
                with conn:
                    line = b""
                    while not line.endswith(b"\n"):
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        line += chunk
                    times.append(now() - t0 if line.endswith(b"\n") else None)
                    conn.sendall(b'{"ok":true,"utterance":1}\n')
                reap([p])
        finally:
            listener.close()
            os.unlink(path)
        return times

    def run(self):
        self.results["load_before"] = open("/proc/loadavg").read().split()[:3]
        self.results["link_order"] = link_order_coverage(f"{self.bin}/a11yd")
        self.results["started"] = time.strftime("%Y-%m-%d %H:%M:%S")
        time.sleep(1)
        self.snapshot_memory("idle after start")
        self.idle("fresh (before any speech, no recorder)")
        self.rec = Recorder(self.a.recorder_ms)
        if not self.rec.wait_flowing(2.5):
            raise SystemExit("bench: the monitor recording does not flow")
        log("recorder flowing")
        self.speak_many()
        self.snapshot_memory(f"idle after speaking {self.a.utterances} utterances")
        self.first_sound()
        worker_cost.measure(self)  # the engine worker vs in process (bench/worker_cost.py)
        self.interrupt()
        self.stop()
        self.stop_pipewire()
        self.controls()
        self.loudness()
        self.piper()
        self.orca_echo()
        self.rec.close()
        self.rec = None
        time.sleep(2)
        self.idle("after speech (recorder stopped)")
        self.throughput()
        self.cli_startup()
        self.language_detection()
        # Last: speech-dispatcher may not recover from it (its stream stays uncorked, it stops speaking).
        self.post_many()
        self.snapshot_memory("idle after 10,000 posts")
        self.results["load_after"] = open("/proc/loadavg").read().split()[:3]


# ---------------------------------------------------------------------------------------------
def piper_markdown(piper):
    """The natural voice's rows: first sound beside eSpeak's English, the worker's memory."""
    if not piper:
        return []
    L = ["#### The natural voice (Piper, `piper:en_US-joe-medium`) beside eSpeak-NG's English",
         "",
         "First sound of a post on an open connection (the post sent → the first sample above -30 dBFS at the "
         "sink), each stopped 0.3 s in. Cold: the first Piper item after a11yd's start, which starts the worker "
         f"and loads the model: {ms(piper.get('cold first sound (worker started and model loaded by the item)'))} ms.",
         "",
         "| voice, text | median ms | p90 ms | min ms | runs |",
         "|---|---:|---:|---:|---:|"]
    for name, s in piper.get("first_sound", {}).items():
        L.append(f"| {name} | {ms(s.get('median'))} | {ms(s.get('p90'))} | {ms(s.get('min'))} | {len(s.get('values', []))} |")
    for name, s in piper.get("stop", {}).items():
        L.append(f"| {name}, stop 0.5 s into the 40 words → silence | {ms(s.get('median'))} | {ms(s.get('p90'))} | "
                 f"{ms(s.get('min'))} | {len(s.get('values', []))} |")
    rendered = piper.get("echoes rendered after (s)")
    factor = piper.get("top rate real-time factor", {}).get("median")
    L.append("")
    L.append("Key echo: a-z posted one by one at a rate nothing was said at, once the voice spoke at it "
             + ("and its worker went quiet " + (f"({rendered:.1f} s: the characters said ahead rendered)" if rendered else "(did not within 60 s)"))
             + "; then the same letters again. At the top rate (1.0, 450 words a minute) the Piper worker's CPU time (its "
             + "two inference threads and the stretch) over the 40 words' length heard: " + (f"{factor:.3f}" if factor is not None else "?") + ".")
    echoes = piper.get("memory", {}).get("echoes said ahead")
    if echoes:
        L.append("")
        L.append(f"The characters said ahead at that setting (`EchoMemory`, a11yd's log): {echoes.get('forms')} forms in "
                 f"{echoes.get('bytes', 0) / 1e6:.2f} MB of audio; all settings kept then {echoes.get('echoes_bytes', 0) / 1e6:.2f} MB, "
                 f"within the bound of {echoes.get('echoes_bound', 0) / 1e6:.2f} MB.")
    L.append("")
    memory = piper.get("memory", {})
    cell = lambda row: "?" if not row else f"RSS {row.get('Rss', 0) / 1024:.1f} / Private {row.get('Private', 0) / 1024:.1f} MiB"
    for label in ("worker, loaded", "worker, after the long texts"):
        rows = memory.get(label) or []
        L.append(f"- Piper worker, {label.split(', ')[1]}: " + (", ".join(cell(r) for r in rows) or "no worker"))
    L.append(f"- Piper workers left after 7 s idle (idle_unload_seconds = 5): "
             f"{memory.get('workers left after 7 s idle (unload at 5 s)', '?')}; a11yd then: {cell(memory.get('a11yd after the unload'))}")
    L.append("")
    return L


def language_detection_markdown(d):
    """The row of `[voice] detect_languages`' cost per sentence (the target: 0.2 ms)."""
    if not d:
        return []
    return [
        f"#### Language detection per sentence ({d['sentences']:.0f} sentences of 5-25 words × {d['rounds']:.0f} rounds, "
        "posted in French, five languages listed; `a11y-pronounce-bench --language-cost`), µs",
        "",
        "| measure | median | p95 | mean | target |",
        "|---|---:|---:|---:|---:|",
        f"| the detectors and the decision, one sentence | {d['detect_median_us']:.1f} | {d['detect_p95_us']:.1f} | "
        f"{d['detect_mean_us']:.1f} | ≤ 200 |",
        f"| planning a sentence with detection, minus without (sentences and clauses cut, each detected) | "
        f"{d['added_median_us']:.1f} | | {d['added_mean_us']:.1f} | ≤ 200 |",
        "",
    ]


def tool_versions():
    def first_line(argv, line=0):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
            return (out.stdout or out.stderr).strip().splitlines()[line]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            return "?"
    return {"speech-dispatcher": first_line(["speech-dispatcher", "-v"]),
            "espeak-ng": first_line(["espeak-ng", "--version"]),
            "pulseaudio": first_line(["pulseaudio", "--version"]),
            "pipewire": first_line(["pipewire", "--version"], line=-1),  # "Linked with libpipewire 0.3.65"
            "kernel": os.uname().release}


def cli_and_resume_targets(r):
    """a11ysay and resume against their targets, with ratios to speech-dispatcher's equivalents."""
    def median(table, name):
        return r.get(table, {}).get(name, {}).get("median")

    def row(measure, mine, theirs, target, limit):
        ratio = f"{mine / theirs:.2f}×" if mine is not None and theirs else "–"
        if mine is None or limit is None:
            met = "–"
        elif mine <= limit:
            met = "yes"
        else:
            met = f"no, by {ms(mine - limit)} ms"
        return f"| {measure} | {ms(mine)} | {theirs_text(theirs)} | {ratio} | {target} | {met} |"

    def theirs_text(theirs):
        return "–" if theirs is None else ms(theirs)

    spd_say = median("first_sound", "speech-dispatcher: spd-say")
    spd_stop = median("stop", "speech-dispatcher: spd-say -S")
    spd_version = r.get("cli_startup", {}).get("spd-say -v", {}).get("median")
    L = ["#### a11ysay and resume against their targets (medians of this run, ms)", "",
         "| measure | a11yd | speech-dispatcher | ratio | target | met |", "|---|---:|---:|---:|---|---|"]
    L.append(row('`a11ysay "bonjour"` → first sound (vs `spd-say`)', median("first_sound", "a11yd: a11ysay"), spd_say,
                 "≤ ¼ of spd-say's", spd_say / 4 if spd_say else None))
    L.append(row('`a11ysay "bonjour"` → first sound (vs `spd-say`), the stricter target', median("first_sound", "a11yd: a11ysay"),
                 spd_say, "≤ 0.2× spd-say's", spd_say / 5 if spd_say else None))
    L.append(row("`a11ysay --stop` → silence (vs `spd-say -S`)", median("stop", "a11yd: a11ysay --stop"), spd_stop,
                 "≤ 5 ms", 0.005))
    L.append(row("`a11ysay --pause` → silence", median("pause", "a11yd: a11ysay --pause / --resume"), None,
                 "≤ 5 ms", 0.005))
    L.append(row("`a11ysay --resume` → sound", median("resume", "a11yd: a11ysay --pause / --resume"), None,
                 "≤ 5 ms", 0.005))
    L.append(row("resume → sound, open connection (JSON Lines)",
                 median("resume", "a11yd: raw socket {\"op\":\"pause\"} / {\"op\":\"resume\"}"), None, "≤ 3 ms", 0.003))
    L.append(row("resume → sound, fresh connection opened before the clock (JSON Lines)",
                 median("resume", "a11yd: raw socket, resume on a fresh connection"), None, "≤ 3 ms", 0.003))
    L.append(row("`RESUME ALL` → sound, open SSIP connection",
                 median("resume", "a11yd: raw SSIP PAUSE ALL / RESUME ALL"), None, "", None))
    L.append(row("`a11ysay --help` (vs `spd-say -v`)", r.get("cli_startup", {}).get("a11ysay --help", {}).get("median"),
                 spd_version, "≤ 3 ms", 0.003))
    L.append("")
    parts = [("a raw post on an open connection", median("first_sound", "a11yd: raw socket")),
             ("on a fresh connection", median("first_sound", "a11yd: raw socket, fresh connection")),
             ("`a11ysay`", median("first_sound", "a11yd: a11ysay")),
             ("starting `true` from this bench", r.get("cli_startup", {}).get(PROCESS_START, {}).get("median")),
             ("`a11ysay --help`", r.get("cli_startup", {}).get("a11ysay --help", {}).get("median")),
             ("`a11ysay \"bonjour\"`'s start → its request at the socket",
              r.get("cli_startup", {}).get(REQUEST_ARRIVAL, {}).get("median"))]
    if all(v is not None for _, v in parts):
        L.append("Where `a11ysay`'s time goes, this run: " + "; ".join(f"{n} {ms(v)} ms" for n, v in parts) + ". "
                 "What a11ysay adds over a fresh connection is a process start, which spd-say pays too.")
        L.append("")
    L.append("speech-dispatcher has no pause to compare with (a PAUSE during plain text wedges 0.11.4; spd-say has "
             "no pause option), so the pause and resume rows have no ratio.")
    L.append("")
    return L


def markdown(r, args):
    L = []
    L.append(f"### a11yd benchmark, {r['started']}")
    L.append("")
    L.append(f"Versions: {', '.join(f'{k}: {v}' for k, v in r['versions'].items())}; "
             f"{os.cpu_count()} CPUs. Runs: first sound {args.runs}, interrupt/stop {args.control_runs}. "
             "Times in ms from the moment the command was issued to the sample mixed by the null sink "
             f"(recorded with {args.recorder_ms} ms blocks: `--recorder-ms`).")
    L.append("")
    for key, title, what in (
            ("first_sound", "Time to first sound, \"bonjour\" (fr)", f"first |sample| > {LOUD}"),
            ("interrupt", "High-priority item heard over a speaking one",
             f"first |sample| > {INTERRUPT_LOUD}; background item at low volume"),
            ("stop", "Stop to silence", f"end of the last |sample| > {SILENCE}, where a cut's ramp ends "
             "(then ≥ 700 ms silent); the last ms before it peaks below 1,460 (−27 dBFS) or clicks"),
            ("stop_pipewire", "Stop to silence on PipeWire's pulse server",
             "the same, on a private PipeWire with its own 48 kHz null sink, a second a11yd and "
             "speech-dispatcher playing to it"),
            ("pause", "Pause to silence", f"end of the last |sample| > {SILENCE}, where a cut's ramp ends "
             "(then ≥ 700 ms silent); the last ms before it peaks below 1,460 (−27 dBFS) or clicks; "
             "speech-dispatcher not measured: a PAUSE during plain text leaves 0.11.4 silent for good"),
            ("resume", "Resume to sound, the same item paused ≥ 700 ms", f"first |sample| > {QUIET}")):
        if key not in r:
            continue
        L.append(f"#### {title} ({what})")
        L.append("")
        if key == "first_sound":
            L.append("a11yd says a short utterance it said before again from memory (`SpeechMemory`): its rows that "
                     "say \"bonjour\" again replay it from the second run on, as a screen reader's repeated echoes "
                     f"are. \"{FIRST_HEARING}\" is synthesised every time (each run a step faster, a rate never said "
                     "before); speech-dispatcher and the espeak-ng CLI synthesise every time.")
            L.append("")
        extra = {"first_sound": ["peak |sample|", f"ms from onset to > {INTERRUPT_LOUD}"],
                 "interrupt": ["background peak", "≈ onset: median − onset-to-threshold lag",
                               "onset found by matching the same word said alone: median / p90"],
                 "stop": ["last ms peak, median / worst", "clicks"],
                 "stop_pipewire": ["last ms peak, median / worst", "clicks"],
                 "pause": ["last ms peak, median / worst", "clicks"]}.get(key, [])
        L.append("| client | median ms | p90 ms | min ms | max ms | ok/runs |" + "".join(f" {x} |" for x in extra))
        L.append("|---|---:|---:|---:|---:|---:|" + "---:|" * len(extra))
        for name, s in r[key].items():
            lag_ref = r["first_sound"].get("a11yd: raw socket" if name.startswith("a11yd")
                                           else "speech-dispatcher: raw SSIP", {}).get("lag_to_interrupt_threshold")
            onset = s["median"] - lag_ref if key == "interrupt" and lag_ref is not None and s.get("median") else None
            last_ms = f"{s.get('last_ms_median', '–')} / {s.get('last_ms_max', '–')}"
            clicks = f"{s.get('clicks', 0)}/{len(s.get('last_ms_peaks', []))}"
            cells = {"first_sound": [str(s.get("peak")), ms(s.get("lag_to_interrupt_threshold"))],
                     "interrupt": [str(s.get("background_peak_max")), ms(onset),
                                   f"{ms(s['matched'].get('median'))} / {ms(s['matched'].get('p90'))}" if s.get("matched") else "–"],
                     "stop": [last_ms, clicks], "stop_pipewire": [last_ms, clicks],
                     "pause": [last_ms, clicks]}.get(key, [])
            L.append(f"| {name} | {ms(s.get('median'))} | {ms(s.get('p90'))} | {ms(s.get('min'))} | "
                     f"{ms(s.get('max'))} | {s['n']}/{s['n'] + s['failed']} |" + "".join(f" {c} |" for c in cells))
        L.append("")
    L.extend(orca_echo.markdown(r.get("orca_echo")))
    if r.get("loudness"):
        L.append("#### Loudness: one sentence, `spd-say -w -l fr -i VOLUME` (RMS over the voiced part / peak, 16-bit)")
        L.append("")
        L.append("| SSIP volume | speech-dispatcher | a11yd | a11yd − speech-dispatcher |")
        L.append("|---|---:|---:|---:|")
        for volume, row in r["loudness"].items():
            theirs, mine = row.get("speech-dispatcher"), row.get("a11yd")
            cell = lambda x: "?" if not x else f"{x['rms']:,.0f} / {x['peak']:,}"
            diff = f"{20 * math.log10(mine['rms'] / theirs['rms']):+.1f} dB" if mine and theirs else "?"
            L.append(f"| {volume} | {cell(theirs)} | {cell(mine)} | {diff} |")
        L.append("")
    L.extend(piper_markdown(r.get("piper")))
    L.append("#### Memory (MiB, from /proc/PID/smaps_rollup)")
    L.append("")
    L.append("PSS divides each shared page among the processes mapping it; Private is what ending the process "
             "gives back; peak is VmHWM.")
    L.append("")
    L.append("| moment | daemon | process | RSS | PSS | RssAnon | Private | peak RSS | threads |")
    L.append("|---|---|---|---:|---:|---:|---:|---:|---:|")

    def mib(kb):
        return "?" if kb is None else f"{kb / 1024:.1f}"

    for label, snap in r["memory"].items():
        for system, rows in snap.items():
            for row in rows:
                L.append(f"| {label} | {system} | {row['comm']} | {mib(row.get('Rss'))} | {mib(row.get('Pss'))} | "
                         f"{mib(row.get('RssAnon'))} | {mib(row.get('Private'))} | {mib(row.get('VmHWM'))} | "
                         f"{row.get('Threads', '?')} |")
            if len(rows) > 1:
                total = {k: sum(x.get(k) or 0 for x in rows) for k in ("Rss", "Pss", "RssAnon", "Private", "VmHWM")}
                L.append(f"| {label} | {system} | **total** | {mib(total['Rss'])} | {mib(total['Pss'])} | "
                         f"{mib(total['RssAnon'])} | {mib(total['Private'])} | {mib(total['VmHWM'])} | |")
    coverage = r.get("link_order")
    if coverage:
        L.append("")
        L.append(f"a11yd's link order (Sources/a11yd/a11yd.order, `make order-file`): {coverage['found']} of "
                 f"{coverage['names']} names are in this binary.")
    L.append("")
    L.append(f"#### Idle cost over {args.idle_seconds} s of silence")
    L.append("")
    L.append("| moment | process | CPU ms (schedstat) | CPU ms (ticks) | voluntary ctx sw | involuntary ctx sw | "
             "threads exited / created |")
    L.append("|---|---|---:|---:|---:|---:|---:|")
    for label, rows in r["idle"].items():
        for name, v in rows.items():
            if name == "sink inputs":
                continue
            L.append(f"| {label} | {name} | {v['cpu_ms']:.1f} | {v['cpu_ticks_ms']:.0f} | {v['voluntary']} | "
                     f"{v['nonvoluntary']} | {v.get('threads_exited', '?')} / {v.get('threads_created', '?')} |")
    L.append("")
    for label, rows in r["idle"].items():
        streams = ", ".join(f"{i.get('application.process.binary') or i.get('application.name', '?')} "
                            f"(corked: {i.get('corked', '?')})" for i in rows.get("sink inputs", []))
        L.append(f"PulseAudio sink inputs at the end of the idle window '{label}': {streams or 'none'}.")
    L.append("")
    L.append("#### CLI start-up alone (no daemon contact), wall ms")
    L.append("")
    L.append("| command | median ms | p90 ms |")
    L.append("|---|---:|---:|")
    for name, s in r.get("cli_startup", {}).items():
        L.append(f"| `{name}` | {ms(s.get('median'))} | {ms(s.get('p90'))} |")
    L.append("")
    L.extend(language_detection_markdown(r.get("language_detection")))
    L.extend(worker_cost.markdown(r.get("worker_cost"), args.idle_seconds))
    L.extend(cli_and_resume_targets(r))
    L.append(f"Load average before / after the run: {r.get('load_before')} / {r.get('load_after')} "
             "(the two cores are shared with other work).")
    L.append("")
    for name, v in r["throughput"].items():
        L.append(f"Synthesis throughput, {name}: {v['audio_s']:.1f} s of audio in {v['wall_s'] * 1000:.0f} ms "
                 f"({v['x_realtime']:.0f}x real time, process start-up included).")
    for note in r["notes"]:
        L.append(f"Note: {note}.")
    return "\n".join(L) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--a11yd-pid", type=int, required=True)
    p.add_argument("--a11yd-socket", required=True)
    p.add_argument("--a11yd-ssip-socket", required=True)
    p.add_argument("--speechd-pid", type=int, required=True)
    p.add_argument("--speechd-socket", required=True)
    p.add_argument("--pulse-pid", type=int, required=True)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--control-runs", type=int, default=10)
    p.add_argument("--utterances", type=int, default=50)
    p.add_argument("--idle-seconds", type=float, default=10)
    p.add_argument("--out", required=True)
    p.add_argument("--orca-blocks", type=int, default=2)
    p.add_argument("--recorder-ms", type=int, default=RECORDER_MS,
                   help="the monitor recorder's latency, which sets the null sink's mix block (1 or 5)")
    p.add_argument("--pipewire-server", help="a private PipeWire's pulse server (unix:PATH) for stop_pipewire")
    p.add_argument("--pipewire-a11yd-socket", help="the a11yd playing to it")
    p.add_argument("--pipewire-speechd-socket", help="the speech-dispatcher playing to it")
    p.add_argument("--only", help="run one part alone: a Bench method (orca_echo, first_sound, cli_startup…)")
    args = p.parse_args()
    bench = Bench(args)
    bench.results["versions"] = tool_versions()
    try:
        bench.run_only(args.only) if args.only else bench.run()
    finally:
        if bench.rec:
            bench.rec.close()
    md = markdown(bench.results, args)
    with open(args.out + ".json", "w") as f:
        json.dump(bench.results, f, indent=1, ensure_ascii=False)
    with open(args.out + ".md", "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
