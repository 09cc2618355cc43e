# SPDX-License-Identifier: GPL-3.0-or-later
"""What the bench scripts (bench.py, worker_cost.py, orca_echo.py, soak.py) measure and speak with: the null
sink's monitor recorded (Recorder), a client per protocol a11yd speaks (A11ydClient for JSON Lines, SSIPClient
for SSIP), a process's memory, CPU and children from /proc, and the statistics and figures of their reports.
None of them imports another: all import this.

Standard library + numpy; the soak uses none of what needs numpy (its recorder's samples come back as
plain floats: `Recorder.stop`), so it runs where numpy is not installed.
"""
import array
import asyncio
import bisect
import collections
import concurrent.futures
import itertools
import json
import os
import queue
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

try:
    import numpy as np
except ImportError:  # the soak (`make soak` installs no numpy): Recorder.samples and the waits need it
    np = None

RATE = 48000
RECORDER_MS = 1     # parec's fragments (--latency-msec): the null sink then mixes this many ms at once
LOUD = 1000          # |sample| above this (about -30 dBFS) is sound; eSpeak's lead-in is below it
QUIET = 200          # |sample| at or below this is silence when looking for the start of sound


def now():
    return time.monotonic()


def logger(name):
    """A progress line writer for stderr, each line led by `name:`."""
    def log(*args):
        print(f"{name}:", *args, file=sys.stderr, flush=True)
    return log


log = logger("bench")


# ---------------------------------------------------------------------------------------------
class Recorder:
    """The null sink's monitor, recorded with `latency_ms` fragments (s16le, mono, 48 kHz), read as it comes.

    The recorder's latency is the sink's: the null sink mixes `latency_ms` at once. At 5 ms, PulseAudio 16.1
    delivers a rewound first sound one 5 ms block late to the monitor whenever another stream stands on the
    sink, although the sink mixed it at once (BENCHMARKS.md, "the late first sound"): a third of Orca's echoes
    read 5 ms late, for both servers. At 1 ms the same artefact is at most 1 ms, and the mix block dates samples
    to 1 ms. The soak, which only listens whether an item was heard, records 10 ms fragments.

    `env`: variables set for parec over this process's own (another pulse server's PULSE_SERVER, as PipeWire's
    in stop_pipewire; the soak's private server and folders). `log_path`: where parec's stderr goes (else
    nowhere). Read as it comes by a thread: a parec blocked on a full pipe loses what the server could not
    keep."""

    def __init__(self, latency_ms=None, env=None, log_path=None):
        self.latency_ms = latency_ms or RECORDER_MS
        self.block = RATE * self.latency_ms // 1000
        stderr = open(log_path, "ab") if log_path else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(
                ["parec", "--device=nullsink.monitor", "--format=s16le", f"--rate={RATE}", "--channels=1",
                 f"--latency-msec={self.latency_ms}", "--raw"],
                stdout=subprocess.PIPE, stderr=stderr, bufsize=0, env=dict(os.environ, **env) if env else None)
        finally:
            if log_path:
                stderr.close()
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
        k's block. The envelope taken at k itself (`"envelope"`, kept for comparison) assumes samples are
        mixed one by one in real time, so it dates a sample up to a block before it was mixed: a whole
        block for the first sample of a block, as after a resume (it can read a latency below zero). `"arrival"`: the time the read holding k arrived here, never early,
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

    def stop(self):
        """Ends the recording (SIGINT: parec hands on what it holds, then exits) and returns every sample, as
        floats in [-1, 1) in a plain array, for callers that measure without numpy (the soak)."""
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=10)
        self.thread.join(timeout=10)
        with self.lock:
            pcm = array.array("h", bytes(self.buf[:len(self.buf) // 2 * 2]))
        return array.array("f", (x / 32768 for x in pcm))


# ---------------------------------------------------------------------------------------------
def end_now(sock):
    """Shuts a socket down both ways and closes it: its peer reads the end at once, whatever the reader
    thread still holds."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class A11ydClient:
    """A JSON Lines client of a11yd on one open connection, as a screen reader keeps one; a thread reads each
    line as it comes, so a11yd never waits on this client.

    Timed requests go out at once from the caller's thread, without an id (`send`, `post`, `send_bytes`):
    their replies are queued on `lines`. `request`, awaited in an asyncio loop (the soak's clients), numbers
    its requests and returns their replies. An event is handed to `on_event(arrival, message)` on the reader
    thread when given (the soak's auditor, which keeps nothing here); otherwise it is queued on `lines`, kept
    on `events` as (arrival, message) and, if `finished`, in `finished` by utterance. Arrival is
    time.monotonic(). `ended` is done once the connection is."""

    ids = itertools.count(1)  # request ids, unique across connections

    def __init__(self, path, name=None, on_event=None):
        self.name = name or path  # for errors
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.on_event = on_event
        self.lines = queue.Queue()
        self.events = []
        self.finished = {}
        self.waiting = {}  # request id -> the future of its reply
        self.ended = concurrent.futures.Future()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            with self.sock.makefile("rb") as f:
                for line in f:
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        continue
                    if "ok" in msg and msg.get("id") in self.waiting:
                        _resolve(self.waiting.pop(msg["id"]), msg)
                    elif "event" in msg and self.on_event:
                        self.on_event(time.monotonic(), msg)
                    else:
                        if "event" in msg:
                            self.events.append((time.monotonic(), msg))
                            if msg["event"] == "finished":
                                self.finished[msg.get("utterance")] = msg
                        self.lines.put(msg)
        except (OSError, ValueError):
            pass
        for future in list(self.waiting.values()):
            _resolve(future, error=ConnectionError(f"{self.name}: connection closed"))
        self.waiting.clear()
        _resolve(self.ended, None)

    def send(self, obj):
        self.sock.sendall(request_line(obj))

    def post(self, text, **kw):
        self.send(post_request(text, **kw))

    def send_bytes(self, data):
        """Any bytes, as they are: several requests, half a line, a line that is not JSON."""
        self.sock.sendall(data)

    def expect(self, request_id):
        """The future of the reply to a request with this id, which the caller writes itself."""
        future = concurrent.futures.Future()
        self.waiting[request_id] = future
        return future

    def send_lines(self, requests):
        """Numbers the requests and writes them in one write; returns their replies' futures."""
        numbered = [dict(request, id=next(A11ydClient.ids)) for request in requests]
        futures = [self.expect(request["id"]) for request in numbered]
        self.send_bytes(b"".join(request_line(request) for request in numbered))
        return futures

    async def request(self, *requests, timeout=15):
        """Sends the requests in one write and returns their replies (ConnectionError if the connection
        ends first, asyncio.TimeoutError after `timeout` seconds)."""
        futures = self.send_lines(requests)
        return await asyncio.wait_for(asyncio.gather(*map(asyncio.wrap_future, futures)), timeout)

    def abort(self):
        """Ends the connection now, whatever is unread or half written: a11yd reads its end."""
        end_now(self.sock)

    def close(self):
        """Lets the connection go; its file stays open while the reader thread reads (a11yd does not see
        it end until it closes its side or this process exits). `abort` ends it."""
        try:
            self.sock.close()
        except OSError:
            pass


class SSIPClient:
    """An SSIP client (CRLF lines) on one open connection; a thread reads each line as it comes and hands
    each complete reply (continuation lines 'NNN-', then 'NNN ') to the oldest request still waiting.
    Events (7xx) are skipped. `recent` holds the last lines sent and read, for a failure's report.

    `command` and `speak` wait in the caller's thread (bench.py); `acommand` and `aask` are awaited in an
    asyncio loop (the soak's clients, which `open` sets up without blocking the loop)."""

    def __init__(self, path, name=None, priority="text", volume=None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.waiting = collections.deque()  # futures of the replies not yet read, oldest first
        self.recent = collections.deque(maxlen=12)
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        if name:
            for line in self.introduction(name, priority=priority, volume=volume):
                self.command(line)

    @staticmethod
    def introduction(name, priority=None, volume=None, notifications=False):
        """The SET SELF lines a client sends first: its name, then what it asked for."""
        lines = [f"SET SELF CLIENT_NAME root:{name}:main"]
        if priority:
            lines.append(f"SET SELF PRIORITY {priority}")
        lines.append("SET SELF LANGUAGE fr")
        if volume is not None:
            lines.append(f"SET SELF VOLUME {volume}")
        if notifications:
            lines.append("SET SELF NOTIFICATION ALL on")
        return lines

    @classmethod
    async def open(cls, path, name):
        """A connection named `name`, in French, told every event (the soak's clients)."""
        conn = cls(path)
        for line in cls.introduction(name, notifications=True):
            await conn.acommand(line)
        return conn

    def _read(self):
        lines = []
        try:
            with self.sock.makefile("rb") as f:
                for raw in f:
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    self.recent.append("< " + line)
                    if line[:1] == "7":  # asynchronous event
                        continue
                    lines.append(line)
                    if len(line) >= 4 and line[3] == " ":
                        with self.lock:
                            future = self.waiting.popleft() if self.waiting else None
                        if future:
                            _resolve(future, lines)
                        lines = []
        except (OSError, ValueError):
            pass
        with self.lock:
            waiting, self.waiting = list(self.waiting), collections.deque()
        for future in waiting:
            _resolve(future, error=ConnectionError("SSIP connection closed"))

    def send(self, data):
        """Bytes that get no reply of their own (part of a SPEAK's text)."""
        self.recent.append("> " + data.decode("utf-8", "replace").rstrip("\r\n"))
        self.sock.sendall(data)

    def ask(self, data):
        """Sends bytes that end in one reply; returns the future of its lines."""
        future = concurrent.futures.Future()
        with self.lock:
            self.waiting.append(future)
        self.send(data)
        return future

    def command(self, line, timeout=5):
        """Sends a command and returns its reply's lines."""
        return self.ask((line + "\r\n").encode()).result(timeout)

    def speak(self, text):
        reply = self.command("SPEAK")
        if not reply[-1].startswith("230"):
            raise RuntimeError(f"SSIP SPEAK refused: {reply[-1]}")
        return self.ask((text + "\r\n.\r\n").encode()).result(5)

    async def aask(self, data, timeout=15):
        return await asyncio.wait_for(asyncio.wrap_future(self.ask(data)), timeout)

    async def acommand(self, line, timeout=15):
        return await self.aask((line + "\r\n").encode(), timeout)

    def abort(self):
        """Ends the connection now, whatever is unread or half written."""
        end_now(self.sock)

    def close(self):
        """QUIT, then lets the connection go (as A11ydClient.close)."""
        try:
            self.sock.sendall(b"QUIT\r\n")
            self.sock.close()
        except OSError:
            pass


def _resolve(future, result=None, error=None):
    """Completes a reply's future from a reader thread, unless its waiter gave up (timed out) already."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except concurrent.futures.InvalidStateError:
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
