# SPDX-License-Identifier: GPL-3.0-or-later
"""How a text is cut before the model says it: the blocks eSpeak reads at a time, each word's core (what its
event names), and eSpeak's IPA words too long for one inference; and the bounds of one inference."""

import re
import unicodedata

# The most eSpeak words said in one inference: a clause without punctuation can be any length, and its
# first sound waits for all of it (the front runs over the whole unit). Longer clauses
# are said in pieces of this many words, each with the model's own lead-in and ending (a short pause).
MAXIMUM_WORDS_PER_INFERENCE = 24
# ... and the most phonemes (IPA characters): a long unbroken word (a hash, a URL, base64, a run of one
# letter) is a few eSpeak words of hundreds of phonemes each, and the model's front takes longer than in
# proportion to them. This many keeps a clause of MAXIMUM_WORDS_PER_INFERENCE ordinary words whole. A longer
# eSpeak word is cut inside (LONG_IPA_WORD).
MAXIMUM_PHONEMES_PER_INFERENCE = 160
# The utterance's first unit, when its clause has to be cut anyway, is cut shorter: its first sound waits
# for the front over all of it, and nothing plays meanwhile.
FIRST_UNIT_PHONEMES = 48
LONG_IPA_WORD = FIRST_UNIT_PHONEMES
# Text is read by eSpeak (phonemised) a block at a time, as the units are needed, not all at once before
# the first is said (a long text would delay its first sound, and a stop would wait for it): at most this
# many code points a block, cut after a sentence's end where there is one, else at a space (text_blocks). A
# text this long or shorter is read whole.
TEXT_BLOCK_CHARACTERS = 1000


WORD = re.compile(r"\S+")


def core(token):
    """A token without the punctuation around it (the part a word event names); all of it if it has no
    letter or digit ("&", "--"). Read from both ends: a token can be a 40,000-character blob."""
    def sound(character):
        return unicodedata.category(character)[0] in "LNM"
    first = next((i for i, c in enumerate(token) if sound(c)), None)
    if first is None:
        return 0, len(token)
    last = next(i for i in range(len(token) - 1, first - 1, -1) if sound(token[i]))
    return first, last + 1 - first


SENTENCE_END = re.compile(r"[.!?;:\u2026\u3002][\"')\]\u00bb\u201d\u2019]*\s+")
SPACES = re.compile(r"\s+")
NOT_A_LETTER = re.compile(r"[^\w\s]")


def text_blocks(text, size=TEXT_BLOCK_CHARACTERS):
    """(start, end) of the blocks `text` is read in, in order, together all of it: the whole text when it
    has at most `size` code points; else blocks of at most `size`, each ending after the last sentence
    end (a mark and a space) in its second half, else after its last space, else (inside a long word)
    after the last character of its second half that is neither a letter, a digit nor a space, else at
    `size` (never before a combining mark)."""
    start, length = 0, len(text)
    while length - start > size:
        window = text[start:start + size]
        cut = None
        for match in SENTENCE_END.finditer(window, size // 2):
            cut = match.end()
        if cut is None:
            for match in SPACES.finditer(window):
                cut = match.end()
        if cut is None:
            for match in NOT_A_LETTER.finditer(window, size // 2):
                cut = match.end()
        if cut is None:
            cut = size
            while cut > 1 and unicodedata.category(text[start + cut])[0] == "M":  # the next block's first
                cut -= 1
        yield start, start + cut
        start += cut
    yield start, length


def ipa_size(word):
    """Phonemes in an eSpeak IPA word, near enough: its characters, decomposed (as Unit reads them)."""
    return len(unicodedata.normalize("NFD", word))


def cut_long_words(words, anchors, longest=LONG_IPA_WORD):
    """`words` (eSpeak's IPA words) with each longer than `longest` characters cut into words that are
    not (never before a combining mark or a length mark), and `anchors` (x in words, as Unit.add_words
    reads them) moved with them: x inside a word cut in n stands as far inside its n pieces."""
    if all(len(word) <= longest and ipa_size(word) <= longest for word in words):
        return words, anchors
    out, starts = [], []
    for word in words:
        starts.append(len(out))
        word = unicodedata.normalize("NFD", word)
        while len(word) > longest:
            cut = longest
            while cut > 1 and (unicodedata.category(word[cut])[0] == "M" or word[cut] in "\u02d0\u02d1"):
                cut -= 1
            out.append(word[:cut])
            word = word[cut:]
        out.append(word)
    starts.append(len(out))
    moved = []
    for x, kind, payload in anchors:
        if x >= 0:
            index = int(x)
            if index >= len(words):
                x = starts[-1] + (x - len(words))
            else:
                x = starts[index] + (x - index) * (starts[index + 1] - starts[index])
        moved.append((x, kind, payload))
    return out, moved
