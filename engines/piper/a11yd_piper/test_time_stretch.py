# SPDX-License-Identifier: GPL-3.0-or-later
"""libsonic's time-stretch as the worker streams it: nothing lost or said twice, the pitch held."""

import math
import os
import unittest

import numpy as np

from worker_client import RATE, VOICES, require_runtime

from .decoder_split import Latent
from .loudness import gated_rms
from .phonemizer import Phonemizer
from .piper_tts import BOS, EOS, PAD
from .rate import MODEL_TOP_SPEED
from .time_stretch import Sonic, Stretch
from .units import Unit
from .voice import Voice


def setUpModule():
    require_runtime()


def f0_track(samples, rate=RATE, size_seconds=0.03, hop_seconds=0.005):
    """F0 (Hz) every `hop_seconds`, NaN where unvoiced: the normalised cross-correlation of a frame with
    the signal one lag later, its highest peak between 65 and 400 Hz when at least 0.6, in frames within
    20 dB of the loudest."""
    x = np.asarray(samples, dtype=np.float64)
    size, hop = int(size_seconds * rate), int(hop_seconds * rate)
    lo, hi = int(rate / 400), int(rate / 65)
    starts = range(0, max(len(x) - size - hi, 0), hop)
    levels = np.array([math.sqrt(np.mean(x[i:i + size] ** 2)) for i in starts])
    track = np.full(len(levels), np.nan)
    for n, i in enumerate(starts):
        if levels[n] < levels.max() * 0.1:
            continue
        a = x[i:i + size]
        shifted = np.lib.stride_tricks.sliding_window_view(x[i + lo:i + hi + size], size)[:hi - lo]
        r = shifted @ a / np.sqrt(np.dot(a, a) * np.sum(shifted * shifted, axis=1) + 1e-12)
        lag = int(np.argmax(r))
        if r[lag] >= 0.6:
            track[n] = rate / (lo + lag)
    return track


def pitch_ratio(original, stretched, speed, rate=RATE):
    """Median, over the frames voiced in both, of the stretched audio's F0 over the original's where the
    stretch took that frame from (its time times `speed`); and how many frames that is."""
    before, after = f0_track(original, rate), f0_track(stretched, rate)
    source = np.minimum(np.round(np.arange(len(after)) * speed).astype(int), len(before) - 1)
    ratios = after / before[source]
    ratios = ratios[np.isfinite(ratios)]
    return (float(np.median(ratios)) if len(ratios) else float("nan")), len(ratios)


class TimeStretchTests(unittest.TestCase):
    def stretch(self, samples, speed, piece=2205):
        """The stretched samples, written in pieces as the worker does, then flushed."""
        stretch = Stretch(Sonic.library(), RATE, speed)
        try:
            parts = [stretch.write(samples[i:i + piece]) for i in range(0, len(samples), piece)]
            parts.append(stretch.flush())
            return np.concatenate(parts), stretch
        finally:
            stretch.close()

    def test_libsonic_loads(self):
        self.assertIsNotNone(Sonic.library(), "libsonic0 is installed (scripts/install-deps.sh)")

    def test_nothing_is_lost_or_said_twice_at_a_flush_and_it_streams(self):
        t = np.arange(int(1.3 * RATE)) / RATE
        tone = (8000 * np.sin(2 * np.pi * 150 * t) * np.minimum(1, t * 20)).astype(np.int16)
        for speed in (1.2, 1.6, 2.0, 2.6, 4.0):
            out, stretch = self.stretch(tone, speed)
            # The output is the input's length / speed within a pitch period of sonic's range (65 Hz).
            self.assertLessEqual(abs(len(out) - len(tone) / speed), RATE / 65, speed)
            self.assertEqual((stretch.written, stretch.read), (len(tone), len(out)))
            # In pieces of 100 ms, what comes back before the flush is all but a few periods.
            self.assertGreater(stretch.read, 0)
            streamed = Stretch(Sonic.library(), RATE, speed)
            try:
                before = sum(len(streamed.write(tone[i:i + 2205])) for i in range(0, len(tone), 2205))
                self.assertGreaterEqual(before, len(tone) / speed - 2 * RATE / 65, speed)
                rest = streamed.flush()
                self.assertEqual(before + len(rest), len(out), "the same, in pieces or not")
                # Flushed, the stream holds nothing: the next unit starts with nothing of this one.
                self.assertEqual(len(streamed.flush()), 0)
                silence = streamed.write(np.zeros(4410, np.int16))
                self.assertTrue(np.all(np.abs(np.concatenate([silence, streamed.flush()]).astype(np.int32)) <= 1))
            finally:
                streamed.close()

    def test_the_pitch_is_held(self):
        voice = Voice("en_US-joe-medium", os.path.join(VOICES, "en_US-joe-medium.onnx"),
                      os.path.join(VOICES, "en_US-joe-medium.onnx.json"), 1)
        phonemizer = Phonemizer()
        phonemizer.set_voice(voice.config.espeak_voice)
        unit = Unit(voice, 1 / MODEL_TOP_SPEED, 100)
        for ipa, terminator, *_ in phonemizer.clauses("When the download finishes, the file opens in a new window."):
            unit.add_words(ipa.split(), terminator, [])
        ids = list(voice.id_map[BOS]) + voice.id_map[PAD]
        for phoneme in unit.phonemes:
            ids += voice.id_map[phoneme] + voice.id_map[PAD]
        audio = voice.run(ids + voice.id_map[EOS], unit.length_scale)[0]
        audio = np.asarray(audio.decode(0, audio.frames.shape[2]) if isinstance(audio, Latent) else audio).reshape(-1)
        samples = np.clip(np.round(audio * 0.1 / gated_rms(audio, RATE) * 32767), -32768, 32767).astype(np.int16)
        for speed in (1.5, 450 / 175 / MODEL_TOP_SPEED, 3.0):
            out, _ = self.stretch(samples, speed)
            ratio, frames = pitch_ratio(samples.astype(np.float64), out.astype(np.float64), speed)
            self.assertGreater(frames, 20, speed)
            self.assertAlmostEqual(ratio, 1.0, delta=0.05, msg=f"stretched {speed:.2f}x: F0 ratio {ratio:.3f}")
            # Resampled to that speed instead (chipmunked), the test sees it.
            indices = np.arange(0, len(samples) - 1, speed)
            chipmunk = np.interp(indices, np.arange(len(samples)), samples.astype(np.float64))
            self.assertGreater(pitch_ratio(samples.astype(np.float64), chipmunk, speed)[0], 1.3, speed)


if __name__ == "__main__":
    unittest.main()
