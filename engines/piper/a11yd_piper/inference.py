# SPDX-License-Identifier: GPL-3.0-or-later
"""A unit through the model: phoneme ids in, audio (or latent frames to decode) and each phoneme's place out,
every onnxruntime run ended at once by the job's cancel."""

import numpy as np

from .decoder_split import Latent
from .piper_tts import BOS, EOS, PAD, onnxruntime
from .rate import unit_stretch


def cancellable(job, work):
    """work(options) with options whose terminate flag a cancel sets."""
    options = onnxruntime.RunOptions()
    with job.lock:
        job.check()
        job.run_options = options
    try:
        return work(options)
    finally:
        with job.lock:
            job.run_options = None
        job.check()


def decode(job, latent, first, last):
    """Samples of frames first..<last of a split model's `latent` (a Latent)."""
    return np.asarray(cancellable(job, lambda options: latent.decode(first, last, options)), dtype=np.float32)


def infer(job, unit):
    """The unit's audio (float, the voice's rate; a `Latent` to decode when the model is split), each
    phoneme's first sample (len + 1 values: the last is where the end-of-sentence padding starts), and the
    time-stretch to apply to that audio (unit_stretch: 1 for none)."""
    voice = unit.voice
    id_map = voice.id_map
    pad = id_map[PAD]
    ids = list(id_map[BOS]) + pad
    first_ids = []
    for phoneme in unit.phonemes:
        first_ids.append(len(ids))
        ids += id_map[phoneme] + pad
    first_ids.append(len(ids))
    ids += id_map[EOS]
    config = voice.config
    result = cancellable(job, lambda options: voice.run(ids, unit.length_scale, options))
    audio = result[0] if isinstance(result[0], Latent) else np.asarray(result[0], dtype=np.float32).reshape(-1)
    starts = None
    frames = None
    if len(result) > 1:
        frames = np.asarray(result[1], dtype=np.float64).reshape(-1)
        durations = (frames * config.hop_length).astype(np.int64)
        if len(durations) == len(ids) and durations.sum() > 0:
            edges = np.concatenate([[0], np.cumsum(durations)]).astype(np.float64)
            starts = edges[first_ids] * (len(audio) / edges[-1])
        else:
            frames = None
    stretch = 1.0
    if unit.stretch > 1.0:
        model_speed = config.length_scale / unit.length_scale
        stretch = unit_stretch(unit.stretch * model_speed, model_speed, frames)
    if starts is None:
        # No durations: the audio shared out equally among the phonemes, with one share of silence
        # before and after.
        starts = (np.arange(len(unit.phonemes) + 1) + 1) * (len(audio) / (len(unit.phonemes) + 2))
    return audio, starts, stretch
