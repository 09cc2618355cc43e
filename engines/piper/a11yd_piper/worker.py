# SPDX-License-Identifier: GPL-3.0-or-later
"""The worker process: its arguments and signals, then the main thread's loop over a11yd's requests (the
synthesis thread, synthesizer.py, says them)."""

import argparse
import faulthandler
import os
import signal
import threading

from .channel import Channel
from .frames import (ANSWER, ASK, CANCEL, CHUNK, END, ENGINE_FAILED, Q_VOICES, READY, SYNTHESIZE, ProtocolError, Reader,
                     decode_ask, decode_synthesize)
from .jobs import Job, Preload
from .log import log
from .synthesizer import Synthesizer
from .voices import Voices

# a11yd gives the worker its end of the socket pair as descriptor 0.
CHANNEL = 0

# What shuts this process in is done before Python starts, by a11yd's own binary (`a11yd --engine-worker
# --exec`, SandboxedLauncher.swift), which says what it set in A11YD_WORKER_PROTECTION.
PROTECTION = os.environ.pop("A11YD_WORKER_PROTECTION", "none (started without a11yd's launcher)")


def serve(arguments):
    channel = Channel(CHANNEL)
    voices = Voices(arguments.voices_dir, arguments.threads)
    synthesizer = Synthesizer(channel, voices, arguments.sample_rate)
    channel.ready(arguments.sample_rate, PROTECTION)
    threading.Thread(target=synthesizer.run, name="a11yd-piper-synthesis", daemon=True).start()
    for name in arguments.preload or []:
        synthesizer.submit(Preload(name[len("piper:"):] if name.startswith("piper:") else name))
    try:
        for kind, body in channel.messages():
            reader = Reader(body)
            if kind == SYNTHESIZE:
                request_id, utterance = decode_synthesize(reader)
                reader.done()
                synthesizer.submit(Job(request_id, utterance))
            elif kind == CANCEL:
                request_id = reader.u32()
                reader.done()
                synthesizer.cancel(request_id)
            elif kind == ASK:
                request_id, question = decode_ask(reader)
                reader.done()
                if question == Q_VOICES:
                    channel.voices(request_id, voices.listing())
                else:
                    channel.end(request_id, ENGINE_FAILED, "the Piper worker answers no phoneme questions")
            elif kind in (READY, CHUNK, END, ANSWER):
                raise ProtocolError("a11yd sent a worker's message")
            else:
                raise ProtocolError("unknown message type")
    except ProtocolError as error:
        log(f"bad request from a11yd: {error}")
        os._exit(1)
    os._exit(0)  # a11yd closed its end


def main():
    faulthandler.enable()  # a crash in eSpeak or onnxruntime leaves its Python stack in a11yd's log
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda number, _: (log(f"ended by {signal.Signals(number).name}"), os._exit(128 + number)))
    parser = argparse.ArgumentParser(description="a11yd's Piper engine worker (frames on descriptor 0)")
    parser.add_argument("--sample-rate", type=int, default=22050)
    parser.add_argument("--voices-dir", action="append", required=True)
    parser.add_argument("--preload", action="append", help="a voice to load at start (NAME or piper:NAME)")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime's threads per inference")
    arguments = parser.parse_args()
    if not 1000 <= arguments.sample_rate <= 384_000:
        parser.error("--sample-rate must be within 1000...384000")
    arguments.threads = max(arguments.threads, 1)
    serve(arguments)
