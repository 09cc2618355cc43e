# SPDX-License-Identifier: GPL-3.0-or-later
"""libsonic's pitch-preserving time-stretch, through ctypes, streamed piece by piece."""

import ctypes
import os

import numpy as np

from .log import log
from .rate import LENGTH_SCALE_RANGE, NORMAL_RATE

# Debian's libsonic0, the library eSpeak-NG itself stretches with past 450 words a minute.
SONIC_LIBRARY = "libsonic.so.0"


class Sonic:
    """libsonic (SONIC_LIBRARY, Debian's libsonic0: eSpeak-NG's own dependency) through ctypes, loaded at its
    first use on the synthesis thread. When it cannot be loaded the reason is logged once and the natural
    voice goes as fast as its model alone can (rate_plan). A11YD_PIPER_SONIC names another file (the tests'
    way to take it away)."""

    _library = None
    _tried = False

    @classmethod
    def library(cls):
        if not cls._tried:
            cls._tried = True
            name = os.environ.get("A11YD_PIPER_SONIC") or SONIC_LIBRARY
            try:
                library = ctypes.CDLL(name)
                stream, short = ctypes.c_void_p, ctypes.POINTER(ctypes.c_short)
                for function, result, arguments in (
                        ("sonicCreateStream", stream, [ctypes.c_int, ctypes.c_int]),
                        ("sonicDestroyStream", None, [stream]),
                        ("sonicSetSpeed", None, [stream, ctypes.c_float]),
                        ("sonicWriteShortToStream", ctypes.c_int, [stream, short, ctypes.c_int]),
                        ("sonicReadShortFromStream", ctypes.c_int, [stream, short, ctypes.c_int]),
                        ("sonicFlushStream", ctypes.c_int, [stream]),
                        ("sonicSamplesAvailable", ctypes.c_int, [stream])):
                    getattr(library, function).restype = result
                    getattr(library, function).argtypes = arguments
                cls._library = library
            except (OSError, AttributeError) as error:
                top = NORMAL_RATE / LENGTH_SCALE_RANGE[0]
                log(f"cannot load {name} ({error}): the natural voice is not time-stretched, so it goes no faster "
                    f"than its model can (about 1.7 times its normal speed however high the rate, asked up to "
                    f"{top:.0f} words a minute): install libsonic0")
        return cls._library


class Stretch:
    """One unit's pitch-preserving time-stretch by libsonic, fed piece by piece as the unit is decoded: what it
    gives back at once is sent at once (it keeps at most about two of its longest pitch periods, 31 ms), and
    `flush` at the unit's end gives the rest, so nothing is lost or said twice, and the next unit starts with
    nothing of this one. Its output is the input's length / speed within a pitch period (the tests hold it)."""

    def __init__(self, library, sample_rate, speed):
        self.library = library
        self.speed = speed
        self.stream = library.sonicCreateStream(int(sample_rate), 1)
        if not self.stream:
            raise MemoryError("libsonic could not make a stream")
        library.sonicSetSpeed(self.stream, float(speed))
        self.written = 0
        self.read = 0

    def write(self, samples):
        samples = np.ascontiguousarray(samples, dtype=np.int16)
        for first in range(0, len(samples), 1 << 16):
            part = samples[first:first + (1 << 16)]
            if not self.library.sonicWriteShortToStream(self.stream, part.ctypes.data_as(ctypes.POINTER(ctypes.c_short)),
                                                        len(part)):
                raise MemoryError("libsonic could not take more audio")
            self.written += len(part)
        return self.drain()

    def flush(self):
        if not self.library.sonicFlushStream(self.stream):
            raise MemoryError("libsonic could not flush its stream")
        return self.drain()

    def drain(self):
        available = max(int(self.library.sonicSamplesAvailable(self.stream)), 0)
        out = np.empty(available, dtype=np.int16)
        got = 0
        if available:
            got = max(int(self.library.sonicReadShortFromStream(self.stream, out.ctypes.data_as(
                ctypes.POINTER(ctypes.c_short)), available)), 0)
        self.read += got
        return out[:got]

    def close(self):
        if self.stream:
            self.library.sonicDestroyStream(self.stream)
            self.stream = None
