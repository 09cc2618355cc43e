# SPDX-License-Identifier: GPL-3.0-or-later
"""The peak limiter that keeps the voice's peaks under -1 dBFS, as a11yd's own does for eSpeak."""

import numpy as np

# Peaks above -1 dBFS are limited (PeakLimiter.swift's ceiling: room for the resampling to 48 kHz).
CEILING = 29_204 / 32_767
LIMITER_RELEASE_SECONDS = 0.05


class PeakLimiter:
    """Holds peaks under CEILING, as PeakLimiter.swift does for eSpeak: a peak envelope that jumps at once
    and decays over LIMITER_RELEASE_SECONDS, the gain ceiling / envelope. Per block of 32 samples (1.5 ms),
    the gain moving linearly between block edges and at each edge never above either neighbouring
    block's, so no sample passes the ceiling; carried across the clauses of an utterance."""

    BLOCK = 32

    def __init__(self, sample_rate):
        self.log_decay = -self.BLOCK / (LIMITER_RELEASE_SECONDS * sample_rate)
        self.envelope = 0.0
        self.gain = 1.0

    def process(self, samples):
        count = len(samples)
        if count == 0:
            return samples
        blocks = -(-count // self.BLOCK)
        padded = np.zeros(blocks * self.BLOCK, dtype=np.float64)
        padded[:count] = samples
        peaks = np.abs(padded).reshape(blocks, self.BLOCK).max(axis=1)
        # envelope[b] = max(peak[b], envelope[b-1] * decay), in the log domain so that it vectorises.
        index = np.arange(blocks)
        with np.errstate(divide="ignore"):
            logs = np.log(np.concatenate([[self.envelope], peaks]))
        logs = logs - np.concatenate([[-self.log_decay], index * self.log_decay])
        envelope = np.exp(np.maximum.accumulate(logs)[1:] + index * self.log_decay)
        self.envelope = float(envelope[-1])
        if envelope.max() <= CEILING and self.gain >= 1.0:
            return samples
        gains = np.minimum(1.0, CEILING / np.maximum(envelope, 1e-12))
        edges = np.empty(blocks + 1)
        edges[0] = min(self.gain, gains[0])
        edges[1:blocks] = np.minimum(gains[:-1], gains[1:])
        edges[blocks] = gains[-1]
        self.gain = float(gains[-1])
        tail = np.tile(np.arange(self.BLOCK) / self.BLOCK, blocks)
        left = np.repeat(edges[:-1], self.BLOCK)
        right = np.repeat(edges[1:], self.BLOCK)
        ramp = left + (right - left) * tail
        return (padded * ramp)[:count]
