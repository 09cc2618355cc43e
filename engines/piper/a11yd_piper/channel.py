# SPDX-License-Identifier: GPL-3.0-or-later
"""The worker's end of its socket pair with a11yd: frames in on the main thread, frames out from any thread."""

import os
import threading

from . import frames
from .log import log


class Channel:
    """A descriptor (a11yd gives descriptor 0): frames read on the main thread, frames written from any
    thread, each whole, under a lock."""

    def __init__(self, fd):
        self.fd = fd
        self.lock = threading.Lock()
        self.buffer = bytearray()

    def send(self, frame):
        with self.lock:
            view = memoryview(frame)
            while view:
                try:
                    written = os.write(self.fd, view)
                except InterruptedError:
                    continue
                except OSError as error:
                    log(f"writing to a11yd: {error}")
                    os._exit(0)  # a11yd is gone: no one to serve
                view = view[written:]

    def messages(self):
        """Yields (type, body) until the channel ends; a bad frame length raises frames.ProtocolError."""
        while True:
            yield from frames.split_frames(self.buffer)
            try:
                data = os.read(self.fd, 1 << 16)
            except InterruptedError:
                continue
            except OSError as error:
                log(f"reading the channel: {error}")
                return
            if not data:
                return
            self.buffer += data

    def ready(self, sample_rate, protection):
        self.send(frames.ready_frame(sample_rate, protection))

    def end(self, request_id, status=frames.DONE, message=""):
        self.send(frames.end_frame(request_id, status, message))

    def chunk(self, request_id, samples, words, marks):
        self.send(frames.chunk_frame(request_id, samples, words, marks))

    def voices(self, request_id, entries):
        self.send(frames.voices_frame(request_id, entries))
