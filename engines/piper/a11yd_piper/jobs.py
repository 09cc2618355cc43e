# SPDX-License-Identifier: GPL-3.0-or-later
"""A request's life on the synthesis thread: waiting, started, cancelled, failed."""

import threading


class SpeechFailure(Exception):
    """Ends a request with `status` (a frames.py `end` status) and `message`, the other requests going on."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class Cancelled(Exception):
    pass


class Job:
    """One `synthesize` request. A cancel sets its flag, which the synthesis thread checks between pieces of
    work, and ends onnxruntime's run in progress (its run options' terminate flag). Its stage, WAITING, then
    STARTED by the synthesis thread or ENDED unstarted by a cancel, changes under its lock, so that exactly
    one of the two sends its one `end`."""

    WAITING, STARTED, ENDED = "waiting", "started", "ended"

    def __init__(self, request_id, utterance):
        self.id = request_id
        self.utterance = utterance
        self.cancelled = threading.Event()
        self.lock = threading.Lock()
        self.run_options = None
        self.stage = Job.WAITING

    def start(self):
        """False if the job was cancelled (and ended) before it started."""
        with self.lock:
            if self.stage == Job.WAITING:
                self.stage = Job.STARTED
            return self.stage == Job.STARTED

    def end_unstarted(self):
        """True if the job had not started: it is over, and the caller sends its one `end`."""
        with self.lock:
            if self.stage != Job.WAITING:
                return False
            self.stage = Job.ENDED
            return True

    def cancel(self):
        self.cancelled.set()
        with self.lock:
            if self.run_options is not None:
                self.run_options.terminate = True

    def check(self):
        if self.cancelled.is_set():
            raise Cancelled()


class Preload:
    """A voice to load (--preload), queued like a request: a request sent meanwhile waits for it."""

    def __init__(self, name):
        self.name = name
