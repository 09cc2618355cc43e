# SPDX-License-Identifier: GPL-3.0-or-later
"""What one inference says: a unit of phonemes with the word and mark events among them, or a silence."""

import unicodedata

from .log import log
from .piper_tts import merge_known_vowel_clusters
from .text_splitting import MAXIMUM_PHONEMES_PER_INFERENCE, MAXIMUM_WORDS_PER_INFERENCE, ipa_size

# Characters of a `.phonemes` segment that are not sounds: syllable breaks, tie bars, linking.
IPA_NOT_SOUNDS = set(".|\u035c\u0361\u203f")


class Unit:
    """Phonemes said in one inference (a clause, or several segments' phonemes run together), with the
    events that stand at positions among them: (position, kind, payload), position a phoneme index,
    fractional when a word starts inside an eSpeak word."""

    def __init__(self, voice, length_scale, volume, stretch=1.0):
        self.voice = voice
        self.length_scale = length_scale
        self.stretch = stretch  # what the time-stretch is asked to add to the model's speed (rate_plan)
        self.volume = volume
        self.phonemes = []
        self.events = []
        self.words = 0
        self.open = True

    def compatible(self, voice, length_scale, volume, stretch):
        return (self.open and self.voice is voice and self.length_scale == length_scale and self.volume == volume
                and self.stretch == stretch)

    def fitting(self, ipa_words, phonemes=MAXIMUM_PHONEMES_PER_INFERENCE):
        """How many of `ipa_words`, from the first, this unit can take within MAXIMUM_WORDS_PER_INFERENCE
        words and `phonemes` phonemes (ipa_size, and a space each)."""
        size = len(self.phonemes)
        for count, word in enumerate(ipa_words):
            size += ipa_size(word) + 1
            if self.words + count + 1 > MAXIMUM_WORDS_PER_INFERENCE or size > phonemes:
                return count
        return len(ipa_words)

    def add_words(self, ipa_words, terminator, anchors):
        """Appends eSpeak's IPA words (then the clause's terminator); `anchors` are (x, kind, payload) with
        x in IPA-word units (2.5: halfway through the third word). Returns the first phoneme's index."""
        id_map = self.voice.id_map
        if ipa_words and self.phonemes and self.phonemes[-1] != " ":
            self.phonemes.append(" ")
        first = len(self.phonemes)
        self.words += len(ipa_words)
        bounds = []
        for number, word in enumerate(ipa_words):
            if number:
                self.phonemes.append(" ")
            start = len(self.phonemes)
            sounds = []
            for character in unicodedata.normalize("NFD", word):
                if character in id_map:
                    sounds.append(character)
                elif character not in IPA_NOT_SOUNDS and character not in self.voice.warned:
                    self.voice.warned.add(character)
                    log(f"piper:{self.voice.name} has no phoneme '{character}' (U+{ord(character):04X}): dropped")
            if self.voice.config.vowel_clusters and merge_known_vowel_clusters is not None:
                sounds = merge_known_vowel_clusters(sounds, self.voice.config.vowel_clusters)
            self.phonemes += sounds
            bounds.append((start, len(self.phonemes)))
        for x, kind, payload in anchors:
            if x < 0:
                position = -1.0
            elif not bounds:
                position = float(first)
            else:
                word = min(int(x), len(bounds) - 1)
                fraction = min(max(x - word, 0.0), 1.0) if word == int(x) else 0.0
                start, end = bounds[word]
                position = start + fraction * (end - start)
            self.events.append((position, kind, payload))
        if terminator:
            for character in terminator + (" " if terminator in ",:;" else ""):
                if character in id_map:
                    self.phonemes.append(character)
        return first

    def anchor_here(self, kind, payload):
        self.events.append((float(len(self.phonemes)), kind, payload))


class Silence:
    def __init__(self, frames):
        self.frames = frames
        self.events = []
