# SPDX-License-Identifier: GPL-3.0-or-later
"""An utterance as what the model says: its segments read (text a block at a time, clause by clause, by
piper-tts's eSpeak-NG; IPA as it is; spelt letters), made into bounded units with their word and mark events,
and silences, one at a time as they are needed."""

import math
import unicodedata

from .frames import ENGINE_FAILED
from .jobs import SpeechFailure
from .log import log
from .phonemizer import safe_text
from .rate import rate_plan
from .text_splitting import (FIRST_UNIT_PHONEMES, MAXIMUM_PHONEMES_PER_INFERENCE, MAXIMUM_WORDS_PER_INFERENCE, WORD,
                             core, cut_long_words, text_blocks)
from .time_stretch import Sonic
from .units import IPA_NOT_SOUNDS, Silence, Unit


class UtterancePlanner:
    """Used on the synthesis thread only, as its eSpeak-NG (`phonemizer`) is."""

    def __init__(self, voices, phonemizer, sample_rate):
        self.voices = voices
        self.phonemizer = phonemizer
        self.sample_rate = sample_rate
        self.said_punctuation = False

    def use_voice(self, voice):
        """Sets eSpeak-NG to the voice's phonemes; a voice whose phonemes it does not know fails the request."""
        try:
            self.phonemizer.set_voice(voice.config.espeak_voice)
        except Exception:
            raise SpeechFailure(ENGINE_FAILED, f"piper:{voice.name} reads {voice.config.espeak_voice} phonemes, which "
                                "piper-tts's eSpeak-NG does not know (espeak.voice in its .onnx.json)") from None

    def items(self, job):
        """The utterance as units to synthesise and silences, in order, made as they are needed."""
        utterance = job.utterance
        current = None
        said = False  # a unit with phonemes given
        for segment in utterance.segments:
            voice = self.voices.get(segment.voice)
            self.use_voice(voice)
            length_scale, stretch = rate_plan(utterance.rate * segment.rate_scale, voice.config.length_scale,
                                              Sonic.library() is not None)
            volume = utterance.volume * segment.volume_scale
            volume = min(max(int(round(volume)) if math.isfinite(volume) else utterance.volume, 0), 200)
            pause = min(max(segment.pause_ms, 0), 60_000)
            # Pitch: a Piper model has no pitch input; utterance.pitch and pitch_scale are ignored.
            if segment.punctuation and not self.said_punctuation:
                self.said_punctuation = True
                log("punctuation is not named by the Piper worker (its eSpeak-NG refuses espeakPUNCTUATION)")
            if current is not None and (pause > 0 or not current.compatible(voice, length_scale, volume, stretch)):
                if current.phonemes or current.events:
                    said = said or bool(current.phonemes)
                    yield current
                current = None
            if pause > 0:
                yield Silence(self.sample_rate * pause // 1000)
            if current is None:
                current = Unit(voice, length_scale, volume, stretch)
            marks = [("mark", segment.mark)] if segment.mark is not None else []

            def add(unit, words, terminator, anchors):
                # A mark stands at the segment's first frame: the unit's own first frame (before the
                # model's lead-in silence, as eSpeak's) when the segment starts the unit.
                for kind, payload in reversed(marks):
                    anchors.insert(0, (0.0 if unit.phonemes else -1.0, kind, payload))
                marks.clear()
                unit.add_words(words, terminator, anchors)

            for words, terminator, closes, anchors in self.pieces(segment):
                job.check()
                words, anchors = cut_long_words(words, anchors)
                # Bounded units (MAXIMUM_WORDS_PER_INFERENCE, MAXIMUM_PHONEMES_PER_INFERENCE): what does not
                # fit after what the unit holds starts the next; what does not fit in an empty unit is cut,
                # its first words a unit of their own, and shorter (FIRST_UNIT_PHONEMES) when nothing of the
                # utterance has been said yet.
                while True:
                    if not current.open:
                        current = Unit(voice, length_scale, volume, stretch)
                    if current.fitting(words) == len(words):
                        break
                    if not current.phonemes:
                        count = current.fitting(words, MAXIMUM_PHONEMES_PER_INFERENCE if said else FIRST_UNIT_PHONEMES)
                        count = max(count, 1)
                        add(current, words[:count], "", [a for a in anchors if a[0] < count])
                        words, anchors = words[count:], [(x - count, k, p) for x, k, p in anchors if x >= count]
                    current.open = False
                    said = True
                    yield current
                    current = Unit(voice, length_scale, volume, stretch)
                if words or (terminator and current.phonemes):
                    add(current, words, terminator, anchors)
                if closes:
                    current.open = False
                    if current.phonemes or current.events:
                        said = said or bool(current.phonemes)
                        yield current
                    current = Unit(voice, length_scale, volume, stretch)
            for kind, payload in marks:  # a segment that says nothing: its mark stands where it is
                current.anchor_here(kind, payload)
        if current is not None and (current.phonemes or current.events):
            yield current

    # Clause by clause: a clause ending in , : or ; is said with its terminator and a space, as in Piper's
    # sentences, and the next starts after the model's own lead-in, which makes a pause as long as the one
    # Piper makes inside a whole sentence (docs/voices.md). No gap is added; sentences are said one by one by
    # Piper itself, so their boundaries are its own.
    def pieces(self, segment):
        """(IPA words, terminator, closes the unit, anchors) for one segment, anchors in IPA-word units."""
        start, length = segment.source_start, max(segment.source_length, 0)

        def word_event(offset, size):
            begin = min(max(start + offset, start), start + length)
            size = max(0, min(size, start + length - begin))
            return (begin, size) if size > 0 else None

        if segment.kind == 1:
            # IPA: one word event for the whole segment, at its first phoneme (as eSpeak's `[[…]]`).
            ipa = "".join(c for c in unicodedata.normalize("NFD", segment.content) if c not in IPA_NOT_SOUNDS)
            words = ipa.split()
            anchors = [(0.0, "word", (start, length))] if length > 0 and words else []
            yield words, "", False, anchors
            return
        text = segment.content
        if segment.spell_out:
            words, anchors = [], []
            for offset, character in enumerate(text):
                if character.isspace():
                    continue
                ipa = self.phonemizer.ipa_of(character).split()
                if not ipa:
                    continue
                event = word_event(offset, 1)
                if event:
                    anchors.append((float(len(words)), "word", event))
                words += ipa
                if len(words) >= MAXIMUM_WORDS_PER_INFERENCE:  # a long text is spelt as it is said
                    yield words, "", False, anchors
                    words, anchors = [], []
            yield words, "", False, anchors
            return
        # Block by block (text_blocks), each read whole by eSpeak before any other eSpeak call (see
        # Phonemizer), as the units before it are said.
        for low, high in text_blocks(text):
            block = text[low:high]
            safe, positions = safe_text(block)
            clauses = self.phonemizer.clauses(safe)
            if positions is not None:
                clauses = [(ipa, t, s, positions[a], positions[b]) for ipa, t, s, a, b in clauses]
            # The block's words: (offset in the block, what of it is in the block, its whole length). A word
            # cut by the block's end is told once, in the block where it starts.
            tokens = []
            for match in WORD.finditer(text, low, high):
                offset = match.start()
                if offset == low and low > 0 and not text[low - 1].isspace():
                    continue
                whole = match.group() if match.end() < high or high == len(text) else WORD.match(text, offset).group()
                inner, size = core(whole)
                start_in_block = offset + inner - low
                tokens.append((start_in_block, block[start_in_block:start_in_block + size], size))
            taken = 0
            for number, (ipa, terminator, sentence, begin, end) in enumerate(clauses):
                last = number == len(clauses) - 1
                words = ipa.split()
                mine = []
                while taken < len(tokens) and (tokens[taken][0] < end or last):
                    offset, part, size = tokens[taken]
                    mine.append((low + offset, part, size))
                    taken += 1
                anchors = self.word_anchors(mine, words, word_event)
                yield words, terminator, not last or terminator != "", anchors

    def word_anchors(self, tokens, ipa_words, word_event):
        """The text's words, (offset, what eSpeak read of it, its length), placed among eSpeak's: by each
        word's own count of IPA words when they add up ("42" is two), one for one when the counts agree,
        else in proportion."""
        if not ipa_words or not tokens:
            return []
        counts = [self.phonemizer.word_count(safe_text(part)[0]) for _, part, _ in tokens]
        total = sum(counts)
        if total != len(ipa_words):
            if len(tokens) == len(ipa_words):
                counts, total = [1] * len(tokens), len(tokens)
            elif total == 0:
                counts, total = [1] * len(tokens), len(tokens)
        scale = len(ipa_words) / total
        anchors, before = [], 0
        for (offset, _, size), count in zip(tokens, counts):
            event = word_event(offset, size)
            if count > 0 and event:
                anchors.append((before * scale, "word", event))
            before += count
        return anchors
