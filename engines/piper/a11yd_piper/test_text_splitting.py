# SPDX-License-Identifier: GPL-3.0-or-later
"""How a text is cut before the model says it."""

import unittest

from worker_client import PROSE, hex_word

from .text_splitting import cut_long_words, text_blocks


class TextSplittingTests(unittest.TestCase):
    """How a text is read and cut: blocks read one at a time (text_blocks), eSpeak words too long for one
    inference cut (cut_long_words)."""

    def blocks(self, text, size=100):
        blocks = list(text_blocks(text, size))
        self.assertEqual(blocks[0][0], 0)
        self.assertEqual(blocks[-1][1], len(text))
        for (_, end), (start, _) in zip(blocks, blocks[1:]):
            self.assertEqual(end, start, "the blocks follow each other")
        for start, end in blocks:
            self.assertLessEqual(end - start, size)
            self.assertGreater(end - start, 0)
        return [text[start:end] for start, end in blocks]

    def test_a_short_text_is_one_block(self):
        self.assertEqual(self.blocks("Hello there.", 100), ["Hello there."])
        self.assertEqual(self.blocks("x" * 100, 100), ["x" * 100])
        self.assertEqual(list(text_blocks("", 100)), [(0, 0)])

    def test_blocks_end_after_a_sentence_else_at_a_space(self):
        for block in self.blocks(PROSE * 20, 100)[:-1]:
            self.assertRegex(block, r"[.,] $" if "." in block[50:] else r" $", block)
        words = self.blocks("word " * 100, 100)
        self.assertTrue(all(block.endswith(" ") for block in words[:-1]), words)

    def test_a_long_word_is_cut_after_punctuation_else_anywhere_but_before_a_combining_mark(self):
        url = "https://example.com/" + "/".join(["segment"] * 40)
        for block in self.blocks(url, 100)[:-1]:
            self.assertTrue(block.endswith("/"), block)
        blob = hex_word(1000)
        self.assertEqual([len(b) for b in self.blocks(blob, 100)], [100] * 10)
        accented = "e\u0301" * 100
        for block in self.blocks(accented, 99)[1:]:
            self.assertEqual(block[0], "e", "a block never starts with a combining mark")

    def test_long_ipa_words_are_cut_and_their_anchors_move_with_them(self):
        long = "ˈeɪ" * 40  # 120 characters
        words, anchors = cut_long_words(["hə", long, "wɜːld"], [(0.0, "word", 1), (1.0, "word", 2),
                                                                              (1.5, "word", 3), (2.0, "word", 4), (-1.0, "mark", "m")], 48)
        self.assertTrue(all(len(w) <= 48 for w in words), words)
        self.assertEqual("".join(words[1:-1]), long)
        self.assertEqual((words[0], words[-1]), ("hə", "wɜːld"))
        pieces = len(words) - 2
        self.assertEqual([x for x, _, _ in anchors], [0.0, 1.0, 1.0 + pieces / 2, 1.0 + pieces, -1.0])
        self.assertEqual(cut_long_words(["a", "b"], [(1.0, "word", 1)], 48), (["a", "b"], [(1.0, "word", 1)]))
        # Never before a length mark or a combining mark.
        words, _ = cut_long_words(["a" * 48 + "ːb" + "ã" * 60], [], 48)
        self.assertEqual(words[0], "a" * 47)
        self.assertTrue(words[1].startswith("aːb"), words)
        self.assertTrue(all(not w[0] in "ː\u0303" for w in words), words)


if __name__ == "__main__":
    unittest.main()
