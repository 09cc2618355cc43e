# SPDX-License-Identifier: GPL-3.0-or-later
"""The model cut before its vocoder: the same samples decoded in pieces, and how much is decoded first."""

import collections
import os
import unittest

import numpy as np

from worker_client import VOICES, require_runtime

from .decoder_split import (DECODING_MARGIN, DECODING_SHARES, FIRST_PIECE_FRAMES, LEAD_IN_FRAMES, DecoderSplit,
                            first_piece)
from .voice import Voice


def setUpModule():
    require_runtime()


class DecoderSplitTests(unittest.TestCase):
    """The model cut before its vocoder, in this process, with the installed voice."""

    def test_a_unit_decoded_in_pieces_is_the_unit_decoded_whole(self):
        voice = Voice("en_US-joe-medium", os.path.join(VOICES, "en_US-joe-medium.onnx"),
                      os.path.join(VOICES, "en_US-joe-medium.onnx.json"), 1)
        self.assertIsNotNone(voice.split, "the voice's decoder is run apart")
        self.assertTrue(voice.aligned)
        ids = [1, 0] + [i for c in "həlˈoʊ ðˈɛɹ." for i in voice.id_map.get(c, []) + [0]] + [2]
        latent, durations = voice.run(ids, voice.config.length_scale)
        frames = latent.frames.shape[2]
        self.assertEqual(len(latent), frames * voice.config.hop_length)
        self.assertEqual(len(durations.reshape(-1)), len(ids))
        whole = latent.decode(0, frames)
        for first in (1, 16, frames // 2, frames - 1):
            pieces = np.concatenate([latent.decode(0, first), latent.decode(first, frames)])
            self.assertEqual(len(pieces), len(whole))
            self.assertLess(float(np.abs(pieces - whole).max()), 1e-4, first)

    def test_the_first_piece_leaves_time_to_decode_the_rest(self):
        for share in (0.1, 0.25, 0.5, 1.0):
            for frames in range(1, 3000):
                first = first_piece(frames, 16, share)
                self.assertLessEqual(first, frames)
                self.assertGreaterEqual(first, min(frames, FIRST_PIECE_FRAMES))
                if first < frames:
                    rest = frames - first + 16
                    self.assertLessEqual(share * rest, first - LEAD_IN_FRAMES + 1e-9, (share, frames))
                    self.assertGreaterEqual(frames - first, first // 2, frames)

    def test_a_unit_with_audio_still_to_play_before_it_is_decoded_within_it(self):
        context = 16
        for share in (0.1, 0.25, 0.5, 1.0):
            for lead in (0.0, 5.0, 20.0, 60.0, 200.0):
                for frames in range(1, 1500, 7):
                    first = first_piece(frames, context, share, lead, lead_in=0)
                    whole = share * (frames + context)
                    if whole <= lead:
                        self.assertEqual(first, frames, "decoded whole while the lead plays")
                        continue
                    self.assertGreaterEqual(first, min(frames, FIRST_PIECE_FRAMES))
                    if first == frames:  # a short unit: what would be left after a first piece is too little
                        self.assertLess(frames, 200, (share, lead))
                        continue
                    piece, rest = share * (first + context), share * (frames - first + context)
                    # What plays while the rest is decoded: the lead left after the first piece's decoding
                    # (none when it came late), then the first piece.
                    self.assertLessEqual(rest, max(lead - piece, 0.0) + first + 1e-9, (share, lead, frames))

    def test_the_share_follows_the_slowest_recent_decoding(self):
        split = DecoderSplit.__new__(DecoderSplit)
        split.hop, split.sample_rate, split.speeds = 256, 22050, collections.deque(maxlen=8)
        self.assertEqual(split.share(), DECODING_SHARES[0])
        frame = 256 / 22050
        split.speeds.extend([0.06 * frame, 0.1 * frame, 0.05 * frame])
        self.assertAlmostEqual(split.share(), DECODING_MARGIN * 0.1)
        split.speeds.append(1.0 * frame)
        self.assertEqual(split.share(), DECODING_SHARES[1])


if __name__ == "__main__":
    unittest.main()
