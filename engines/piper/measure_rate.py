#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Measures the natural voice at a11yd's top rate: how much faster than at the normal rate, the pitch, what it
costs, for Piper's length scale alone and for the model at MODEL_TOP_SPEED then a time-stretch (libsonic, or a
WSOLA in numpy for comparison); and, for the rule of how far the model's length scale goes, the share of
phonemes the model gives its floor of two frames at each speed. In this process, with the voice in
.build-voices/a11yd (or A11YD_PIPER_DATA); eSpeak through its CLI when installed.

    .build-voices/a11yd/piper/venv/bin/python engines/piper/measure_rate.py [--rate 450]
"""

import argparse
import os
import shutil
import subprocess
import time

import numpy as np

from a11yd_piper.decoder_split import Latent
from a11yd_piper.loudness import gated_rms
from a11yd_piper.phonemizer import Phonemizer
from a11yd_piper.piper_tts import BOS, EOS, PAD
from a11yd_piper.rate import MODEL_TOP_SPEED, NORMAL_RATE, unit_stretch
from a11yd_piper.time_stretch import Sonic, Stretch
from a11yd_piper.units import Unit
from a11yd_piper.voice import Voice
from worker_client import RATE, VOICES
TEXTS = ["The quick brown fox jumps over the lazy dog.",
         "When the download finishes, the file opens in a new window, unless you changed the setting.",
         "Messages from your team arrive here, and you can answer them at once.",
         "Press enter to open the link, or tab to move to the next heading on this page."]


def voiced_seconds(samples, rate=RATE):
    """Seconds of 20 ms windows at an RMS of at least 0.01 (test_worker.py's and PiperRateTests' measure)."""
    x = np.asarray(samples, dtype=np.float64)
    window = int(0.02 * rate)
    n = len(x) // window
    levels = np.sqrt(np.mean(x[:n * window].reshape(n, window) ** 2, axis=1))
    return float(np.sum(levels >= 0.01) * 0.02)


def median_f0(samples, rate=RATE):
    """Median F0 (Hz) of the voiced 40 ms frames: the autocorrelation's highest peak between 65 and 400 Hz,
    frames whose normalised peak is at least 0.5 and whose RMS is within 20 dB of the loudest frame's."""
    x = np.asarray(samples, dtype=np.float64)
    size, hop = int(0.04 * rate), int(0.01 * rate)
    lo, hi = int(rate / 400), int(rate / 65)
    frames = [x[i:i + size] for i in range(0, len(x) - size, hop)]
    if not frames:
        return float("nan")
    levels = np.array([np.sqrt(np.mean(f * f)) for f in frames])
    found = []
    for f, level in zip(frames, levels):
        if level < levels.max() * 0.1:
            continue
        f = f - f.mean()
        spectrum = np.fft.rfft(f, 2 * size)
        r = np.fft.irfft(spectrum * np.conj(spectrum))[:size]
        if r[0] <= 0:
            continue
        r = r / r[0]
        lag = lo + int(np.argmax(r[lo:hi]))
        if r[lag] >= 0.5:
            found.append(rate / lag)
    return float(np.median(found)) if found else float("nan")


def wsola(x, speed, rate=RATE):
    """A plain WSOLA: 30 ms Hann windows at half overlap in the output, each taken from where the speed puts
    it, moved by up to 10 ms to the best cross-correlation with the natural continuation of the last one."""
    x = np.asarray(x, dtype=np.float64)
    size = int(0.03 * rate)
    hop = size // 2
    tolerance = int(0.01 * rate)
    window = np.hanning(size)
    out = np.zeros(int(len(x) / speed) + size)
    norm = np.zeros_like(out)
    previous = 0
    k = 0
    while True:
        at = int(k * hop * speed)
        if at + size + tolerance >= len(x):
            break
        if k == 0:
            best = 0
        else:
            natural = x[previous + hop:previous + hop + size]
            low = max(at - tolerance, 0)
            region = x[low:at + tolerance + size]
            if len(natural) < size or len(region) < size:
                break
            scores = np.correlate(region, natural, mode="valid")
            best = low + int(np.argmax(scores)) - at
        start = at + best
        out[k * hop:k * hop + size] += x[start:start + size] * window
        norm[k * hop:k * hop + size] += window
        previous = start
        k += 1
    end = k * hop + hop
    norm[norm < 1e-6] = 1.0
    return (out / norm)[:end]


def sonic(x, speed, rate=RATE):
    samples = np.clip(np.round(np.asarray(x) * 32767), -32768, 32767).astype(np.int16)
    stretch = Stretch(Sonic.library(), rate, speed)
    try:
        out = np.concatenate([stretch.write(samples[i:i + 2205]) for i in range(0, len(samples), 2205)]
                             + [stretch.flush()])
    finally:
        stretch.close()
    return out.astype(np.float64) / 32767


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=450.0)
    arguments = parser.parse_args()
    voice = Voice("en_US-joe-medium", os.path.join(VOICES, "en_US-joe-medium.onnx"),
                  os.path.join(VOICES, "en_US-joe-medium.onnx.json"), 1)
    phonemizer = Phonemizer()
    phonemizer.set_voice(voice.config.espeak_voice)
    voice_scale = voice.config.length_scale

    def say(text, length_scale):
        unit = Unit(voice, length_scale, 100)
        for ipa, terminator, *_ in phonemizer.clauses(text):
            unit.add_words(ipa.split(), terminator, [])
        ids = list(voice.id_map[BOS]) + voice.id_map[PAD]
        for phoneme in unit.phonemes:
            ids += voice.id_map[phoneme] + voice.id_map[PAD]
        ids += voice.id_map[EOS]
        audio, durations = voice.run(ids, length_scale)[:2]
        if isinstance(audio, Latent):
            audio = audio.decode(0, audio.frames.shape[2])
        audio = np.asarray(audio, dtype=np.float64).reshape(-1)
        audio = audio * (0.1 / max(gated_rms(audio, RATE), 1e-4))
        return audio, np.asarray(durations, dtype=np.float64).reshape(-1)

    normal = [say(t, voice_scale) for t in TEXTS]
    normal_seconds = sum(voiced_seconds(a) for a, _ in normal)
    normal_f0 = np.median([median_f0(a) for a, _ in normal])
    print(f"normal rate: {normal_seconds:.2f} s voiced over {len(TEXTS)} sentences, median F0 {normal_f0:.1f} Hz")

    print("the model alone, asked N times the voice's speed: what it gives; phonemes (id + pad) at the 2-frame floor")
    for asked in (1.0, 1.25, 1.5, 1.75, 2.0, arguments.rate / NORMAL_RATE):
        said = [say(t, voice_scale / asked) for t in TEXTS]
        pairs = np.concatenate([d[1:-2:2] + d[2:-1:2] for _, d in said])
        print(f"  asked {asked:.2f}x: {normal_seconds / sum(voiced_seconds(a) for a, _ in said):.2f}x, "
              f"at the floor {np.mean(pairs <= 2):.0%}, median F0 {np.median([median_f0(a) for a, _ in said]):.1f} Hz")

    asked = arguments.rate / NORMAL_RATE
    print(f"at {arguments.rate:.0f} words a minute ({asked:.2f}x asked):")
    for top in (MODEL_TOP_SPEED, 1.5):
        said = [say(t, voice_scale / top) for t in TEXTS]
        for name, method in (("libsonic", sonic), ("numpy WSOLA", wsola)):
            out, cost = [], 0.0
            for audio, durations in said:
                speed = unit_stretch(asked, top, durations)
                began = time.process_time()
                out.append(method(audio, speed))
                cost += time.process_time() - began
            seconds = sum(len(a) for a in out) / RATE
            print(f"  model {top:.2f}x + {name}: {normal_seconds / sum(voiced_seconds(a) for a in out):.2f}x, "
                  f"median F0 {np.median([median_f0(a) for a in out]):.1f} Hz, "
                  f"{1000 * cost / seconds:.1f} ms CPU per second of audio")
    if shutil.which("espeak-ng"):
        def espeak(rate):
            return sum(voiced_seconds(np.frombuffer(subprocess.run(
                ["espeak-ng", "-v", "en-us", "-s", str(int(rate)), "--stdout", t], capture_output=True,
                check=True).stdout[44:], dtype="<i2") / 32768) for t in TEXTS)
        print(f"  eSpeak-NG (CLI, en-us): {espeak(NORMAL_RATE) / espeak(arguments.rate):.2f}x")


if __name__ == "__main__":
    main()
