# SPDX-License-Identifier: GPL-3.0-or-later
"""The peak limiter on signals whose answer is known."""

import unittest

import numpy as np

from .limiter import CEILING, PeakLimiter


class LimiterTests(unittest.TestCase):
    def tone(self, frequency, rate, seconds=0.5):
        return np.sin(2 * np.pi * frequency * np.arange(int(rate * seconds)) / rate).astype(np.float32)

    def test_the_limiter_holds_peaks_and_leaves_quiet_sound_alone(self):
        limiter = PeakLimiter(22050)
        quiet = 0.5 * self.tone(440, 22050)
        self.assertTrue(np.array_equal(limiter.process(quiet.astype(np.float64)), quiet.astype(np.float64)))
        loud = 2.0 * self.tone(440, 22050)
        out = limiter.process(loud.astype(np.float64))
        self.assertLessEqual(np.abs(out).max(), CEILING + 1e-9)
        self.assertGreater(np.abs(out[len(out) // 2:]).max(), 0.95 * CEILING)
        # A peak in the first samples of the next piece is held too.
        out = limiter.process(np.concatenate([[3.0], 0.1 * np.ones(100)]))
        self.assertLessEqual(np.abs(out).max(), CEILING + 1e-9)


if __name__ == "__main__":
    unittest.main()
