# SPDX-License-Identifier: GPL-3.0-or-later
"""What this worker uses of piper-tts, imported after onnxruntime was imported quietly (piper-tts imports it)."""

from .quiet_onnxruntime import onnxruntime  # first: piper-tts imports onnxruntime too

from piper import espeakbridge
from piper.config import PhonemeType, PiperConfig
from piper.const import BOS, EOS, PAD
from piper.phonemize_espeak import ESPEAK_DATA_DIR

try:  # piper-tts 1.8.0's own helper (private): the voices that declare vowel clusters need it.
    from piper.phonemize_espeak import _merge_known_vowel_clusters as merge_known_vowel_clusters
except ImportError:  # pragma: no cover
    merge_known_vowel_clusters = None

__all__ = ["onnxruntime", "espeakbridge", "PhonemeType", "PiperConfig", "BOS", "EOS", "PAD", "ESPEAK_DATA_DIR",
           "merge_known_vowel_clusters"]
