# SPDX-License-Identifier: GPL-3.0-or-later
"""Windowed-sinc resampling from a voice's rate to the one a11yd asked for."""

import math

import numpy as np


RESAMPLING_ZERO_CROSSINGS = 32
RESAMPLING_CUTOFF = 0.92
_resampling_tables = {}


def _sinc_weights(fractions, cutoff):
    """Windowed-sinc weights (Blackman window) for output samples `fractions` of an input sample after
    their base sample: (len(fractions), taps), each row summing to 1, and the taps' offsets."""
    half = int(math.ceil(RESAMPLING_ZERO_CROSSINGS / cutoff))
    taps = np.arange(-half + 1, half + 1)
    t = taps[None, :] - np.asarray(fractions, dtype=np.float64)[:, None]
    weights = cutoff * np.sinc(cutoff * t) * (0.42 + 0.5 * np.cos(np.pi * t / half) + 0.08 * np.cos(2 * np.pi * t / half))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights.astype(np.float32), half


def resample(samples, rate_in, rate_out):
    """Windowed-sinc resampling (Blackman window, 32 zero crossings each side, cut-off at 0.92 of the lower
    Nyquist frequency: flat within 0.01 dB to 0.8 of it, -77 dB or less from 1.04 of it), polyphase for a
    rational ratio (a table per ratio; about 1-2 ms per second of audio). Each clause is done alone: it
    starts and ends in silence."""
    if rate_in == rate_out or len(samples) == 0:
        return samples
    common = math.gcd(rate_in, rate_out)
    up, down = rate_out // common, rate_in // common
    count = int(round(len(samples) * up / down))
    cutoff = RESAMPLING_CUTOFF * min(1.0, up / down)
    if up <= 4096:
        table = _resampling_tables.get((up, down))
        if table is None:
            table = _resampling_tables[(up, down)] = _sinc_weights(np.arange(up) / up, cutoff)
        weights, half = table
    else:  # an odd pair of rates: weights per output sample
        weights, half = None, int(math.ceil(RESAMPLING_ZERO_CROSSINGS / cutoff))
    padded = np.concatenate([np.zeros(half, np.float32), samples.astype(np.float32),
                             np.zeros(half + down + 2, np.float32)])
    # windows[b + 1] holds the input samples around input sample b (taps -half+1 ... half).
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * half)
    out = np.empty(count, dtype=np.float32)
    if weights is None:
        for first in range(0, count, 4096):
            numbers = np.arange(first, min(first + 4096, count))
            base = numbers * down // up
            rows, _ = _sinc_weights((numbers * down - base * up) / up, cutoff)
            out[first:first + len(numbers)] = np.sum(windows[base + 1] * rows, axis=1)
        return out
    # Output n has phase (n * down) % up; those of one phase are every `up`-th, their bases `down` apart.
    inverse = pow(down, -1, up) if up > 1 else 0
    for phase in range(up):
        first = (phase * inverse) % up
        if first >= count:
            continue
        number = len(range(first, count, up))
        base = first * down // up
        out[first::up] = windows[base + 1:base + 1 + (number - 1) * down + 1:down] @ weights[phase]
    return out
