#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Measures a11yd's Piper worker over its channel: start to `ready`, voice load, first chunk, real-time
factor and memory. Uses worker_client.py and the voice in .build-voices/a11yd (or A11YD_PIPER_DATA).

    .build-voices/a11yd/piper/venv/bin/python engines/piper/measure_worker.py [--threads 1] [--runs 10]
"""

import argparse
import os
import statistics
import time

import worker_client as client

HELLO = "Hello."
FORTY = ("When the download finishes, the file opens in a new window, unless you changed the setting. "
         "Messages from your team arrive here, and you can answer them at once; the reply is sent "
         "when you press enter, and then the window closes.")
LONG = " ".join([FORTY] * 5)


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def first_chunk(worker, request_id, text):
    sent = time.monotonic()
    worker.send(client.text_request(request_id, text))
    audio, _, _, (status, message), times = worker.utterance(request_id, timeout=120)
    total = time.monotonic() - sent
    assert status == 0, message
    return times[0], total, len(audio) / client.RATE


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", default="1")
    parser.add_argument("--runs", type=int, default=10)
    arguments = parser.parse_args()
    print(f"{len(FORTY.split())}-word text; --threads {arguments.threads}; load average {os.getloadavg()[0]:.2f}")
    starts, loads = [], []
    for _ in range(3):
        worker = client.Worker("--threads", arguments.threads)
        starts.append(worker.ready_after)
        began = time.monotonic()
        first_chunk(worker, 1, HELLO)  # loads the voice
        loads.append(time.monotonic() - began)
        rss_ready = rss_mb(worker.process.pid)
        worker.close()
    print(f"start to ready: {' '.join(f'{s * 1000:.0f}' for s in starts)} ms; "
          f"first request (voice loaded then): {' '.join(f'{s * 1000:.0f}' for s in loads)} ms")
    worker = client.Worker("--threads", arguments.threads, "--preload", "en_US-joe-medium")
    first_chunk(worker, 1, HELLO)
    print(f"RSS after load and 'Hello.': {rss_mb(worker.process.pid):.0f} MB (after the earlier first request: {rss_ready:.0f})")
    request_id = 10
    for name, text in (("Hello.", HELLO), (f"{len(FORTY.split())} words", FORTY)):
        firsts, factors = [], []
        for _ in range(arguments.runs):
            request_id += 1
            first, total, seconds = first_chunk(worker, request_id, text)
            firsts.append(first * 1000)
            factors.append(total / seconds)
        print(f"{name}: first chunk median {statistics.median(firsts):.0f} ms (min {min(firsts):.0f}, max "
              f"{max(firsts):.0f}); real-time factor {statistics.median(factors):.3f}")
    print(f"RSS after the {len(FORTY.split())}-word texts: {rss_mb(worker.process.pid):.0f} MB")
    request_id += 1
    _, total, seconds = first_chunk(worker, request_id, LONG)
    print(f"RSS after a {len(LONG.split())}-word text ({seconds:.0f} s of audio in {total:.1f} s): "
          f"{rss_mb(worker.process.pid):.0f} MB")
    worker.close()


if __name__ == "__main__":
    main()
