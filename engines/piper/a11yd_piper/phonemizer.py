# SPDX-License-Identifier: GPL-3.0-or-later
"""piper-tts's eSpeak-NG, reading a text clause by clause into IPA, with each clause's place in the text."""

import ctypes
import re

import numpy as np

from .piper_tts import ESPEAK_DATA_DIR, espeakbridge

# eSpeak's clause terminators (translate.h), as piper-tts's espeakbridge reads them.
CLAUSE_TYPE_SENTENCE = 0x00080000
CLAUSE_TERMINATORS = {
    40 | 0x00000 | 0x80000: ".",
    20 | 0x01000 | 0x40000: ",",
    40 | 0x02000 | 0x80000: "?",
    45 | 0x03000 | 0x80000: "!",
    30 | 0x00000 | 0x40000: ":",
    30 | 0x01000 | 0x40000: ";",
}
LANGUAGE_SWITCH = re.compile(r"\([^)]+\)")


class Phonemizer:
    """piper-tts's eSpeak-NG, used on the synthesis thread only (it is not reentrant).

    espeakbridge.get_phonemes gives a text's clauses but not where each is in the text; the same library's
    espeak_TextToPhonemesWithTerminator, called through ctypes as the bridge calls it, advances a pointer
    through the text, which gives each clause's place (eSpeak reads one character ahead: a clause ends one
    character before the pointer). It keeps that character for its next call, so each text is read to its
    end before another is started."""

    def __init__(self):
        espeakbridge.initialize(str(ESPEAK_DATA_DIR))
        library = ctypes.CDLL(espeakbridge.__file__)
        self.to_phonemes = library.espeak_TextToPhonemesWithTerminator
        self.to_phonemes.restype = ctypes.c_char_p
        self.to_phonemes.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int,
                                     ctypes.POINTER(ctypes.c_int)]
        self.voice = None
        self.word_counts = {}

    def set_voice(self, voice):
        if voice != self.voice:
            espeakbridge.set_voice(voice)
            self.voice = voice
            self.word_counts.clear()

    def clauses(self, text):
        """[(ipa, terminator, end_of_sentence, start, end)] with start/end in code points of `text`."""
        text = text.replace("\0", " ")
        raw = text.encode("utf-8")
        # Byte offset → code point offset.
        offsets = np.zeros(len(raw) + 1, dtype=np.int64)
        if raw:
            starts = np.frombuffer(raw, dtype=np.uint8) & 0xC0 != 0x80
            offsets[1:] = np.cumsum(starts)
        buffer = ctypes.create_string_buffer(raw)
        base = ctypes.addressof(buffer)
        pointer = ctypes.c_void_p(base)
        terminator = ctypes.c_int(0)
        result = []
        start = 0
        while pointer.value is not None and len(result) <= len(raw):
            phonemes = self.to_phonemes(ctypes.byref(pointer), 1, 2, ctypes.byref(terminator))  # UTF-8, IPA
            if pointer.value is None:
                end = len(raw)
            else:
                end = min(max(pointer.value - base - 1, start), len(raw))
                while end > start and raw[end] & 0xC0 == 0x80:
                    end -= 1
            value = terminator.value & 0x000FFFFF
            ipa = LANGUAGE_SWITCH.sub("", (phonemes or b"").decode("utf-8", "replace"))
            result.append((ipa, CLAUSE_TERMINATORS.get(value, ""), value & CLAUSE_TYPE_SENTENCE != 0,
                           int(offsets[start]), int(offsets[end])))
            start = end
        return result

    def word_count(self, word):
        """How many IPA words eSpeak says for `word` alone ("42" → 2, "--" → 0)."""
        count = self.word_counts.get(word)
        if count is None:
            count = sum(len(ipa.split()) for ipa, *_ in self.clauses(word))
            if len(self.word_counts) > 20_000:
                self.word_counts.clear()
            self.word_counts[word] = count
        return count

    def ipa_of(self, text):
        return " ".join(ipa for ipa, *_ in self.clauses(text) if ipa.strip())


def safe_text(text):
    """`text` with a space into every run of 100 UTF-8 bytes without one (eSpeak-NG 1.51 overflows a stack
    buffer on very long words; piper-tts's 1.52 limits them, this costs nothing) and Bengali digits as ASCII
    digits (1.51 reads freed memory on them), with, when a space was inserted, each code point's offset in
    `text`."""
    if any("\u09e6" <= c <= "\u09ef" for c in text):
        text = "".join(chr(ord(c) - 0x09E6 + 0x30) if "\u09e6" <= c <= "\u09ef" else c for c in text)
    if len(text.encode("utf-8")) <= 100:
        return text, None
    out, positions, run, broken = [], [], 0, False
    for offset, character in enumerate(text):
        if character.isspace():
            run = 0
        else:
            size = len(character.encode("utf-8"))
            if run + size > 100:
                out.append(" ")
                positions.append(offset)
                run, broken = 0, True
            run += size
        out.append(character)
        positions.append(offset)
    return ("".join(out), positions + [len(text)]) if broken else (text, None)
