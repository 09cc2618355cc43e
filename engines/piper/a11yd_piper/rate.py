# SPDX-License-Identifier: GPL-3.0-or-later
"""a11yd's rate (eSpeak's words a minute) as the model's length scale and, past what the model says well, a
time-stretch."""

import math

import numpy as np

# eSpeak's words per minute at a11yd's normal rate: a rate asks for rate / 175 times the voice's speed.
NORMAL_RATE = 175.0
LENGTH_SCALE_RANGE = (0.25, 2.5)
# Faster than MODEL_TOP_SPEED times the voice's own speed, the model is not asked for it: its phonemes last
# whole frames (a phoneme id at least one), so a smaller length scale shortens fewer and fewer of them (it
# gives far less than it is asked) and runs the short ones together. The model says the
# text at MODEL_TOP_SPEED and the audio is then time-stretched, pitch held, by libsonic (the library
# eSpeak-NG uses past 450 words a minute) by what is left, up to TOP_SPEED in all. What the limit is, and
# why, is in docs/voices.md ("Rate").
MODEL_TOP_SPEED = 1.25
TOP_SPEED = 6.0


def rate_plan(rate, voice_length_scale, stretching=True):
    """(the model's length scale, the time-stretch asked on top of it) for `rate` in words a minute (eSpeak's:
    NORMAL_RATE is the voice's own speed). Up to MODEL_TOP_SPEED times the voice's speed the model alone says
    it; faster, the model says it at MODEL_TOP_SPEED and the stretch does the rest, up to TOP_SPEED in all.
    Without the stretch (`stretching` False: no libsonic) the model is asked for all of it, as far as
    LENGTH_SCALE_RANGE goes. Slower than the voice's speed is the model's alone. Nonsense is the normal rate."""
    rate = float(rate) if isinstance(rate, (int, float)) else NORMAL_RATE
    rate = NORMAL_RATE if not math.isfinite(rate) or rate <= 0 else rate
    voice_length_scale = voice_length_scale if math.isfinite(voice_length_scale) and voice_length_scale > 0 else 1.0
    speed = min(rate / NORMAL_RATE, TOP_SPEED)
    model = min(speed, MODEL_TOP_SPEED) if stretching else speed
    length_scale = min(max(voice_length_scale / model, LENGTH_SCALE_RANGE[0]), LENGTH_SCALE_RANGE[1])
    stretch = speed / (voice_length_scale / length_scale)
    return length_scale, (stretch if stretching and stretch > 1.0 + 1e-6 else 1.0)


def unit_stretch(asked, model_speed, durations):
    """The stretch that brings a unit said at `model_speed` times the voice's speed to `asked` times its speed
    from the model's per-id `durations` in frames. The model rounds each id's duration up to a whole frame, so
    at `model_speed` a unit is longer than 1 / model_speed of its length at the voice's speed; its length at
    the voice's speed is estimated id by id (a duration d came from d - 0.5 frames on average, at least one
    frame each), much nearer the truth than 1 / model_speed. Without durations, the nominal stretch."""
    nominal = asked / model_speed
    if nominal <= 1.0 + 1e-6:
        return 1.0
    durations = None if durations is None else np.asarray(durations, dtype=np.float64).reshape(-1)
    if durations is None or len(durations) == 0 or not np.all(np.isfinite(durations)) or durations.sum() <= 0:
        return nominal
    normal = np.maximum(1.0, (durations - 0.5) * model_speed + 0.5).sum()
    stretch = asked * durations.sum() / normal
    return min(max(stretch, 1.0), TOP_SPEED)
