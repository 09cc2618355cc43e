# SPDX-License-Identifier: GPL-3.0-or-later
"""The units an utterance is said in: bounded, made as they are needed, every word told once at its offset."""

import re
import unittest

from worker_client import JOE, PROSE, RATE, VOICES, hex_word, require_runtime

from .frames import Segment, Utterance
from .jobs import Job
from .phonemizer import Phonemizer
from .text_splitting import (FIRST_UNIT_PHONEMES, MAXIMUM_PHONEMES_PER_INFERENCE, MAXIMUM_WORDS_PER_INFERENCE,
                             TEXT_BLOCK_CHARACTERS)
from .utterance_plan import UtterancePlanner
from .voices import Voices


def setUpModule():
    require_runtime()


class LongTextTests(unittest.TestCase):
    """The units the worker says for long words and texts, made as they are needed (UtterancePlanner.items,
    in this process with the real piper-tts eSpeak and voice; nothing is synthesised)."""

    @classmethod
    def setUpClass(cls):
        cls.planner = UtterancePlanner(Voices([VOICES], 1), Phonemizer(), RATE)

    def units(self, text):
        """UtterancePlanner.items for `text` in the test voice, as a generator."""
        segment = Segment()
        segment.kind, segment.content, segment.voice = 0, text, JOE
        segment.source_start, segment.source_length = 0, len(text)
        segment.spell_out = segment.punctuation = False
        segment.rate_scale = segment.pitch_scale = segment.volume_scale = 1.0
        segment.pause_ms, segment.mark = 0, None
        utterance = Utterance()
        utterance.text, utterance.rate, utterance.pitch, utterance.volume = text, 175, 50, 100
        utterance.segments = [segment]
        return self.planner.items(Job(1, utterance))

    def test_an_ordinary_clause_of_24_words_is_one_unit(self):
        text = ("the small room on the third floor next to the kitchen is where the meeting will be held from "
                "now on and then some.")
        self.assertEqual(len(text.split()), 24)
        units = list(self.units(text))
        self.assertEqual(len(units), 1, [len(unit.phonemes) for unit in units])

    def test_no_unit_is_longer_than_its_bounds_and_the_first_of_a_cut_clause_is_short(self):
        for name, text in (("a 2,000-character word", hex_word(2000)), ("a run of one letter", "a" * 2000),
                           ("a long clause", " ".join(["internationalisation"] * 60)),
                           ("a URL", "https://example.com/" + "/".join(["segment"] * 60))):
            units = self.units(text)
            first = next(units)
            self.assertLessEqual(len(first.phonemes), FIRST_UNIT_PHONEMES + 2, name)
            for number, unit in zip(range(40), units):
                self.assertLessEqual(len(unit.phonemes), MAXIMUM_PHONEMES_PER_INFERENCE + 2, f"{name}: unit {number + 1}")
                self.assertLessEqual(unit.words, MAXIMUM_WORDS_PER_INFERENCE, name)

    def test_the_first_unit_is_given_before_the_whole_text_is_read(self):
        read = []
        phonemizer = self.planner.phonemizer
        clauses = phonemizer.clauses
        phonemizer.clauses = lambda text: read.append(len(text)) or clauses(text)
        try:
            for text in (PROSE * 1500, hex_word(40_000)):
                del read[:]
                next(self.units(text))
                self.assertLess(sum(read), 3 * TEXT_BLOCK_CHARACTERS, f"{len(text)} characters")
        finally:
            del phonemizer.clauses

    def test_every_word_is_told_once_at_its_offset_across_blocks_and_in_a_long_word(self):
        blob = hex_word(1500)  # longer than a block: cut inside it
        text = PROSE * 8 + blob + " and " + PROSE * 8
        told = [payload for unit in self.units(text) for _, kind, payload in unit.events if kind == "word"]
        expected = []
        for match in re.finditer(r"\S+", text):
            core = re.search(r"\w(.*\w)?", match.group())
            expected.append((match.start() + core.start(), len(core.group())))
        self.assertEqual(told, expected)
        self.assertIn((len(PROSE) * 8, 1500), told)


if __name__ == "__main__":
    unittest.main()
