# SPDX-License-Identifier: GPL-3.0-or-later
"""A unit's loudness, measured as eSpeak-NG's is, and the gain of a unit sent in two pieces."""

import math
import unittest

import numpy as np

from .loudness import gated_rms, rest_gain


class LoudnessTests(unittest.TestCase):
    def test_the_rest_gain_puts_the_unit_at_the_target(self):
        rate = 22050
        t = np.arange(2 * rate) / rate
        # Loud at first, softer after: the first piece alone is louder than the whole.
        audio = (np.sin(2 * np.pi * 220 * t) * np.where(t < 0.4, 0.3, 0.1)).astype(np.float32)
        split, target = int(0.5 * rate), 0.1
        first_gain = target / gated_rms(audio[:split], rate)
        gain = rest_gain(audio, split, first_gain, target, rate)
        scaled = np.concatenate([audio[:split] * first_gain, audio[split:] * gain])
        self.assertAlmostEqual(20 * math.log10(gated_rms(scaled, rate) / target), 0.0, delta=0.1)
        self.assertAlmostEqual(20 * math.log10(gated_rms(scaled[:split], rate) / target), 0.0, delta=0.1)
        self.assertIsNone(rest_gain(audio[:split], split, first_gain, target, rate), "no rest")


if __name__ == "__main__":
    unittest.main()
