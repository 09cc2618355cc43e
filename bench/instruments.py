# SPDX-License-Identifier: GPL-3.0-or-later
"""What bench.py and worker_cost.py measure with (standard library + numpy): the null sink's monitor recorded
(Recorder), a JSON Lines client of a11yd (A11ydClient), a process's memory, CPU and children from /proc, and
the statistics and figures of their reports. Neither imports the other: both import this.
"""
import bisect
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

RATE = 48000
RECORDER_MS = 1     # parec's fragments (--latency-msec): the null sink then mixes this many ms at once
LOUD = 1000          # |sample| above this (about -30 dBFS) is sound; eSpeak's lead-in is below it
QUIET = 200          # |sample| at or below this is silence when looking for the start of sound


def now():
    return time.monotonic()


def log(*args):
    print("bench:", *args, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
class Recorder:
    """The null sink's monitor, recorded with `latency_ms` fragments.

    The recorder's latency is the sink's: the null sink mixes `latency_ms` at once. At 5 ms (this bench
    before issue 21's last run), PulseAudio 16.1 delivers a rewound first sound one 5 ms block late to
    the monitor whenever another stream stands on the sink, although the sink mixed it at once
    (BENCHMARKS.md, "the late first sound"): a third of Orca's echoes read 5 ms late, for both servers.
    At 1 ms the same artefact is at most 1 ms, and the mix block dates samples to 1 ms."""

    def __init__(self, latency_ms=None, server=None):
        self.latency_ms = latency_ms or RECORDER_MS
        self.block = RATE * self.latency_ms // 1000
        # `server`: another pulse server's address (PipeWire's, stop_pipewire) instead of PULSE_SERVER's.
        env = dict(os.environ, PULSE_SERVER=server) if server else None
        self.proc = subprocess.Popen(
            ["parec", "--device=nullsink.monitor", "--format=s16le", f"--rate={RATE}", "--channels=1",
             f"--latency-msec={self.latency_ms}", "--raw"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, env=env)
        self.buf = bytearray()
        self.ends = []   # sample count after each read
        self.times = []  # monotonic time of each read
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        fd = self.proc.stdout.fileno()
        while True:
            data = os.read(fd, 65536)
            t = now()
            if not data:
                return
            with self.lock:
                self.buf += data
                self.ends.append(len(self.buf) // 2)
                self.times.append(t)

    def count(self):
        with self.lock:
            return len(self.buf) // 2

    def samples(self, start, end=None):
        with self.lock:
            end = len(self.buf) // 2 if end is None else min(end, len(self.buf) // 2)
            return np.frombuffer(bytes(self.buf[2 * start:2 * end]), dtype="<i2").astype(np.int32)

    def time_of(self, k, clock="mixed"):
        """Monotonic time at which the null sink mixed sample k (`clock="mixed"`).

        The null sink renders (mixes) a block of samples (the recorder's latency) at once, when its
        timer fires or when a stream's new data makes it rewind, up to one block ahead of the samples'
        nominal play times, and the monitor hands the block on at once: every sample of a block exists
        from the block's render time. That is the lower envelope of the read times taken at the end of
        k's block. The envelope taken at k itself (`"envelope"`, this bench's clock before issue 21)
        assumes samples are mixed one by one in real time, so it dates a sample up to a block before it
        was mixed: a whole block for the first sample of a block, as after a resume (the negative
        latencies of earlier runs). `"arrival"`: the time the read holding k arrived here, never early,
        late by the transport and any load."""
        with self.lock:
            i = bisect.bisect_left(self.ends, k + 1)
            if i == len(self.ends):
                return None
            if clock == "arrival":
                return self.times[i]
            # The end of k's block: reads end on block boundaries (parec's fragments), several blocks
            # at once when the reader was late.
            at = k + 1 + (self.ends[i] - k - 1) % self.block if clock == "mixed" else k
            best = None
            j = bisect.bisect_left(self.ends, at) if clock == "mixed" else i
            while j < len(self.ends) and self.ends[j] - at <= RATE:  # reads within 1 s after it
                est = self.times[j] - (self.ends[j] - at) / RATE
                best = est if best is None else min(best, est)
                j += 1
            return best

    def wait_flowing(self, seconds=2.5):
        start = self.count()
        deadline = now() + 10
        while self.count() - start < seconds * RATE and now() < deadline:
            time.sleep(0.05)
        return self.count() - start >= seconds * RATE

    def wait_loud(self, n0, threshold, timeout):
        """First index >= n0 whose |sample| > threshold, or None after timeout seconds."""
        pos = n0
        deadline = now() + timeout
        while True:
            s = self.samples(pos)
            hits = np.nonzero(np.abs(s) > threshold)[0]
            if hits.size:
                return pos + int(hits[0])
            pos += s.size
            if now() > deadline:
                return None
            time.sleep(0.002)

    def wait_quiet(self, n0, quiet_ms, timeout, threshold=QUIET):
        """Waits until quiet_ms of samples <= threshold follow the last loud one after n0.
        Returns the index just after the last loud sample (n0 if none), or None on timeout."""
        last_loud_end = n0
        pos = n0
        need = int(RATE * quiet_ms / 1000)
        deadline = now() + timeout
        while True:
            s = self.samples(pos)
            loud = np.nonzero(np.abs(s) > threshold)[0]
            if loud.size:
                last_loud_end = pos + int(loud[-1]) + 1
            pos += s.size
            if pos - last_loud_end >= need:
                return last_loud_end
            if now() > deadline:
                return None
            time.sleep(0.01)

    def settle(self, quiet_ms=300, timeout=15):
        return self.wait_quiet(self.count(), quiet_ms, timeout) is not None

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(3)


# ---------------------------------------------------------------------------------------------
class A11ydClient:
    """Raw JSON Lines client; keeps one connection, a thread drains replies and events."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.lines = queue.Queue()
        self.finished = {}
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        f = self.sock.makefile("rb")
        for line in f:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("event") == "finished":
                self.finished[msg.get("utterance")] = msg
            self.lines.put(msg)

    def send(self, obj):
        self.sock.sendall(request_line(obj))

    def post(self, text, **kw):
        self.send(post_request(text, **kw))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def never_said_rate(step):
    """A JSON Lines `rate` a step (0.004, about 2 wpm) above the default per `step` (1, 2, …): each step is
    an utterance a11yd's memory of what it said (SpeechMemory) has never heard, so the engine says it, where
    the same short text again would be replayed."""
    return 0.5 + 0.004 * step


def post_request(text, **kw):
    """A JSON Lines post in French, with any other fields."""
    return {"op": "post", "text": text, "lang": "fr", **kw}


def request_line(obj):
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode()


def stats(values):
    ok = sorted(v for v in values if v is not None)
    if not ok:
        return {"n": 0, "failed": len(values)}
    p90 = ok[min(len(ok) - 1, int(round(0.9 * (len(ok) - 1))))]
    return {"n": len(ok), "failed": len(values) - len(ok), "median": statistics.median(ok), "p90": p90,
            "min": ok[0], "max": ok[-1]}


def ms(x):
    return "–" if x is None else f"{x * 1000:.1f}"


# ---------------------------------------------------------------------------------------------
def proc_tasks(pid):
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return out


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def memory(pid):
    """kB from /proc/PID/smaps_rollup: Rss, Pss (shared pages divided among the processes mapping them),
    RssAnon (its Anonymous: heap, stacks, dirty data), Private (Private_Clean + Private_Dirty: what ending
    the process gives back); VmHWM (peak RSS) and Threads from /proc/PID/status."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "Threads"):
                values[key] = int(rest.split()[0])
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            rollup = {}
            for line in f:
                key, _, rest = line.partition(":")
                fields = rest.split()
                if fields and fields[0].isdigit():
                    rollup[key] = int(fields[0])
        values["Rss"] = rollup.get("Rss")
        values["Pss"] = rollup.get("Pss")
        values["RssAnon"] = rollup.get("Anonymous")
        values["Private"] = rollup.get("Private_Clean", 0) + rollup.get("Private_Dirty", 0)
    except OSError:
        pass
    return values


def cpu(pid):
    """Process-wide CPU ticks (from stat, dead threads included) and, per live thread, ns on CPU
    (schedstat) and context switches (status); threads are keyed by tid so deltas can skip exits."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    threads = {}
    for tid in proc_tasks(pid):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run_ns = int(f.read().split()[0])
            vol = nonvol = 0
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        vol = int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        nonvol = int(line.split()[1])
            threads[tid] = (run_ns, vol, nonvol)
        except OSError:
            pass  # thread gone meanwhile
    return {"ticks": ticks, "threads": threads}


def cpu_delta(before, after):
    """Sums per-thread deltas over the threads alive at the end (new threads count from zero);
    what threads that exited during the window did is lost (reported as a count)."""
    run_ns = vol = nonvol = 0
    for tid, (r, v, n) in after["threads"].items():
        r0, v0, n0 = before["threads"].get(tid, (0, 0, 0))
        run_ns += r - r0
        vol += v - v0
        nonvol += n - n0
    exited = len(set(before["threads"]) - set(after["threads"]))
    created = len(set(after["threads"]) - set(before["threads"]))
    return {"run_ns": run_ns, "vol": vol, "nonvol": nonvol, "ticks": after["ticks"] - before["ticks"],
            "threads_exited": exited, "threads_created": created}
