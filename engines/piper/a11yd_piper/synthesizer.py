# SPDX-License-Identifier: GPL-3.0-or-later
"""The synthesis thread: requests said one at a time, in order, each ended by one `end`; a cancel ends a request
waiting for its turn at once, and one being said at its next check (Job)."""

import os
import queue
import threading

from .frames import DONE, ENGINE_FAILED
from .jobs import Cancelled, Job, Preload, SpeechFailure
from .log import log
from .output import Output
from .phonemizer import Phonemizer
from .units import Silence
from .utterance_plan import UtterancePlanner


class Synthesizer:
    """Takes jobs (and preloads) from the main thread; `run` is the synthesis thread, the only one that uses
    piper-tts's eSpeak-NG and the models."""

    def __init__(self, channel, voices, sample_rate):
        self.channel = channel
        self.voices = voices
        self.sample_rate = sample_rate
        self.chunk_frames = max(sample_rate // 10, 1)
        self.jobs = queue.Queue()
        self.pending = {}
        self.lock = threading.Lock()
        self.planner = None  # made on the synthesis thread, with its eSpeak-NG

    # Called on the main thread.
    def submit(self, job):
        with self.lock:
            if isinstance(job, Job):
                self.pending[job.id] = job
        self.jobs.put(job)

    def cancel(self, request_id):
        with self.lock:
            job = self.pending.get(request_id)
        if job is not None:
            job.cancel()
            if job.end_unstarted():
                # Waiting behind another request or a voice loading: ended now, skipped when its turn comes.
                with self.lock:
                    self.pending.pop(request_id, None)
                self.channel.end(request_id)

    # The synthesis thread.
    def run(self):
        try:
            self.planner = UtterancePlanner(self.voices, Phonemizer(), self.sample_rate)
        except Exception as error:
            log(f"cannot start piper-tts's eSpeak-NG: {error}")
            os._exit(1)
        while True:
            job = self.jobs.get()
            if isinstance(job, Preload):
                try:
                    self.planner.use_voice(self.voices.get("piper:" + job.name))
                except SpeechFailure as failure:
                    log(f"--preload {job.name}: {failure.message}")
                except Exception as error:
                    log(f"--preload {job.name}: {error}")
                continue
            if not job.start():
                continue
            status, message = DONE, ""
            try:
                self.say(job)
            except Cancelled:
                pass
            except SpeechFailure as failure:
                status, message = failure.status, failure.message
            except Exception as error:
                if job.cancelled.is_set():
                    pass  # onnxruntime's run, ended by the cancel's terminate flag
                else:
                    status, message = ENGINE_FAILED, f"Piper failed: {type(error).__name__}: {error}"
                    log(message)
            finally:
                with self.lock:
                    self.pending.pop(job.id, None)
            self.channel.end(job.id, status, message)

    def say(self, job):
        job.check()
        state = Output(self, job)
        for item in self.planner.items(job):
            job.check()
            if isinstance(item, Silence):
                state.silence(item)
            else:
                state.unit(item)
        state.finish()
