# SPDX-License-Identifier: GPL-3.0-or-later
"""How loud a clause is (the RMS of its voiced windows) and the gain that brings it to eSpeak-NG's loudness."""

import math

import numpy as np

# The loudness a clause is brought to at volume 100 (-20 dBFS): eSpeak-NG's at volume 100, as gated_rms
# measures both, so that the two engines are as loud (docs/voices.md). Piper's own output varies from
# sentence to sentence far more than eSpeak's, so each clause is scaled to the target rather than the voice
# by one gain. Volume v scales it by v / 100 (0...200, 200 is eSpeak at 100 times 2, limited, as a11yd does
# for eSpeak).
TARGET_RMS_AT_100 = 0.100


def gated_windows(samples, sample_rate, relative_db=-30.0):
    """(the window's length in samples, each whole 20 ms window's mean energy, which of them are within
    `relative_db` of the loudest): what gated_rms and rest_gain measure; None when `samples` is shorter
    than a window."""
    window = max(int(0.02 * sample_rate), 1)
    count = len(samples) // window
    if count == 0:
        return None
    energy = np.mean(np.square(samples[:count * window], dtype=np.float64).reshape(count, window), axis=1)
    return window, energy, energy >= energy.max() * 10 ** (relative_db / 10)


def gated_rms(samples, sample_rate, relative_db=-30.0):
    """RMS over the 20 ms windows within `relative_db` of the loudest: the loudness of the voiced part,
    whatever the pauses (measured the same way on eSpeak-NG for TARGET_RMS_AT_100)."""
    gated = gated_windows(samples, sample_rate, relative_db)
    if gated is None:
        return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    _, energy, voiced = gated
    return float(np.sqrt(np.mean(energy[voiced])))


def rest_gain(audio, split, first_gain, target, sample_rate):
    """The gain of audio[split:] that, with audio[:split] at `first_gain`, puts the whole at `target` as
    gated_rms measures it (its windows gated as in the audio unscaled; a window belongs to the piece it
    starts in), or None if there is none."""
    gated = gated_windows(audio, sample_rate)
    if gated is None:
        return None
    window, energy, kept = gated
    first = np.arange(len(energy)) * window < split
    before, after = energy[kept & first].sum(), energy[kept & ~first].sum()
    square = (target * target * kept.sum() - first_gain * first_gain * before) / after if after > 0 else 0.0
    return math.sqrt(square) if square > 0 else None
