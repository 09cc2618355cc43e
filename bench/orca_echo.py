#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Orca's key echo, headless, against a11yd and speech-dispatcher in the same run.

Orca 43 runs on Xvfb with a session D-Bus and the AT-SPI bus (as scripts/orca-ssip-test.sh sets them up),
with Debian's defaults (key echo on), speaking through a timestamping SSIP proxy in this process to one
server at a time; Orca is restarted for each block of keys and the blocks alternate between the servers,
so load hits both. Keys are sent with XTEST through libXtst (ctypes), timestamped just before the X
request is flushed: no xdotool process start in the measured time. Per key:

- key → first sound: the first |sample| > LOUD at the null sink's monitor (the bench's Recorder);
- key → SPEAK: the proxy's time of the `.` that ends Orca's SPEAK body (the server cannot start before);
- SPEAK → first sound: the server's share;
- `701 BEGIN`, the first `700` mark and `702 END` as the proxy forwarded them, relative to the first sound.

The proxy's hop costs both servers the same (a read and a write in one select loop, tens of µs).
Used by bench.py (`measure`, `markdown`); alone: `BENCH_ONLY=orca_echo bench/run.sh`.
"""
import bisect
import ctypes
import json
import os
import select
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time

import numpy as np

LETTERS = "abcdefghijklmnopqrstuvwx"   # 24 keys per block
TYPING_INTERVAL = 0.15                  # a fast typist: each echo is cut by the next key
RATE_GUESS = 48000                      # the recorder's rate (bench.py's RATE)
WINDOW = """
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
window = Gtk.Window(title="a11y-orca-echo")
entry = Gtk.Entry()
window.add(entry)
window.connect("destroy", Gtk.main_quit)
window.show_all()
entry.grab_focus()
Gtk.main()
"""


def now():
    return time.monotonic()


# ---------------------------------------------------------------------------------------------
class TimedProxy:
    """An SSIP proxy on a Unix socket: every connection is relayed to `upstream`, and every line each
    way is recorded with the monotonic time it was read. `upstream` may change between Orca sessions."""

    def __init__(self, path):
        self.path = path
        self.upstream = None
        self.lines = []          # (time, connection number, "C" or "S", line)
        self.lock = threading.Lock()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.wake_r, self.wake_w = os.pipe()
        self.running = True
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        peers = {}      # socket → (other socket, connection number, direction, partial line)
        count = 0
        while self.running:
            readable, _, _ = select.select([self.listener, self.wake_r, *peers], [], [])
            for s in readable:
                if s is self.listener:
                    client, _ = self.listener.accept()
                    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    try:
                        up.connect(self.upstream)
                    except OSError:
                        client.close()
                        continue
                    count += 1
                    peers[client] = [up, count, "C", b""]
                    peers[up] = [client, count, "S", b""]
                    continue
                if s == self.wake_r:
                    os.read(self.wake_r, 64)
                    continue
                if s not in peers:
                    continue
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                t = now()
                other, number, direction, partial = peers[s]
                if not data:
                    for x in (s, other):
                        peers.pop(x, None)
                        x.close()
                    continue
                try:
                    other.sendall(data)
                except OSError:
                    pass
                *complete, rest = (partial + data).split(b"\n")
                peers[s][3] = rest
                with self.lock:
                    for line in complete:
                        self.lines.append((t, number, direction, line.rstrip(b"\r").decode("utf-8", "replace")))

    def since(self, t0):
        with self.lock:
            return [x for x in self.lines if x[0] >= t0]

    def close(self):
        self.running = False
        os.write(self.wake_w, b"x")
        self.thread.join(2)
        self.listener.close()


class Keyboard:
    """Key presses through XTEST on one open X connection."""

    def __init__(self, display):
        self.x11 = ctypes.CDLL("libX11.so.6")
        self.xtst = ctypes.CDLL("libXtst.so.6")
        self.x11.XOpenDisplay.restype = ctypes.c_void_p
        self.x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        self.x11.XStringToKeysym.restype = ctypes.c_ulong
        self.x11.XStringToKeysym.argtypes = [ctypes.c_char_p]
        self.x11.XKeysymToKeycode.restype = ctypes.c_ubyte
        self.x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        self.x11.XFlush.argtypes = [ctypes.c_void_p]
        self.x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        self.display = self.x11.XOpenDisplay(display.encode())
        if not self.display:
            raise RuntimeError(f"cannot open display {display}")

    def press(self, name):
        """Presses and releases a key; returns the time just before the press was flushed."""
        code = self.x11.XKeysymToKeycode(self.display, self.x11.XStringToKeysym(name.encode()))
        self.xtst.XTestFakeKeyEvent(self.display, code, 1, 0)
        t = now()
        self.x11.XFlush(self.display)
        time.sleep(0.03)
        self.xtst.XTestFakeKeyEvent(self.display, code, 0, 0)
        self.x11.XSync(self.display, 0)
        return t


class Desktop:
    """Xvfb, a session D-Bus, the AT-SPI bus and registry, in a private folder (orca-ssip-test.sh's set-up)."""

    def __init__(self, log):
        self.log = log
        self.work = tempfile.mkdtemp(prefix="a11yd-orca-echo.")
        self.procs = []
        home, run, config = (os.path.join(self.work, x) for x in ("home", "run", "config"))
        for d in (home, run, os.path.join(config, "speech-dispatcher")):
            os.makedirs(d, mode=0o700)
        with open(os.path.join(config, "speech-dispatcher", "speechd.conf"), "w") as f:
            f.write("DisableAutoSpawn\n")
        self.env = dict(os.environ, HOME=home, XDG_RUNTIME_DIR=run, XDG_CONFIG_HOME=config,
                        GSETTINGS_BACKEND="memory", NO_AT_BRIDGE="0", SPEECHD_CMD="/bin/false")
        self.env.pop("SPEECHD_ADDRESS", None)
        # The system's data folders, whatever run.sh set for a11yd (XDG_DATA_DIRS=/nonexistent once the
        # natural voice is installed): without them GLib finds no GSettings schemas and Orca exits at once.
        self.env.pop("XDG_DATA_DIRS", None)
        self.env.pop("XDG_DATA_HOME", None)
        # Xvfb picks a free display and writes its number on a pipe: no clash with other runs.
        r, w = os.pipe()
        self._start(["Xvfb", "-displayfd", str(w), "-screen", "0", "1024x768x24", "-nolisten", "tcp"], pass_fds=(w,))
        os.close(w)
        number = b""
        deadline = now() + 15
        while not number.endswith(b"\n") and now() < deadline:
            ready, _, _ = select.select([r], [], [], 1)
            if ready:
                chunk = os.read(r, 16)
                if not chunk:
                    break
                number += chunk
        os.close(r)
        if not number.strip():
            raise RuntimeError("Xvfb did not start")
        self.display = ":" + number.decode().strip()
        self.env["DISPLAY"] = self.display
        bus = os.path.join(run, "bus")
        self._start(["dbus-daemon", "--session", f"--address=unix:path={bus}", "--nofork", "--nopidfile"])
        self.env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={bus}"
        self._wait(lambda: os.path.exists(bus), 5)
        self._start(["/usr/libexec/at-spi-bus-launcher", "--launch-immediately"])
        time.sleep(0.5)
        self._start(["/usr/libexec/at-spi2-registryd"])
        time.sleep(0.3)

    def _start(self, argv, **kw):
        p = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, **kw)
        self.procs.append(p)
        return p

    @staticmethod
    def _wait(condition, seconds):
        deadline = now() + seconds
        while not condition():
            if now() > deadline:
                return False
            time.sleep(0.05)
        return True

    def window(self):
        path = os.path.join(self.work, "window.py")
        with open(path, "w") as f:
            f.write(WINDOW)
        p = subprocess.Popen(["/usr/bin/python3", path], env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ok = self._wait(lambda: subprocess.run(["xdotool", "search", "--name", "a11y-orca-echo"], env=self.env,
                                               capture_output=True).returncode == 0, 10)
        if not ok:
            p.kill()
            raise RuntimeError("the test window did not appear")
        wid = subprocess.run(["xdotool", "search", "--name", "a11y-orca-echo"], env=self.env, capture_output=True,
                             text=True).stdout.split()[0]
        # No window manager: focus it directly.
        subprocess.run(["xdotool", "windowfocus", wid], env=self.env, capture_output=True)
        return p

    def orca(self, proxy_path, voice=None):
        """Orca on `proxy_path`; `voice`: a Piper voice Orca's own preferences choose (the `piper`
        synthesizer and that voice, as its preferences dialog saves them), else Debian's defaults."""
        settings = os.path.join(self.env["HOME"], ".local", "share", "orca", "user-settings.conf")
        if voice is None:
            if os.path.exists(settings):
                os.remove(settings)
        else:
            os.makedirs(os.path.dirname(settings), exist_ok=True)
            family = {"family": {"name": voice, "lang": "en", "dialect": "US", "variant": None}}
            profile = {"profile": ["Default", "default"], "speechServerFactory": "speechdispatcherfactory",
                       "speechServerInfo": ["piper", "piper"],
                       "voices": {"default": family, "uppercase": {"average-pitch": 7.0}, "hyperlink": {}, "system": {}}}
            with open(settings, "w") as f:
                json.dump({"general": dict(profile), "profiles": {"default": profile}, "pronunciations": {},
                           "keybindings": {}}, f, indent=4)
        env = dict(self.env, SPEECHD_ADDRESS="unix_socket:" + proxy_path)
        return subprocess.Popen(["/usr/bin/orca", "--disable", "braille"], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    @staticmethod
    def end(procs):
        """Stops processes we started: TERM, then KILL (Orca acts on TERM only when AT-SPI wakes it)."""
        for p in procs:
            if p.poll() is None:
                p.terminate()
        deadline = now() + 1
        for p in procs:
            try:
                p.wait(max(0.05, deadline - now()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(3)

    def close(self):
        # The AT-SPI bus launcher's own dbus-daemon is its child: found by parent before it goes.
        extra = []
        for p in self.procs:
            out = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
            extra += [int(x) for x in out]
        self.end(list(reversed(self.procs)))
        for pid in extra:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.work, ignore_errors=True)


class PcmWrites:
    """When each server handed PCM to libpulse: a perf uprobe on libpulse's pa_stream_write, every process,
    on the monotonic clock (so comparable with the proxy's times). Only as root with perf; else nothing.
    The probe is added for the run and removed after if this run added it."""

    LIB = "/usr/lib/x86_64-linux-gnu/libpulse.so.0"
    EVENT = "probe_libpulse:pa_stream_write"

    def __init__(self, work, log):
        self.proc = None
        self.added = False
        self.data = os.path.join(work, "pcm-writes.data")
        if os.geteuid() != 0 or not shutil.which("perf") or not os.path.exists(self.LIB):
            return
        listed = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True).stdout
        if self.EVENT not in listed:
            added = subprocess.run(["perf", "probe", "-x", self.LIB, "--add", "pa_stream_write"], capture_output=True)
            if added.returncode != 0:
                log("orca echo: no perf uprobe on pa_stream_write; PCM write times not measured")
                return
            self.added = True
        self.proc = subprocess.Popen(["perf", "record", "-q", "-e", self.EVENT, "-a", "-k", "CLOCK_MONOTONIC",
                                      "-o", self.data], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        time.sleep(1)   # perf is attached

    def stop(self):
        """Per pid, the sorted times of its pa_stream_write calls."""
        times = {}
        if self.proc is None:
            return times
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(3)
        out = subprocess.run(["perf", "script", "-i", self.data, "-F", "pid,time"], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            fields = line.replace(":", " ").split()
            if len(fields) >= 2:
                times.setdefault(int(fields[0]), []).append(float(fields[1]))
        if self.added:
            subprocess.run(["perf", "probe", "-d", self.EVENT], capture_output=True)
        return {pid: sorted(t) for pid, t in times.items()}


# ---------------------------------------------------------------------------------------------
def analyse(lines, t_key, connection):
    """What the proxy saw for one key on Orca's main connection: times of its first line, of the end of
    its SPEAK body, of the 225, and of the first 701, 700 and 702 after it."""
    out = {"first_line": None, "speak": None, "queued": None, "begin": None, "mark": None, "end": None,
           "commands": []}
    receiving = False
    for t, conn, direction, line in lines:
        if conn != connection:
            continue   # the preferences connection, if any
        if direction == "C":
            if out["first_line"] is None:
                out["first_line"] = t
            if out["speak"] is None:
                if receiving:
                    if line == ".":
                        out["speak"] = t
                        receiving = False
                    else:
                        out.setdefault("body", line)
                elif line.upper() == "SPEAK":
                    receiving = True
                out["commands"].append((t - t_key, line))
        elif out["speak"] is not None:
            code = line[:4]
            if code == "225 " and out["queued"] is None:
                out["queued"] = t
            elif code == "701 " and out["begin"] is None:
                out["begin"] = t
            elif code == "700 " and out["mark"] is None:
                out["mark"] = t
            elif code == "702 " and out["end"] is None:
                out["end"] = t
    return out


def block(desktop, proxy, rec, server, upstream, keys, log, loud, voice=None):
    """One Orca session against `upstream` (in the Piper `voice` when given): start, wait for its greeting
    to end, type `keys`."""
    proxy.upstream = upstream
    t_start = now()
    orca = desktop.orca(proxy.path, voice)
    window = None
    rows = []
    echoes = {}   # letter → where its first echo after silence turned loud (the recording's sample)
    try:
        # Ready once its greeting ("Screen reader on.") has been spoken and the sink is quiet again.
        deadline = now() + 30
        while not any(d == "C" and l.upper() == "SPEAK" for _, _, d, l in proxy.since(t_start)):
            if now() > deadline or orca.poll() is not None:
                raise RuntimeError(f"Orca never spoke to {server}")
            time.sleep(0.1)
        rec.wait_quiet(rec.count(), 500, 15)
        window = desktop.window()
        time.sleep(1.0)
        rec.wait_quiet(rec.count(), 500, 15)
        connection = proxy.since(t_start)[0][1]   # Orca's first connection: the one that speaks
        keyboard = Keyboard(desktop.display)
        for letter in keys:
            rec.wait_quiet(rec.count(), 300, 10)
            n0 = rec.count()
            t_key = keyboard.press(letter)
            k = rec.wait_loud(n0, loud, 3)
            rec.wait_quiet(rec.count(), 300, 10)
            time.sleep(0.1)   # late events (702) still arrive
            seen = analyse(proxy.since(t_key), t_key, connection)
            t_sound = rec.time_of(k) if k is not None else None
            # The sample-by-sample clock (Recorder.time_of's "envelope"), for comparison.
            t_envelope = rec.time_of(k, clock="envelope") if k is not None else None
            t_arrival = rec.time_of(k, clock="arrival") if k is not None else None
            rows.append({"key": letter, "t_key": t_key, "sound": t_sound, "sound_envelope": t_envelope,
                         "sound_arrival": t_arrival, **seen})
            if k is not None:
                echoes.setdefault(letter, k)
        rows += typing(keyboard, proxy, rec, keys, connection, loud, echoes)
        return rows
    finally:
        Desktop.end([p for p in (window, orca) if p is not None])
        time.sleep(0.3)


def typing(keyboard, proxy, rec, keys, connection, loud, echoes, interval=TYPING_INTERVAL):
    """The same keys typed at a typist's pace, each echo cutting the previous one (Orca's CANCEL): the
    new echo's first sound is the first loud sample after the old one fell silent (≥ 2 ms at or below
    QUIET) since the key; and, where the new echo may begin before the old one has fallen silent (a11yd
    mixes it into the old one's ramp), where the same letter's echo after silence (`echoes`) is found
    again (`onset_by_match`), for both servers alike."""
    rec.wait_quiet(rec.count(), 300, 10)
    presses = []
    start = now()
    for i, letter in enumerate(keys):
        time.sleep(max(0.0, start + i * interval - now()))
        n0 = rec.count()
        presses.append((letter, n0, keyboard.press(letter)))
    rec.wait_quiet(rec.count(), 500, 10)
    time.sleep(0.1)
    rows = []
    for i, (letter, n0, t_key) in enumerate(presses):
        t_next = presses[i + 1][2] if i + 1 < len(presses) else now()
        n_next = presses[i + 1][1] if i + 1 < len(presses) else rec.count()
        seen = analyse([x for x in proxy.since(t_key) if x[0] < t_next], t_key, connection)
        k = onset_after_gap(rec, n0, n_next + RATE_GUESS // 50, loud)
        m = onset_by_match(rec, n0, n_next + RATE_GUESS // 50, echoes[letter]) if letter in echoes else None
        rows.append({"key": letter, "typing": True, "t_key": t_key, "sound": rec.time_of(k) if k is not None else None,
                     "sound_matched": rec.time_of(m) if m is not None else None,
                     "sound_envelope": None, "sound_arrival": None, **seen})
    return rows


def onset_by_match(rec, n0, n_end, reference, lead=RATE_GUESS * 3 // 1000, length=RATE_GUESS * 6 // 1000,
                   least=0.8, near=0.9):
    """Where the echo whose loud onset after silence was at sample `reference` starts again in
    [n0, n_end): its 3 ms before and 6 ms after that onset (its attack) are found by normalised
    cross-correlation (the same letter in the same voice is the same sound; what is left of an echo it
    cuts only lowers the match), and the loud onset is as far into the match as it was into the
    reference. The earliest match within `near` of the best is taken: a steady vowel matches again a
    pitch period or two later, and the true start, mixed with the end of the echo it cuts, may score
    a little lower than those. None when nothing matches by at least `least`."""
    template = rec.samples(reference - lead, reference + length).astype(np.float64)
    segment = rec.samples(n0, n_end).astype(np.float64)
    if template.size < lead + length or segment.size < template.size:
        return None
    products = np.correlate(segment, template, mode="valid")
    energy = np.convolve(segment * segment, np.ones(template.size), mode="valid")
    score = products / (np.sqrt(np.maximum(energy, 1e-9) * float(template @ template)) + 1e-9)
    best = float(score.max())
    if best < least:
        return None
    first = int(np.nonzero(score >= near * best)[0][0])
    # The top of that match: the first local maximum from there.
    while first + 1 < score.size and score[first + 1] > score[first]:
        first += 1
    return n0 + first + lead


def onset_after_gap(rec, n0, n_end, loud, quiet=200, gap=RATE_GUESS // 500):
    """First |sample| > loud after the first run of `gap` samples at or below `quiet`, from n0; or None."""
    s = abs(rec.samples(n0, n_end))
    run = 0
    for i, x in enumerate(s > quiet):
        run = 0 if x else run + 1
        if run >= gap:
            hits = (s[i:] > loud).nonzero()[0]
            return n0 + i + int(hits[0]) if hits.size else None
    return None


def _median(values):
    ok = [v for v in values if v is not None]
    return {"n": len(ok), "median": statistics.median(ok) if ok else None,
            "min": min(ok) if ok else None, "max": max(ok) if ok else None}


def summary(rows, typing=False):
    rows = [r for r in rows if bool(r.get("typing")) == typing]
    def d(a, b):
        return lambda r: (r[b] - r[a]) if r.get(a) is not None and r.get(b) is not None else None
    measures = {
        "key → first sound": d("t_key", "sound"),
        "key → first sound, found by matching the same letter's echo after silence": d("t_key", "sound_matched"),
        "key → Orca's first line": d("t_key", "first_line"),
        "key → SPEAK (end of its body)": d("t_key", "speak"),
        "SPEAK → 225": d("speak", "queued"),
        "SPEAK → first PCM handed to libpulse (perf uprobe)": d("speak", "pcm"),
        "first PCM handed to libpulse → first sound": d("pcm", "sound"),
        "SPEAK → first sound": d("speak", "sound"),
        "SPEAK → first sound, dated sample by sample (the envelope clock)": d("speak", "sound_envelope"),
        "SPEAK → first sound, as the recording arrived here": d("speak", "sound_arrival"),
        "701 BEGIN − first sound": d("sound", "begin"),
        "first 700 mark − first sound": d("sound", "mark"),
        "702 END − first sound": d("sound", "end"),
    }
    return {name: _median([f(r) for r in rows]) for name, f in measures.items()}


def measure(rec, servers, log, blocks=2, loud=1000, pids=None):
    """Alternating blocks of 24 keys per server (`servers`: name → SSIP socket path, or (path, Piper voice)
    for Orca speaking in that voice; `pids`: name → the server's processes, for the PCM write times).
    Returns raw rows and medians per server."""
    desktop = Desktop(log)
    proxy = TimedProxy(os.path.join(desktop.work, "proxy.sock"))
    rows = {name: [] for name in servers}
    writes = PcmWrites(desktop.work, log) if pids else None
    try:
        for b in range(blocks):
            for name, server in servers.items():
                path, voice = server if isinstance(server, tuple) else (server, None)
                try:
                    got = block(desktop, proxy, rec, name, path, LETTERS, log, loud, voice)
                except RuntimeError as e:
                    log(f"orca echo, {name}, block {b + 1}: {e}")
                    continue
                for r in got:
                    r["block"] = b   # a11yd says a letter of a later block again from memory (SpeechMemory)
                rows[name] += got
                s = summary(got)
                log(f"orca echo block {b + 1}/{blocks}, {name}: key→sound "
                    f"{fmt(s['key → first sound']['median'])} ms, SPEAK→sound {fmt(s['SPEAK → first sound']['median'])} ms, "
                    f"701−sound {fmt(s['701 BEGIN − first sound']['median'])} ms")
    finally:
        written = writes.stop() if writes else {}
        proxy.close()
        desktop.close()
    for name in rows:
        # The server's first PCM write after the SPEAK's end.
        mine = sorted(t for pid in (pids or {}).get(name, []) for t in written.get(pid, []))
        for r in rows[name]:
            i = bisect.bisect_left(mine, r["speak"]) if r["speak"] is not None else len(mine)
            r["pcm"] = mine[i] if i < len(mine) and mine[i] - r["speak"] < 1 else None
    for name in rows:
        for r in rows[name]:
            r["commands"] = [(round(t * 1000, 3), line) for t, line in r["commands"]]
    return {"servers": {name: {"summary": summary(r), "typing": summary(r, typing=True), "rows": r}
                        for name, r in rows.items()},
            "typing_interval": TYPING_INTERVAL, "recorder_ms": rec.latency_ms,
            "keys_per_block": len(LETTERS), "blocks": blocks}


def fmt(x):
    return "–" if x is None else f"{x * 1000:.1f}"


def markdown(result):
    """The table for bench.py's report: medians per server, and their targets (key echo ≤ 0.5× speech-dispatcher's,
    a11yd's share after the SPEAK ≤ 2 ms)."""
    if not result:
        return []
    servers = result["servers"]
    names = list(servers)
    L = []
    for part, title in (
            ("summary", f"Orca's key echo, headless (Orca 43 on Xvfb, {result['blocks']} alternating blocks of "
                        f"{result['keys_per_block']} letters per server, each key after silence; medians, ms; "
                        "min–max in brackets)"),
            ("typing", f"Orca's key echo while typing: the same letters {result['typing_interval'] * 1000:.0f} ms "
                       "apart, each echo cut by the next key (first sound: the first loud sample after the old "
                       "echo fell silent, or where the same letter's echo after silence is found again; medians, ms)")):
        L += [f"#### {title}", "", "| measure | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
        for measure_name in servers[names[0]][part]:
            if part == "typing" and ("dated" in measure_name or "arrived" in measure_name):
                continue   # one clock is enough here
            if part == "summary" and "found by matching" in measure_name:
                continue   # after silence the old echo has ended: the first meter is enough
            cells = []
            for n in names:
                m = servers[n][part][measure_name]
                cells.append(f"{fmt(m['median'])} ({fmt(m['min'])}–{fmt(m['max'])}, n={m['n']})" if m["n"] else "–")
            L.append(f"| {measure_name} | " + " | ".join(cells) + " |")
        L.append("")
    mine = servers.get("a11yd", {}).get("summary", {})
    theirs = servers.get("speech-dispatcher", {}).get("summary", {})
    echo, echo_spd = (x.get("key → first sound", {}).get("median") for x in (mine, theirs))
    share = mine.get("SPEAK → first sound", {}).get("median")
    if echo is not None and echo_spd:
        L.append(f"Key echo → sound: a11yd {fmt(echo)} ms, speech-dispatcher {fmt(echo_spd)} ms, ratio "
                 f"{echo / echo_spd:.2f}× (target ≤ 0.5×: {'met' if echo <= 0.5 * echo_spd else 'not met'}); "
                 f"a11yd's share after the SPEAK {fmt(share)} ms (target ≤ 2 ms: "
                 f"{'met' if share is not None and share <= 0.002 else 'not met'}).")
        L.append("")
    natural = servers.get("a11yd, natural voice", {}).get("summary", {}).get("key → first sound", {}).get("median")
    if natural is not None and echo is not None:
        L.append(f"Orca's key echo in the natural voice (its echoes said ahead): {fmt(natural)} ms, against "
                 f"{fmt(echo)} ms in eSpeak" + (f" and speech-dispatcher's {fmt(echo_spd)} ms." if echo_spd else "."))
        L.append("")
    def after_silence(name, blocks):
        rows = [r for r in servers.get(name, {}).get("rows", []) if r.get("block", 0) in blocks]
        return summary(rows)["key → first sound"]["median"]
    first, again = after_silence("a11yd", {0}), after_silence("a11yd", set(range(1, result["blocks"])))
    if echo_spd and first is not None and again is not None:
        L.append(f"a11yd keeps the audio of short utterances it said (`SpeechMemory`) and says them again from it: "
                 f"each letter's first echo (block 1) {fmt(first)} ms ({first / echo_spd:.2f}×), said again "
                 f"(later blocks) {fmt(again)} ms ({again / echo_spd:.2f}×), against speech-dispatcher's "
                 f"{fmt(echo_spd)} ms over all blocks.")
        L.append("")
    pcm = mine.get("SPEAK → first PCM handed to libpulse (perf uprobe)", {}).get("median")
    if pcm is not None:
        L.append(f"a11yd's own work after the SPEAK, to its first PCM handed to libpulse: {fmt(pcm)} ms.")
        L.append("")
    block_ms = result.get("recorder_ms", 5)
    L.append(f"The recorder runs the null sink with {block_ms} ms blocks. What it adds on this sink (read in "
             "PulseAudio 16.1's sources, BENCHMARKS.md): a new stream's first sound is always mixed at once, by a "
             "rewind, but when another stream stands on the sink (speech-dispatcher's own, uncorked and idle after "
             "speaking; a11yd's corked one for speech-dispatcher; an idle `pacat` does the same) the re-mixed block "
             "is split in two, the monitor never delivers the first part and holds the second back by the rewind's "
             f"size, so a large rewind reaches the recording up to one block ({block_ms} ms) late: \"first PCM "
             "handed to libpulse → first sound\" shows it. A hardware sink plays the rewound mix at once.")
    L.append("")
    return L
