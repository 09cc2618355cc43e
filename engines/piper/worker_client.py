# SPDX-License-Identifier: GPL-3.0-or-later
"""A client of a11yd's Piper worker for its tests and measurements: where the worker, its Python and the voice
are, the frames of WorkerMessage.swift encoded and decoded here (independently of the worker's own code), and
the worker as a process to talk to over its real channel (a socket pair).

The data folder (the one with piper/ and voices/) is .build-voices/a11yd in the source tree, which
`scripts/install-voices.sh --data-dir .build-voices/a11yd` fills (scripts/install-deps.sh --test runs it), or
the one A11YD_PIPER_DATA names.
"""

import os
import select
import socket
import struct
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.environ.get("A11YD_PIPER_DATA", os.path.join(REPO, ".build-voices", "a11yd"))
VOICES = os.path.join(DATA, "voices")
PYTHON = os.path.join(DATA, "piper", "venv", "bin", "python")
WORKER = os.path.join(HERE, "a11yd_piper_worker.py")
JOE = "piper:en_US-joe-medium"
RATE = 22050

SYNTHESIZE, CANCEL, ASK, READY, CHUNK, END, ANSWER = 1, 2, 3, 10, 11, 12, 13


def require_runtime():
    """Raises, saying what to run, when the venv or the voice is not installed: the tests fail, never skip."""
    for path, what in ((PYTHON, "the venv"), (os.path.join(VOICES, "en_US-joe-medium.onnx"), "the voice")):
        if not os.path.exists(path):
            raise AssertionError(f"{what} is missing ({path}): run scripts/install-voices.sh --data-dir {DATA}")


# --- the frames, written from WorkerMessage.swift ---------------------------------------------------------

def u8(v): return struct.pack("<B", v)
def u32(v): return struct.pack("<I", v)
def i64(v): return struct.pack("<q", v)
def f64(v): return struct.pack("<d", v)
def string(s):
    raw = s.encode("utf-8")
    return u32(len(raw)) + raw


def frame(kind, body):
    return u32(len(body) + 1) + u8(kind) + body


def segment(content, voice=JOE, start=0, length=None, kind=0, spell=False, punctuation=False,
            rate_scale=1.0, pitch_scale=1.0, volume_scale=1.0, pause=0, mark=None):
    length = len(content) if length is None else length
    return (u8(kind) + string(content) + string(voice) + i64(start) + i64(length)
            + u8((1 if spell else 0) | (2 if punctuation else 0)) + f64(rate_scale) + f64(pitch_scale)
            + f64(volume_scale) + i64(pause) + (u8(0) if mark is None else u8(1) + string(mark)))


def synthesize(request_id, text, segments, rate=175, pitch=50, volume=100):
    body = u32(request_id) + string(text) + i64(rate) + i64(pitch) + i64(volume) + u32(len(segments))
    return frame(SYNTHESIZE, body + b"".join(segments))


def text_request(request_id, text, voice=JOE, **options):
    return synthesize(request_id, text, [segment(text, voice=voice)], **options)


class Body:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, n):
        assert self.at + n <= len(self.data), "frame ends early"
        piece = self.data[self.at:self.at + n]
        self.at += n
        return piece

    def u8(self): return self.take(1)[0]
    def u32(self): return struct.unpack("<I", self.take(4))[0]
    def i64(self): return struct.unpack("<q", self.take(8))[0]
    def string(self): return self.take(self.u32()).decode("utf-8")

    def end(self):
        assert self.at == len(self.data), f"{len(self.data) - self.at} bytes after a message"


def decode(kind, data):
    body = Body(data)
    if kind == READY:
        message = ("ready", body.i64(), body.string())
    elif kind == CHUNK:
        request_id = body.u32()
        samples = np.frombuffer(body.take(2 * body.u32()), dtype="<i2")
        words = [(body.i64(), body.i64(), body.i64()) for _ in range(body.u32())]
        marks = [(body.i64(), body.string()) for _ in range(body.u32())]
        message = ("chunk", request_id, samples, words, marks)
    elif kind == END:
        message = ("end", body.u32(), body.u8(), body.string())
    elif kind == ANSWER:
        request_id, answer = body.u32(), body.u8()
        assert answer == 0, f"answer kind {answer}"
        voices = []
        for _ in range(body.u32()):
            identifier, name = body.string(), body.string()
            voices.append((identifier, name, [(body.string(), body.i64()) for _ in range(body.u32())]))
        message = ("voices", request_id, voices)
    else:
        raise AssertionError(f"unknown message type {kind}")
    body.end()
    return message


class Worker:
    def __init__(self, *arguments, voices_dirs=(VOICES,), launcher=None, environment=None):
        """`launcher`: the built a11yd, which shuts the worker in (SandboxedLauncher) as a11yd starts it;
        `environment`: variables added to the worker's."""
        self.ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.log = tempfile.TemporaryFile()
        command = [PYTHON, WORKER, "--sample-rate", str(RATE)]
        if launcher is not None:
            readable = [os.path.join(DATA, "piper"), HERE] + list(voices_dirs)
            command = ([launcher, "--engine-worker", "--exec", PYTHON] + [x for r in readable for x in ("--read", r)]
                       + ["--"] + command[1:])
        for folder in voices_dirs:
            command += ["--voices-dir", folder]
        self.started = time.monotonic()
        self.process = subprocess.Popen(command + list(arguments), stdin=theirs, stdout=subprocess.DEVNULL,
                                        stderr=self.log, close_fds=True,
                                        env=None if environment is None else {**os.environ, **environment})
        theirs.close()
        self.buffer = b""
        self.ready = self.next(timeout=30)
        self.ready_after = time.monotonic() - self.started

    def send(self, data):
        self.ours.sendall(data)

    def next(self, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buffer) >= 5:
                length = struct.unpack_from("<I", self.buffer)[0]
                assert 1 <= length <= 64 << 20, f"frame length {length}"
                if len(self.buffer) >= 4 + length:
                    kind, data = self.buffer[4], self.buffer[5:4 + length]
                    self.buffer = self.buffer[4 + length:]
                    return decode(kind, data)
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"nothing from the worker for {timeout} s; its log: {self.stderr()}")
            readable, _, _ = select.select([self.ours], [], [], left)
            if readable:
                data = self.ours.recv(1 << 16)
                if not data:
                    try:
                        code = self.process.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        code = "still running"
                    raise AssertionError(f"the worker closed its channel (exit status {code}); its log: {self.stderr()}")
                self.buffer += data

    def quiet(self, seconds):
        """True if nothing arrives for `seconds`."""
        if self.buffer:
            return False
        readable, _, _ = select.select([self.ours], [], [], seconds)
        return not readable

    def utterance(self, request_id, timeout=60):
        """Every chunk of `request_id` up to its end: (samples, words, marks, (status, message), times)."""
        samples, words, marks, times = [], [], [], []
        start = time.monotonic()
        while True:
            message = self.next(timeout)
            assert message[1] == request_id, f"a message of {message[1]} while saying {request_id}"
            if message[0] == "end":
                audio = np.concatenate(samples) if samples else np.zeros(0, np.int16)
                return audio, words, marks, message[2:], times
            assert message[0] == "chunk", message[0]
            assert len(message[2]) <= RATE // 10, f"a chunk of {len(message[2])} samples"
            if len(message[2]) and not times:
                times.append(time.monotonic() - start)
            samples.append(message[2])
            words += message[3]
            marks += message[4]

    def stderr(self):
        if self.log.closed:
            return self.final_log
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")

    def close(self):
        self.ours.close()
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("the worker did not exit when its channel closed")
        finally:
            self.final_log = self.stderr()
            self.log.close()
        return code


# --- texts ---------------------------------------------------------------------------------------------------

def hex_word(count, seed=1):
    """`count` hex digits without a space (a hash, a blob in a terminal line), the same every run."""
    state, digits = seed, []
    for _ in range(count):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        digits.append("0123456789abcdef"[state >> 60])
    return "".join(digits)


PROSE = ("The committee met on Tuesday to talk about the budget for the coming year. Nobody expected the "
         "meeting to last until the evening, but it did. ")
