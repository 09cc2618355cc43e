# SPDX-License-Identifier: GPL-3.0-or-later
"""a11yd's rate as the model's length scale and a time-stretch."""

import unittest

from .rate import MODEL_TOP_SPEED, TOP_SPEED, rate_plan, unit_stretch


class RateTests(unittest.TestCase):
    """The top of a11yd's rate scale on the natural voice: the model's length scale up to MODEL_TOP_SPEED,
    then the time-stretch (rate_plan, unit_stretch)."""

    def test_the_rate_rule(self):
        top = MODEL_TOP_SPEED
        rows = [  # rate, voice's length scale, stretching → length scale, stretch
            (175, 1.0, True, 1.0, 1.0),
            (175 * top, 1.0, True, 1 / top, 1.0),             # the model's own top
            (350, 1.0, True, 1 / top, 2.0 / top),
            (450, 1.0, True, 1 / top, 450 / 175 / top),
            (450, 0.8, True, 0.8 / top, 450 / 175 / top),     # a voice's own length scale is its normal speed
            (100, 1.0, True, 1.75, 1.0),                      # slower: the model alone
            (10, 1.0, True, 2.5, 1.0),                        # as slow as LENGTH_SCALE_RANGE goes
            (100_000, 1.0, True, 1 / top, TOP_SPEED / top),
            (450, 1.0, False, 175 / 450, 1.0),                # no libsonic: the model alone, as far as it goes
            (100_000, 1.0, False, 0.25, 1.0),
            (float("nan"), 1.0, True, 1.0, 1.0), (-5, 1.0, True, 1.0, 1.0), (float("inf"), 1.0, True, 1.0, 1.0),
            (450, float("nan"), True, 1 / top, 450 / 175 / top),
        ]
        for rate, voice, stretching, length_scale, stretch in rows:
            got = rate_plan(rate, voice, stretching)
            self.assertAlmostEqual(got[0], length_scale, places=6, msg=(rate, voice, stretching))
            self.assertAlmostEqual(got[1], stretch, places=6, msg=(rate, voice, stretching))
        self.assertGreater(MODEL_TOP_SPEED, 1.0)

    def test_the_unit_stretch_makes_up_for_the_models_whole_frames(self):
        u = unit_stretch
        self.assertEqual(u(1.0, 1.0, None), 1.0)
        self.assertAlmostEqual(u(2.5, 1.25, None), 2.0)       # no durations: the nominal stretch
        self.assertAlmostEqual(u(2.5, 1.25, []), 2.0)
        self.assertAlmostEqual(u(2.5, 1.25, [float("nan"), 3]), 2.0)
        # Long phonemes: the model's speed is what it was asked.
        self.assertAlmostEqual(u(2.5, 1.25, [40.5, 80.5]), 2.0, delta=0.01)
        # Ids at their floor of one frame were as short at the voice's speed: more is left to the stretch.
        # (each estimated at 0.5 * 1.25 + 0.5 = 1.125 frames at the voice's speed, not 1.25).
        self.assertAlmostEqual(u(2.5, 1.25, [1, 1, 1, 1]), 2.5 / 1.125)
        self.assertLessEqual(u(100, 1.25, [1, 1]), TOP_SPEED)


if __name__ == "__main__":
    unittest.main()
