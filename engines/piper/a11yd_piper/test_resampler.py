# SPDX-License-Identifier: GPL-3.0-or-later
"""The resampler on signals whose answer is known."""

import math
import unittest

import numpy as np

from .resampler import resample


class ResamplerTests(unittest.TestCase):
    def tone(self, frequency, rate, seconds=0.5):
        return np.sin(2 * np.pi * frequency * np.arange(int(rate * seconds)) / rate).astype(np.float32)

    def level_db(self, x):
        middle = x[len(x) // 4:3 * len(x) // 4]
        return 20 * math.log10(max(math.sqrt(np.mean(middle.astype(np.float64) ** 2)), 1e-12))

    def test_resampling_keeps_speech_and_drops_what_would_fold_back(self):
        for rate_in, rate_out in ((22050, 16000), (16000, 22050), (22050, 48000), (24000, 22050), (22050, 22051)):
            kept = resample(self.tone(1000, rate_in), rate_in, rate_out)
            self.assertEqual(len(kept), round(0.5 * rate_out))
            self.assertAlmostEqual(self.level_db(kept), self.level_db(self.tone(1000, rate_out)), delta=0.05)
            high = resample(self.tone(0.4 * min(rate_in, rate_out), rate_in), rate_in, rate_out)
            self.assertAlmostEqual(self.level_db(high), -3.01, delta=0.05, msg=(rate_in, rate_out))
            if rate_out < rate_in:
                # Above the output's Nyquist frequency: would fold back.
                folded = resample(self.tone(0.52 * rate_out, rate_in), rate_in, rate_out)
                self.assertLess(self.level_db(folded), -60, (rate_in, rate_out))
            else:
                # Images above the input's Nyquist frequency.
                out = resample(self.tone(0.45 * rate_in, rate_in), rate_in, rate_out)
                middle = out[len(out) // 4:3 * len(out) // 4].astype(np.float64) * np.hanning(len(out) // 2)
                power = np.abs(np.fft.rfft(middle)) ** 2
                frequencies = np.fft.rfftfreq(len(middle), 1 / rate_out)
                images = power[frequencies > 0.5 * rate_in + 100].sum() / power.sum()
                self.assertLess(10 * math.log10(images + 1e-30), -60, (rate_in, rate_out))

    def test_resampling_keeps_time(self):
        for rate_in, rate_out in ((16000, 22050), (22050, 16000), (22050, 48000), (22050, 22051)):
            impulse = np.zeros(rate_in // 10, np.float32)
            impulse[1000] = 1.0
            out = resample(impulse, rate_in, rate_out)
            self.assertAlmostEqual(int(np.argmax(out)), 1000 * rate_out / rate_in, delta=0.5, msg=(rate_in, rate_out))


if __name__ == "__main__":
    unittest.main()
