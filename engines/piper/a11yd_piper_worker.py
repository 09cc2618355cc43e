#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""a11yd's Piper engine worker: natural voices through the same frames as the eSpeak worker.

    python3 a11yd_piper_worker.py --sample-rate 22050 --voices-dir DIR [--voices-dir DIR ...]
                                  [--preload NAME] [--threads 1]

a11yd starts it with descriptor 0 one end of a Unix stream socket pair (requests are read from it and
answers written to it), stdout /dev/null, and its log on stderr (one line per problem, prefixed
"a11yd-piper:"). The frames are those of Sources/A11yEngineWorker/WorkerMessage.swift
(docs/architecture.md, "The engine worker"): u32 little-endian length of what follows, u8 type, body.

What it does, and how it differs from the eSpeak worker:
- Voices: every NAME.onnx that has a NAME.onnx.json beside it, in the --voices-dir folders in order (the
  first folder wins a name); identifier "piper:NAME". A voice loads at its first use (or at start with
  --preload, after `ready`) and stays loaded; a11yd ends an idle worker to give the memory back. A voice
  that fails to load fails that request (end status 1, the file and why) and the others still speak.
- Output: mono signed 16-bit at --sample-rate, whatever the voice's rate (windowed-sinc resampling).
- Text is phonemised by the eSpeak-NG inside piper-tts, a block of at most 1,000 characters at a time as
  it is needed, clause by clause, and each clause (cut into units of at most 24 words and 160 phonemes: a
  long word is cut too) is synthesised and sent (in chunks of at most 100 ms) as soon as it exists, so the
  first sound of a long text or word waits for its first unit only; and that clause's first sound waits only for the model's front and the
  decoding of its first frames (DecoderSplit), its rest being decoded while they play. So does a later
  clause's when what was sent before it would have played before it is decoded whole. Consecutive
  segments in the same voice and prosody are said as one stream of phonemes (an IPA span inside a
  sentence keeps the sentence's intonation), cut at clause ends.
- `.phonemes` segments carry IPA here (not eSpeak mnemonics): a11yd converts before sending. Each
  codepoint is looked up in the voice's phoneme_id_map; others are dropped and logged.
- Word events come from the model's per-phoneme durations when the voice has that output (install-voices.sh
  adds it with piper.patch_voice_with_alignment); otherwise each clause's duration is shared out in
  proportion to phoneme counts, and the log says so once per voice.
- Rate: the model's length scale up to MODEL_TOP_SPEED times the voice's speed, then libsonic's
  pitch-preserving time-stretch (ctypes), streamed piece by piece and flushed at each unit's end; word and
  mark frames are scaled by the stretch. Without libsonic: the length scale alone, logged once.
- Loudness: each clause is scaled to a fixed RMS (over its voiced 20 ms windows) that matches eSpeak-NG's
  at the same volume, then peak-limited at -1 dBFS; Piper's own peak normalisation is not used. The first
  clause's first piece, sent before the clause's loudness is known, is scaled on its own (Output.scaled).
- Not done: pitch (a Piper model has no pitch control; the value is ignored) and the punctuation flag
  (piper-tts's eSpeak-NG build refuses espeakPUNCTUATION, EINVAL): a11yd's router names punctuation
  before it sends a segment here, so the flag only comes from another sender. Questions other than
  `voices` are refused.
"""

import argparse
import collections
import ctypes
import faulthandler
import json
import math
import os
import queue
import re
import signal
import struct
import sys
import threading
import time
import unicodedata

import numpy as np


def import_onnxruntime():
    """onnxruntime, imported so that it neither tries to keep a telemetry id nor warns of the GPUs it did
    not find. Its import makes its environment, which (1.32) stores a device id for telemetry under
    ~/.cache unless ORT_DISABLE_TELEMETRY is set first (in the sandbox, which writes nothing: "Failed to
    persist telemetry device ID"), then lists GPUs under /sys/bus/pci, which no option turns off and
    the sandbox refuses ("GPU device discovery failed ... Permission denied"), with a warning written to
    stderr before any logging option can be set. So stderr is held in a pipe during the import, and what
    onnxruntime wrote there is logged, colour codes removed, but for that one warning."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    try:
        read_end, write_end = os.pipe()
    except OSError:
        import onnxruntime as module
        return module
    os.set_blocking(write_end, False)  # more than a pipe's worth would be lost, not wait forever
    saved = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        import onnxruntime as module
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.set_blocking(read_end, False)
        written = b""
        try:
            while data := os.read(read_end, 1 << 16):
                written += data
        except BlockingIOError:
            pass
        os.close(read_end)
        for line in written.decode("utf-8", "replace").splitlines():
            line = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line).strip()
            if line and "device discovery failed" not in line:
                sys.stderr.write(f"a11yd-piper: onnxruntime: {line}\n")  # as log() writes (defined below)
        sys.stderr.flush()
    return module


onnxruntime = import_onnxruntime()
onnxruntime.disable_telemetry_events()
# Only a session's errors are logged (its log_severity_level too): its warnings are not a speech worker's.
onnxruntime.set_default_logger_severity(3)

from piper import espeakbridge
from piper.config import PhonemeType, PiperConfig
from piper.const import BOS, EOS, PAD
from piper.phonemize_espeak import ESPEAK_DATA_DIR

try:  # piper-tts 1.8.0's own helper (private): the voices that declare vowel clusters need it.
    from piper.phonemize_espeak import _merge_known_vowel_clusters
except ImportError:  # pragma: no cover
    _merge_known_vowel_clusters = None

CHANNEL = 0
MAXIMUM_FRAME = 64 << 20

# Message types (WorkerFrame.Kind) and question codes (WorkerFrame.Question).
SYNTHESIZE, CANCEL, ASK, READY, CHUNK, END, ANSWER = 1, 2, 3, 10, 11, 12, 13
Q_VOICES, Q_IPA_OF_TEXT, Q_IPA_OF_MNEMONICS, Q_IPA_OF_LETTER, Q_INVENTORY, Q_ALL_MNEMONICS = range(6)
# `end` statuses.
DONE, ENGINE_FAILED, UNKNOWN_VOICE = 0, 1, 2

# What shuts this process in is done before Python starts, by a11yd's own binary (`a11yd --engine-worker
# --exec`, SandboxedLauncher.swift), which says what it set in A11YD_WORKER_PROTECTION.
PROTECTION = os.environ.pop("A11YD_WORKER_PROTECTION", "none (started without a11yd's launcher)")

# Loudness. eSpeak-NG 1.51 at volume 100, rate 175, RMS over the 20 ms windows within 30 dB of the
# loudest (`gated_rms`), six English sentences, `espeak-ng -a 100 -s 175 --stdout`:
#   voice en -19.4 dBFS (-18.9 to -19.8), en-us -20.5 (-20.3 to -21.0), fr -21.0 (-20.1 to -21.6);
#   peaks 0.50-0.81 of full scale.
# Piper's raw output (en_US-joe-medium, same sentences) is -19.4 to -25.3 dBFS: it varies from
# sentence to sentence far more than eSpeak, so each clause is scaled to the target rather than the
# voice by one gain. Target at volume 100: -20.0 dBFS; volume v scales it by v / 100 (0...200, 200 is
# eSpeak at 100 times 2, limited, as a11yd does for eSpeak).
TARGET_RMS_AT_100 = 0.100
# Peaks above -1 dBFS are limited (PeakLimiter.swift's ceiling: room for the resampling to 48 kHz).
CEILING = 29_204 / 32_767
LIMITER_RELEASE_SECONDS = 0.05
# eSpeak's words per minute at a11yd's normal rate: a rate asks for rate / 175 times the voice's speed.
NORMAL_RATE = 175.0
LENGTH_SCALE_RANGE = (0.25, 2.5)
# Faster than MODEL_TOP_SPEED times the voice's own speed, the model is not asked for it: its phonemes last
# whole frames (a phoneme id at least one, 11.6 ms at hop 256), so a smaller length scale shortens fewer
# and fewer of them (asked 2.57x, it gave 1.73x) and runs the short ones together. The model says the
# text at MODEL_TOP_SPEED and the audio is then time-stretched, pitch held, by libsonic (the library
# eSpeak-NG uses past 450 words a minute) by what is left, up to TOP_SPEED in all. What the limit is, and
# why, is in docs/voices.md ("Rate").
MODEL_TOP_SPEED = 1.25
TOP_SPEED = 6.0
SONIC_LIBRARY = "libsonic.so.0"
# Leading near-silence of an utterance is dropped (as the eSpeak worker does), keeping 1 ms before the
# first sample louder than this (int16).
SILENCE_THRESHOLD = 64
# Characters of a `.phonemes` segment that are not sounds: syllable breaks, tie bars, linking.
IPA_NOT_SOUNDS = set(".|\u035c\u0361\u203f")
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
# The most eSpeak words said in one inference: a clause without punctuation can be any length, and its
# first sound waits for all of it (about 0.15 s per second of speech on one thread here). Longer clauses
# are said in pieces of this many words, each with the model's own lead-in and ending (a short pause).
MAXIMUM_WORDS_PER_INFERENCE = 24
# ... and the most phonemes (IPA characters): a long unbroken word (a hash, a URL, base64, a run of one
# letter) is a few eSpeak words of hundreds of phonemes each, and the model's front takes longer than in
# proportion (here 0.15 s for 24 ordinary words, 116 phonemes; 2.1 s for 8 words of 990: a 2,000-letter run).
# 160 keeps a clause of 24 ordinary words whole. A longer eSpeak word is cut inside (LONG_IPA_WORD).
MAXIMUM_PHONEMES_PER_INFERENCE = 160
# The utterance's first unit, when its clause has to be cut anyway, is cut shorter: its first sound waits
# for the front over all of it, and nothing plays meanwhile (48 phonemes: about 60 ms of the front here).
FIRST_UNIT_PHONEMES = 48
LONG_IPA_WORD = FIRST_UNIT_PHONEMES
# Text is read by eSpeak (phonemised) a block at a time, as the units are needed, not all at once before
# the first is said (200 KB took 0.35 s here, and a stop would have waited for it): at most this many code
# points a block, cut after a sentence's end where there is one, else at a space (TextBlocks). A text this
# long or shorter is read whole, as before.
TEXT_BLOCK_CHARACTERS = 1000
# The utterance's first unit, when the model is split (DecoderSplit), is decoded in two pieces: its first
# frames, sent at once, then the rest, which must be decoded before the first piece has played; so is a
# later unit whose decoding would take longer than what was sent before it has left to play. The first
# piece: at least FIRST_PIECE_FRAMES (hop 256 at 22,050 Hz: 0.19 s, of which the model's lead-in, trimmed, is
# about LEAD_IN_FRAMES), and long enough that the rest takes at most its playing time when decoding takes
# a share of the audio's duration: DECODING_MARGIN times the slowest of the voice's last decodings (their
# time over the audio they made: 0.06 on a quiet machine here, 0.22 at a load average of 7), within
# DECODING_SHARES (at 1, half the unit comes first: at a load average of 13 a cap of 0.5 left a gap of 17 ms).
FIRST_PIECE_FRAMES = 16
LEAD_IN_FRAMES = 4
DECODING_MARGIN = 3.0
DECODING_SHARES = (0.1, 1.0)
# After the first piece, brought to the target loudness on its own, the gain moves to the rest's over this time.
UNIT_GAIN_RAMP_SECONDS = 0.1
# The same text is said with the same rhythm every time, as eSpeak and VoiceOver's voices say it: a
# screen reader's user hears the same words many times a day and knows them by their sound. Piper's
# duration noise (the voice's noise_w, 0.8 for most) draws each phoneme's length at random on every
# inference: the same 5.3 s sentence measured 5.25-5.56 s over ten sayings, and its words moved with it.
# At 0 the lengths are the duration model's own; the voice's noise_scale (timbre) is kept.
DURATION_NOISE = 0.0


def release_free_memory():
    """Gives the C heap's free pages back to the system (glibc's malloc_trim); nothing where there is none."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass


def log(text):
    try:
        sys.stderr.write("a11yd-piper: " + " ".join(str(text).split()) + "\n")
        sys.stderr.flush()
    except Exception:
        pass


class ProtocolError(Exception):
    pass


class SpeechFailure(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


# --- frames ----------------------------------------------------------------------------------------


class Reader:
    """A frame's body; every read checks what is left (WorkerMessage.swift's ByteReader)."""

    def __init__(self, data):
        self.data = data
        self.position = 0

    def take(self, count):
        if count < 0 or self.position + count > len(self.data):
            raise ProtocolError("a message ends early")
        piece = self.data[self.position:self.position + count]
        self.position += count
        return piece

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def int(self):
        return struct.unpack("<q", self.take(8))[0]

    def double(self):
        value = struct.unpack("<d", self.take(8))[0]
        if not math.isfinite(value):
            raise ProtocolError("a number that is not finite")
        return value

    def count(self, item_size):
        value = self.u32()
        if value > (len(self.data) - self.position) // max(item_size, 1):
            raise ProtocolError("a count larger than its message")
        return value

    def string(self):
        raw = self.take(self.u32())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("a string that is not UTF-8") from None

    def optional_string(self):
        flag = self.u8()
        if flag == 0:
            return None
        if flag == 1:
            return self.string()
        raise ProtocolError("bad optional string")

    def done(self):
        if self.position != len(self.data):
            raise ProtocolError(f"{len(self.data) - self.position} bytes after a message")


class Writer:
    def __init__(self):
        self.parts = []

    def u8(self, value):
        self.parts.append(struct.pack("<B", value))

    def u32(self, value):
        self.parts.append(struct.pack("<I", value))

    def int(self, value):
        self.parts.append(struct.pack("<q", int(value)))

    def count(self, value):
        self.parts.append(struct.pack("<I", min(int(value), 0xFFFFFFFF)))

    def string(self, value):
        raw = value.encode("utf-8", "replace")
        self.count(len(raw))
        self.parts.append(raw)

    def raw(self, data):
        self.parts.append(data)

    def frame(self, kind):
        body = b"".join(self.parts)
        return struct.pack("<IB", len(body) + 1, kind) + body


class Segment:
    __slots__ = ("kind", "content", "voice", "source_start", "source_length", "spell_out", "punctuation",
                 "rate_scale", "pitch_scale", "volume_scale", "pause_ms", "mark")


class Utterance:
    __slots__ = ("text", "rate", "pitch", "volume", "segments")


def decode_synthesize(reader):
    request_id = reader.u32()
    utterance = Utterance()
    utterance.text = reader.string()
    utterance.rate, utterance.pitch, utterance.volume = reader.int(), reader.int(), reader.int()
    utterance.segments = []
    for _ in range(reader.count(4)):
        segment = Segment()
        segment.kind = reader.u8()
        if segment.kind not in (0, 1):
            raise ProtocolError("unknown segment content")
        segment.content = reader.string()
        segment.voice = reader.string()
        segment.source_start, segment.source_length = reader.int(), reader.int()
        flags = reader.u8()
        segment.spell_out, segment.punctuation = bool(flags & 1), bool(flags & 2)
        segment.rate_scale, segment.pitch_scale, segment.volume_scale = reader.double(), reader.double(), reader.double()
        segment.pause_ms = reader.int()
        segment.mark = reader.optional_string()
        utterance.segments.append(segment)
    return request_id, utterance


class Channel:
    """Descriptor 0: frames in on the main thread, frames out from any thread (whole, under a lock)."""

    def __init__(self, fd):
        self.fd = fd
        self.lock = threading.Lock()
        self.buffer = bytearray()

    def send(self, frame):
        with self.lock:
            view = memoryview(frame)
            while view:
                try:
                    written = os.write(self.fd, view)
                except InterruptedError:
                    continue
                except OSError as error:
                    log(f"writing to a11yd: {error}")
                    os._exit(0)  # a11yd is gone: no one to serve
                view = view[written:]

    def messages(self):
        """Yields (type, body) until the channel ends."""
        while True:
            while len(self.buffer) >= 4:
                length = struct.unpack_from("<I", self.buffer)[0]
                if length < 1 or length > MAXIMUM_FRAME:
                    raise ProtocolError(f"frame length {length}")
                if len(self.buffer) < 4 + length:
                    break
                kind = self.buffer[4]
                body = bytes(self.buffer[5:4 + length])
                del self.buffer[:4 + length]
                yield kind, body
            try:
                data = os.read(self.fd, 1 << 16)
            except InterruptedError:
                continue
            except OSError as error:
                log(f"reading the channel: {error}")
                return
            if not data:
                return
            self.buffer += data

    def ready(self, sample_rate):
        writer = Writer()
        writer.int(sample_rate)
        writer.string(PROTECTION)
        self.send(writer.frame(READY))

    def end(self, request_id, status=DONE, message=""):
        writer = Writer()
        writer.u32(request_id)
        writer.u8(status)
        writer.string(message)
        self.send(writer.frame(END))

    def chunk(self, request_id, samples, words, marks):
        writer = Writer()
        writer.u32(request_id)
        writer.count(len(samples))
        writer.raw(samples.astype("<i2", copy=False).tobytes())
        writer.count(len(words))
        for frame, start, length in words:
            writer.int(frame)
            writer.int(start)
            writer.int(length)
        writer.count(len(marks))
        for frame, name in marks:
            writer.int(frame)
            writer.string(name)
        self.send(writer.frame(CHUNK))

    def voices(self, request_id, entries):
        writer = Writer()
        writer.u32(request_id)
        writer.u8(0)
        writer.count(len(entries))
        for identifier, name, languages in entries:
            writer.string(identifier)
            writer.string(name)
            writer.count(len(languages))
            for language, priority in languages:
                writer.string(language)
                writer.int(priority)
        self.send(writer.frame(ANSWER))


# --- eSpeak-NG (piper-tts's own build), clause by clause -----------------------------------------------


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


# --- voices -----------------------------------------------------------------------------------------------


class VoiceError(Exception):
    pass


class Voice:
    """A loaded voice."""

    def __init__(self, name, model, config_path, threads):
        self.name = name
        try:
            with open(config_path, "r", encoding="utf-8") as file:
                raw = json.load(file)
            self.config = PiperConfig.from_dict(raw)
        except Exception as error:
            raise VoiceError(f"cannot load piper:{name}: {config_path}: {type(error).__name__}: {error}") from None
        if self.config.phoneme_type != PhonemeType.ESPEAK:
            raise VoiceError(f"cannot load piper:{name}: {config_path}: phoneme_type "
                             f"{self.config.phoneme_type.value} (this worker reads eSpeak phonemes only)")
        self.id_map = {key: list(value) for key, value in self.config.phoneme_id_map.items()}
        for symbol in (BOS, EOS, PAD):
            if symbol not in self.id_map:
                raise VoiceError(f"cannot load piper:{name}: {config_path}: no '{symbol}' in phoneme_id_map")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        # No busy-waiting of idle pool threads on a shared machine.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.sample_rate = self.config.sample_rate
        # The model in two (DecoderSplit): its vocoder can then be run on the first part of a unit alone.
        # A model that cannot be split (or no `onnx` package) is run whole, as its own file says what fails.
        self.split = None
        try:
            self.split = DecoderSplit(model, options, self.config.hop_length, self.sample_rate)
            self.session = self.split.front
        except Exception as split_error:
            try:
                self.session = onnxruntime.InferenceSession(str(model), sess_options=options,
                                                            providers=["CPUExecutionProvider"])
            except Exception as error:
                why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                raise VoiceError(f"cannot load piper:{name} from {model}: {why}") from None
            log(f"piper:{name} is decoded whole, unit by unit (its decoder cannot be run apart: "
                f"{type(split_error).__name__}: {split_error})")
        inputs = {i.name for i in self.session.get_inputs()}
        if not {"input", "input_lengths", "scales"} <= inputs:
            raise VoiceError(f"cannot load piper:{name} from {model}: not a Piper model (inputs {sorted(inputs)})")
        self.aligned = len(self.session.get_outputs()) >= 2
        self.warned = set()
        # One tiny inference with the map's largest id: a .onnx.json that does not fit the model fails here,
        # not in the middle of an utterance, and onnxruntime's first run (slower) is not a request's.
        largest = max(i for ids in self.id_map.values() for i in ids)
        ids = self.id_map[BOS] + self.id_map[PAD] + [largest] + self.id_map[PAD] + self.id_map[EOS]
        try:
            audio = self.run(ids, self.config.length_scale)[0]
            if isinstance(audio, Latent):
                audio.decode(0, audio.frames.shape[2])
        except Exception as error:
            why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise VoiceError(f"cannot load piper:{name}: {config_path} does not fit {model}: {why}") from None
        # Loading leaves the parsed model and the two graphs' bytes freed but kept by the C heap: given back,
        # the loaded worker holds 216 MB instead of 248 (en_US-joe-medium, split; 150 MB decoded whole).
        release_free_memory()

    def run(self, ids, length_scale, options=None):
        """[audio, durations if the voice has them] for phoneme ids; with a split model, the audio is a
        `Latent` (decoded as it is read: DecoderSplit)."""
        config = self.config
        inputs = {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": np.array([config.noise_scale, length_scale, DURATION_NOISE], dtype=np.float32),
        }
        if config.num_speakers > 1:
            inputs["sid"] = np.array([config.default_speaker_id], dtype=np.int64)
        result = self.session.run(None, inputs, options)
        if self.split is not None:
            result[0] = Latent(self.split, result[0])
        return result


class DecoderSplit:
    """A Piper (VITS) model cut in two where its vocoder (the `/dec/` nodes, HiFi-GAN: convolutions and
    upsamplings, about two thirds of an inference) takes the latent frames: the front (text encoder,
    durations, flow) runs over the whole unit, so its prosody and durations are those of the whole model;
    the decoder can then run on a range of frames alone, with `context` frames of the latent on each side
    (its receptive field, read from its convolutions), which gives the same samples as the whole model
    (measured on en_US-joe-medium: identical from 12 frames of context, 1e-3 apart with 8; read here: 13).
    So the first sound of a unit waits for the front and the decoding of its first frames only. A model
    that is not cut so (a decoder with another input, as a multi-speaker one's) raises here."""

    def __init__(self, path, options, hop_length, sample_rate):
        import onnx  # piper-tts[alignment]'s dependency; without it, the model is run whole

        model = onnx.load(str(path))
        graph = model.graph
        decoder = [node for node in graph.node if node.name.startswith("/dec/")]
        inside = {name for node in decoder for name in node.output}
        weights = {tensor.name for tensor in graph.initializer}
        entries = {name for node in decoder for name in node.input
                   if name and name not in inside and name not in weights}
        exits = {name for node in graph.node if not node.name.startswith("/dec/")
                 for name in node.input if name in inside}
        exits |= {output.name for output in graph.output if output.name in inside}
        if len(entries) != 1 or len(exits) != 1:
            raise ValueError(f"decoder with inputs {sorted(entries)} and outputs {sorted(exits)}")
        # The receptive field, in latent frames each side: every convolution's reach at its rate, but of
        # the residual blocks that run side by side after an upsampling (HiFi-GAN's resblocks.N, summed),
        # only the farthest-reaching one.
        upsampling, context, branches = 1, 0.0, {}
        for node in decoder + [None]:
            if node is None or node.op_type == "ConvTranspose":
                context += max(branches.values(), default=0.0)
                branches = {}
            if node is None:
                break
            attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            if node.op_type == "Conv":
                kernel, dilation = attributes["kernel_shape"][0], (attributes.get("dilations") or [1])[0]
                reach = (kernel - 1) * dilation / 2 / upsampling
                branch = re.match(r"/dec/(resblocks\.\d+)/", node.name)
                if branch:
                    branches[branch.group(1)] = branches.get(branch.group(1), 0.0) + reach
                else:
                    context += reach
            elif node.op_type == "ConvTranspose":
                stride = attributes["strides"][0]
                context += attributes["kernel_shape"][0] / stride / upsampling
                upsampling *= stride
        if upsampling != hop_length:
            raise ValueError(f"decoder upsamples {upsampling} times, the voice's hop is {hop_length}")
        self.hop = hop_length
        self.sample_rate = sample_rate
        self.speeds = collections.deque(maxlen=8)  # seconds per latent frame of the last decodings
        self.context = int(math.ceil(context)) + 1
        self.latent_name = entries.pop()
        audio_name = exits.pop()
        # The two graphs by hand (onnx.utils.Extractor infers every shape first: a second more at load).
        latent = onnx.helper.make_tensor_value_info(self.latent_name, onnx.TensorProto.FLOAT, None)
        rest = [node for node in graph.node if not node.name.startswith("/dec/")]
        front = self.graph(model, rest, list(graph.input), [latent] + list(graph.output[1:]))
        vocoder = self.graph(model, decoder, [latent],
                             [onnx.helper.make_tensor_value_info(audio_name, onnx.TensorProto.FLOAT, None)])
        del model
        providers = ["CPUExecutionProvider"]
        self.front = onnxruntime.InferenceSession(front, sess_options=options, providers=providers)
        self.vocoder = onnxruntime.InferenceSession(vocoder, sess_options=options, providers=providers)

    @staticmethod
    def graph(model, nodes, inputs, outputs):
        """The serialised model of the nodes of `nodes` that `outputs` need, with their weights."""
        import onnx

        producers = {name: number for number, node in enumerate(nodes) for name in node.output}
        needed, kept, stack = set(), set(), [value.name for value in outputs]
        while stack:
            name = stack.pop()
            if name in needed:
                continue
            needed.add(name)
            number = producers.get(name)
            if number is not None and number not in kept:
                kept.add(number)
                stack += [i for i in nodes[number].input if i]
        kept = [nodes[number] for number in sorted(kept)]
        weights = [tensor for tensor in model.graph.initializer if tensor.name in needed]
        names = {tensor.name for tensor in weights}
        inputs = [value for value in inputs if value.name in needed and value.name not in names]
        graph = onnx.helper.make_graph(kept, model.graph.name, inputs, outputs, weights)
        model = onnx.helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)
        return model.SerializeToString()

    def decode(self, latent, first, last, options=None):
        """Samples of frames first..<last of `latent` (1, channels, frames)."""
        frames = latent.shape[2]
        low, high = max(first - self.context, 0), min(last + self.context, frames)
        began = time.monotonic()
        audio = self.vocoder.run(None, {self.latent_name: latent[:, :, low:high]}, options)[0].reshape(-1)
        self.speeds.append((time.monotonic() - began) / max(high - low, 1))
        return audio[(first - low) * self.hop:(last - low) * self.hop]

    def share(self):
        """The share of the audio's duration its decoding is taken to need now (first_piece)."""
        slowest = max(self.speeds, default=0.0) * self.sample_rate / self.hop
        return min(max(DECODING_MARGIN * slowest, DECODING_SHARES[0]), DECODING_SHARES[1])


class Latent:
    """A unit's latent frames, decoded on demand."""

    def __init__(self, split, frames):
        self.split = split
        self.frames = frames

    def __len__(self):
        """Samples of the unit's audio."""
        return self.frames.shape[2] * self.split.hop

    def decode(self, first, last, options=None):
        return self.split.decode(self.frames, first, last, options)


class Voices:
    def __init__(self, folders, threads):
        self.folders = folders
        self.threads = threads
        self.loaded = {}
        self.failed = {}  # name → (files' (size, mtime), message): a broken file is not read again unchanged
        self.lock = threading.Lock()
        self.files = {}
        self.scan()

    def scan(self):
        files = {}
        for folder in self.folders:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            for entry in names:
                if not entry.endswith(".onnx"):
                    continue
                model = os.path.join(folder, entry)
                config = model + ".json"
                name = entry[:-len(".onnx")]
                if name and name not in files and os.path.isfile(config):
                    files[name] = (model, config)
        with self.lock:
            self.files = files
        return files

    def listing(self):
        """The `voices` answer: (identifier, name, [(language, priority)])."""
        entries = []
        for name, (model, config_path) in sorted(self.scan().items()):
            code, quality, speaker = None, None, None
            try:
                with open(config_path, "r", encoding="utf-8") as file:
                    raw = json.load(file)
                code = (raw.get("language") or {}).get("code") or (raw.get("espeak") or {}).get("voice")
                quality = (raw.get("audio") or {}).get("quality")
                speaker = raw.get("dataset")
            except Exception as error:
                log(f"piper:{name}: {config_path}: {type(error).__name__}: {error}")
            parts = name.split("-")
            code = code or parts[0]
            speaker = speaker or (parts[1] if len(parts) > 1 else name)
            quality = quality or (parts[2] if len(parts) > 2 else None)
            language = code.replace("_", "-").lower()
            base = language.split("-")[0]
            # eSpeak's meaning: lower is preferred, 5 when a voice file says nothing. a11yd's own eSpeak voices
            # for en/en-us say 2-3, so a language alone still resolves to eSpeak; Piper is chosen by identifier
            # (or by a11yd's configuration).
            languages = [(language, 5)] + ([(base, 5)] if base != language else [])
            label = ", ".join(x for x in (code, quality, "Piper") if x)
            entries.append((f"piper:{name}", f"{speaker.replace('_', ' ').title()} ({label})", languages))
        return entries

    def get(self, identifier):
        """The loaded voice for `identifier`, loading it now if needed."""
        if not identifier.startswith("piper:") or len(identifier) == len("piper:"):
            raise SpeechFailure(UNKNOWN_VOICE, f"unknown voice '{identifier}' (Piper voices are piper:NAME)")
        name = identifier[len("piper:"):]
        voice = self.loaded.get(name)
        if voice is not None:
            return voice
        files = self.files.get(name) or self.scan().get(name)
        if files is None:
            raise SpeechFailure(UNKNOWN_VOICE, f"unknown voice '{identifier}': no {name}.onnx with its "
                                f".onnx.json in {', '.join(self.folders)}")
        try:
            stamp = tuple((os.stat(path).st_size, os.stat(path).st_mtime_ns) for path in files)
        except OSError as error:
            raise SpeechFailure(ENGINE_FAILED, f"cannot load {identifier}: {error}") from None
        failure = self.failed.get(name)
        if failure is not None and failure[0] == stamp:
            raise SpeechFailure(ENGINE_FAILED, failure[1])
        try:
            voice = Voice(name, files[0], files[1], self.threads)
        except VoiceError as error:
            self.failed[name] = (stamp, str(error))
            log(str(error))
            raise SpeechFailure(ENGINE_FAILED, str(error)) from None
        if not voice.aligned:
            log(f"piper:{name} has no duration output: its word events are spread over each clause by phoneme "
                f"count (python -m piper.patch_voice_with_alignment {files[0]} adds it)")
        self.failed.pop(name, None)
        self.loaded[name] = voice
        return voice


# --- audio --------------------------------------------------------------------------------------------------


def gated_windows(samples, sample_rate, relative_db=-30.0):
    """(the window's length in samples, each whole 20 ms window's mean energy, which of them are within
    `relative_db` of the loudest): what gated_rms and rest_gain measure; None when `samples` is shorter
    than a window."""
    window = max(int(0.02 * sample_rate), 1)
    count = len(samples) // window
    if count == 0:
        return None
    energy = np.mean(np.square(samples[:count * window], dtype=np.float64).reshape(count, window), axis=1)
    return window, energy, energy >= energy.max() * 10 ** (relative_db / 10)


def gated_rms(samples, sample_rate, relative_db=-30.0):
    """RMS over the 20 ms windows within `relative_db` of the loudest: the loudness of the voiced part,
    whatever the pauses (measured the same way on eSpeak-NG for TARGET_RMS_AT_100)."""
    gated = gated_windows(samples, sample_rate, relative_db)
    if gated is None:
        return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    _, energy, voiced = gated
    return float(np.sqrt(np.mean(energy[voiced])))


RESAMPLING_ZERO_CROSSINGS = 32
RESAMPLING_CUTOFF = 0.92
_resampling_tables = {}


def _sinc_weights(fractions, cutoff):
    """Windowed-sinc weights (Blackman window) for output samples `fractions` of an input sample after
    their base sample: (len(fractions), taps), each row summing to 1, and the taps' offsets."""
    half = int(math.ceil(RESAMPLING_ZERO_CROSSINGS / cutoff))
    taps = np.arange(-half + 1, half + 1)
    t = taps[None, :] - np.asarray(fractions, dtype=np.float64)[:, None]
    weights = cutoff * np.sinc(cutoff * t) * (0.42 + 0.5 * np.cos(np.pi * t / half) + 0.08 * np.cos(2 * np.pi * t / half))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights.astype(np.float32), half


def resample(samples, rate_in, rate_out):
    """Windowed-sinc resampling (Blackman window, 32 zero crossings each side, cut-off at 0.92 of the lower
    Nyquist frequency: flat within 0.01 dB to 0.8 of it, -77 dB or less from 1.04 of it), polyphase for a
    rational ratio (a table per ratio; about 1-2 ms per second of audio). Each clause is done alone: it
    starts and ends in silence."""
    if rate_in == rate_out or len(samples) == 0:
        return samples
    common = math.gcd(rate_in, rate_out)
    up, down = rate_out // common, rate_in // common
    count = int(round(len(samples) * up / down))
    cutoff = RESAMPLING_CUTOFF * min(1.0, up / down)
    if up <= 4096:
        table = _resampling_tables.get((up, down))
        if table is None:
            table = _resampling_tables[(up, down)] = _sinc_weights(np.arange(up) / up, cutoff)
        weights, half = table
    else:  # an odd pair of rates: weights per output sample
        weights, half = None, int(math.ceil(RESAMPLING_ZERO_CROSSINGS / cutoff))
    padded = np.concatenate([np.zeros(half, np.float32), samples.astype(np.float32),
                             np.zeros(half + down + 2, np.float32)])
    # windows[b + 1] holds the input samples around input sample b (taps -half+1 ... half).
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * half)
    out = np.empty(count, dtype=np.float32)
    if weights is None:
        for first in range(0, count, 4096):
            numbers = np.arange(first, min(first + 4096, count))
            base = numbers * down // up
            rows, _ = _sinc_weights((numbers * down - base * up) / up, cutoff)
            out[first:first + len(numbers)] = np.sum(windows[base + 1] * rows, axis=1)
        return out
    # Output n has phase (n * down) % up; those of one phase are every `up`-th, their bases `down` apart.
    inverse = pow(down, -1, up) if up > 1 else 0
    for phase in range(up):
        first = (phase * inverse) % up
        if first >= count:
            continue
        number = len(range(first, count, up))
        base = first * down // up
        out[first::up] = windows[base + 1:base + 1 + (number - 1) * down + 1:down] @ weights[phase]
    return out


def rest_gain(audio, split, first_gain, target, sample_rate):
    """The gain of audio[split:] that, with audio[:split] at `first_gain`, puts the whole at `target` as
    gated_rms measures it (its windows gated as in the audio unscaled; a window belongs to the piece it
    starts in), or None if there is none."""
    gated = gated_windows(audio, sample_rate)
    if gated is None:
        return None
    window, energy, kept = gated
    first = np.arange(len(energy)) * window < split
    before, after = energy[kept & first].sum(), energy[kept & ~first].sum()
    square = (target * target * kept.sum() - first_gain * first_gain * before) / after if after > 0 else 0.0
    return math.sqrt(square) if square > 0 else None


def first_piece(frames, context, share, lead=0.0, lead_in=LEAD_IN_FRAMES):
    """How many of a unit's `frames` to decode first, when decoding takes `share` of the audio's duration
    and `lead` frames sent before the unit are still to play: all when the whole unit is decoded within the
    lead, or when what would be left is under half of the first piece. Otherwise the rest is decoded while
    the lead left after the first piece's decoding, then the first piece, play; when the lead cannot cover
    the first piece's own decoding (the utterance's first unit has none), while the first piece plays, less
    its `lead_in` frames when the model's lead-in is trimmed."""
    if share * (frames + context) <= lead:
        return frames
    first = max(FIRST_PIECE_FRAMES, math.ceil(share * (frames + 2 * context) - lead))
    if share * (first + context) > lead:
        first = max(FIRST_PIECE_FRAMES, math.ceil((share * (frames + context) + lead_in) / (1 + share)))
    return frames if frames - first < first // 2 else first


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


# --- rate: the model's length scale, then a time-stretch ---------------------------------------------------


def rate_plan(rate, voice_length_scale, stretching=True):
    """(the model's length scale, the time-stretch asked on top of it) for `rate` in words a minute (eSpeak's:
    NORMAL_RATE is the voice's own speed). Up to MODEL_TOP_SPEED times the voice's speed the model alone says
    it; faster, the model says it at MODEL_TOP_SPEED and the stretch does the rest, up to TOP_SPEED in all.
    Without the stretch (`stretching` False: no libsonic) the model is asked for all of it, as far as
    LENGTH_SCALE_RANGE goes. Slower than the voice's speed is the model's alone. Nonsense is the normal rate."""
    rate = float(rate) if isinstance(rate, (int, float)) else NORMAL_RATE
    rate = NORMAL_RATE if not math.isfinite(rate) or rate <= 0 else rate
    voice_length_scale = voice_length_scale if math.isfinite(voice_length_scale) and voice_length_scale > 0 else 1.0
    speed = min(rate / NORMAL_RATE, TOP_SPEED)
    model = min(speed, MODEL_TOP_SPEED) if stretching else speed
    length_scale = min(max(voice_length_scale / model, LENGTH_SCALE_RANGE[0]), LENGTH_SCALE_RANGE[1])
    stretch = speed / (voice_length_scale / length_scale)
    return length_scale, (stretch if stretching and stretch > 1.0 + 1e-6 else 1.0)


def unit_stretch(asked, model_speed, durations):
    """The stretch that brings a unit said at `model_speed` times the voice's speed to `asked` times its speed
    from the model's per-id `durations` in frames. The model rounds each id's duration up to a whole frame, so
    at `model_speed` a unit is longer than 1 / model_speed of its length at the voice's speed (1.15x asked
    1.25x here); its length at the voice's speed is estimated id by id (a duration d came from d - 0.5 frames
    on average, at least one frame each): within 4 % of the truth on en_US-joe-medium, where 1 / model_speed
    is 8-10 % short. Without durations, the nominal stretch."""
    nominal = asked / model_speed
    if nominal <= 1.0 + 1e-6:
        return 1.0
    durations = None if durations is None else np.asarray(durations, dtype=np.float64).reshape(-1)
    if durations is None or len(durations) == 0 or not np.all(np.isfinite(durations)) or durations.sum() <= 0:
        return nominal
    normal = np.maximum(1.0, (durations - 0.5) * model_speed + 0.5).sum()
    stretch = asked * durations.sum() / normal
    return min(max(stretch, 1.0), TOP_SPEED)


class Sonic:
    """libsonic (SONIC_LIBRARY, Debian's libsonic0: eSpeak-NG's own dependency) through ctypes, loaded at its
    first use on the synthesis thread. When it cannot be loaded the reason is logged once and the natural
    voice goes as fast as its model alone can (rate_plan). A11YD_PIPER_SONIC names another file (the tests'
    way to take it away)."""

    _library = None
    _tried = False

    @classmethod
    def library(cls):
        if not cls._tried:
            cls._tried = True
            name = os.environ.get("A11YD_PIPER_SONIC") or SONIC_LIBRARY
            try:
                library = ctypes.CDLL(name)
                stream, short = ctypes.c_void_p, ctypes.POINTER(ctypes.c_short)
                for function, result, arguments in (
                        ("sonicCreateStream", stream, [ctypes.c_int, ctypes.c_int]),
                        ("sonicDestroyStream", None, [stream]),
                        ("sonicSetSpeed", None, [stream, ctypes.c_float]),
                        ("sonicWriteShortToStream", ctypes.c_int, [stream, short, ctypes.c_int]),
                        ("sonicReadShortFromStream", ctypes.c_int, [stream, short, ctypes.c_int]),
                        ("sonicFlushStream", ctypes.c_int, [stream]),
                        ("sonicSamplesAvailable", ctypes.c_int, [stream])):
                    getattr(library, function).restype = result
                    getattr(library, function).argtypes = arguments
                cls._library = library
            except (OSError, AttributeError) as error:
                top = NORMAL_RATE / LENGTH_SCALE_RANGE[0]
                log(f"cannot load {name} ({error}): the natural voice is not time-stretched, so it goes no faster "
                    f"than its model can (about 1.7 times its normal speed however high the rate, asked up to "
                    f"{top:.0f} words a minute): install libsonic0")
        return cls._library


class Stretch:
    """One unit's pitch-preserving time-stretch by libsonic, fed piece by piece as the unit is decoded: what it
    gives back at once is sent at once (it keeps at most about two of its longest pitch periods, 31 ms), and
    `flush` at the unit's end gives the rest, so nothing is lost or said twice, and the next unit starts with
    nothing of this one. Its output is the input's length / speed within a pitch period (the tests hold it)."""

    def __init__(self, library, sample_rate, speed):
        self.library = library
        self.speed = speed
        self.stream = library.sonicCreateStream(int(sample_rate), 1)
        if not self.stream:
            raise MemoryError("libsonic could not make a stream")
        library.sonicSetSpeed(self.stream, float(speed))
        self.written = 0
        self.read = 0

    def write(self, samples):
        samples = np.ascontiguousarray(samples, dtype=np.int16)
        for first in range(0, len(samples), 1 << 16):
            part = samples[first:first + (1 << 16)]
            if not self.library.sonicWriteShortToStream(self.stream, part.ctypes.data_as(ctypes.POINTER(ctypes.c_short)),
                                                        len(part)):
                raise MemoryError("libsonic could not take more audio")
            self.written += len(part)
        return self.drain()

    def flush(self):
        if not self.library.sonicFlushStream(self.stream):
            raise MemoryError("libsonic could not flush its stream")
        return self.drain()

    def drain(self):
        available = max(int(self.library.sonicSamplesAvailable(self.stream)), 0)
        out = np.empty(available, dtype=np.int16)
        got = 0
        if available:
            got = max(int(self.library.sonicReadShortFromStream(self.stream, out.ctypes.data_as(
                ctypes.POINTER(ctypes.c_short)), available)), 0)
        self.read += got
        return out[:got]

    def close(self):
        if self.stream:
            self.library.sonicDestroyStream(self.stream)
            self.stream = None


# --- synthesis ------------------------------------------------------------------------------------------


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
            if self.voice.config.vowel_clusters and _merge_known_vowel_clusters is not None:
                sounds = _merge_known_vowel_clusters(sounds, self.voice.config.vowel_clusters)
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


class Cancelled(Exception):
    pass


class Job:
    def __init__(self, request_id, utterance):
        self.id = request_id
        self.utterance = utterance
        self.cancelled = threading.Event()
        self.lock = threading.Lock()
        self.run_options = None
        self.started = False
        self.ended = False

    def start(self):
        """False if the job was cancelled (and ended) before it started."""
        with self.lock:
            self.started = not self.ended
            return self.started

    def end_unstarted(self):
        """True if the job had not started: it is over, and the caller sends its one `end`."""
        with self.lock:
            if self.started or self.ended:
                return False
            self.ended = True
            return True

    def cancel(self):
        self.cancelled.set()
        with self.lock:
            if self.run_options is not None:
                self.run_options.terminate = True

    def check(self):
        if self.cancelled.is_set():
            raise Cancelled()


class Preload:
    def __init__(self, name):
        self.name = name


class Synthesizer:
    def __init__(self, channel, voices, sample_rate):
        self.channel = channel
        self.voices = voices
        self.sample_rate = sample_rate
        self.chunk_frames = max(sample_rate // 10, 1)
        self.jobs = queue.Queue()
        self.pending = {}
        self.lock = threading.Lock()
        self.phonemizer = None
        self.said_punctuation = False

    # Called on the main thread.
    def submit(self, job):
        with self.lock:
            if isinstance(job, Job):
                self.pending[job.id] = job
        self.jobs.put(job)

    def cancel(self, request_id):
        with self.lock:
            job = self.pending.get(request_id)
        if job is not None:
            job.cancel()
            if job.end_unstarted():
                # Waiting behind another request or a voice loading: ended now, skipped when its turn comes.
                with self.lock:
                    self.pending.pop(request_id, None)
                self.channel.end(request_id)

    # The synthesis thread.
    def run(self):
        try:
            self.phonemizer = Phonemizer()
        except Exception as error:
            log(f"cannot start piper-tts's eSpeak-NG: {error}")
            os._exit(1)
        while True:
            job = self.jobs.get()
            if isinstance(job, Preload):
                try:
                    self.espeak_voice(self.voices.get("piper:" + job.name))
                except SpeechFailure as failure:
                    log(f"--preload {job.name}: {failure.message}")
                except Exception as error:
                    log(f"--preload {job.name}: {error}")
                continue
            if not job.start():
                continue
            status, message = DONE, ""
            try:
                self.say(job)
            except Cancelled:
                pass
            except SpeechFailure as failure:
                status, message = failure.status, failure.message
            except Exception as error:
                if job.cancelled.is_set():
                    pass  # onnxruntime's run, ended by the cancel's terminate flag
                else:
                    status, message = ENGINE_FAILED, f"Piper failed: {type(error).__name__}: {error}"
                    log(message)
            finally:
                with self.lock:
                    self.pending.pop(job.id, None)
            self.channel.end(job.id, status, message)

    def espeak_voice(self, voice):
        try:
            self.phonemizer.set_voice(voice.config.espeak_voice)
        except Exception:
            raise SpeechFailure(ENGINE_FAILED, f"piper:{voice.name} reads {voice.config.espeak_voice} phonemes, which "
                                "piper-tts's eSpeak-NG does not know (espeak.voice in its .onnx.json)") from None

    def say(self, job):
        job.check()
        state = Output(self, job)
        for item in self.items(job):
            job.check()
            if isinstance(item, Silence):
                state.silence(item)
            else:
                state.unit(item)
        state.finish()

    def items(self, job):
        """The utterance as units to synthesise and silences, in order, made as they are needed."""
        utterance = job.utterance
        current = None
        said = False  # a unit with phonemes given
        for segment in utterance.segments:
            voice = self.voices.get(segment.voice)
            self.espeak_voice(voice)
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
    # sentences, and the next starts after the model's own lead-in. Measured (en_US-joe-medium, 5 runs of 5
    # sentences, silence = below 0.01 between the sounds around the boundary): at a comma 279 ± 39 ms said
    # clause by clause, 329 ± 84 ms in Piper's whole sentence; at ';' 253 vs 293 ms, at ':' 270 vs 260 ms.
    # No gap is added; sentences are said one by one by Piper itself, so their boundaries are its own.
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

    @staticmethod
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

    def decode(self, job, latent, first, last):
        return np.asarray(self.cancellable(job, lambda options: latent.decode(first, last, options)), dtype=np.float32)

    def infer(self, job, unit):
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
        result = self.cancellable(job, lambda options: voice.run(ids, unit.length_scale, options))
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


class Output:
    """One utterance's frames: silences and units in, chunks of at most 100 ms out, each with the words
    and marks whose frame falls in it (frames counted from the utterance's first sample, as
    SynthesisContext.swift does)."""

    def __init__(self, synthesizer, job):
        self.synthesizer = synthesizer
        self.job = job
        self.rate = synthesizer.sample_rate
        self.limiter = PeakLimiter(self.rate)
        self.produced = 0
        self.playing_since = None  # when the first samples were sent: taken as when they began to play
        self.audible = False
        self.pending = []  # (frame, kind, payload), in order
        self.last_word = -1
        self.last_mark = -1

    def silence(self, item):
        self.audible = True
        self.pending += [(self.produced, kind, payload) for _, kind, payload in item.events]
        self.emit(np.zeros(item.frames, dtype=np.int16))

    def unit(self, unit):
        if not unit.phonemes:
            self.pending += [(self.produced, kind, payload) for _, kind, payload in unit.events]
            return
        audio, starts, stretch = self.synthesizer.infer(self.job, unit)
        voice = unit.voice
        if voice.sample_rate != self.rate:
            if isinstance(audio, Latent):  # the resampler reads a whole unit (it starts and ends in silence)
                audio = self.synthesizer.decode(self.job, audio, 0, audio.frames.shape[2])
            audio = resample(audio, voice.sample_rate, self.rate)
            starts = starts * (self.rate / voice.sample_rate)
        # Faster than the model goes: each piece, once limited, is time-stretched as it comes (Stretch), and
        # every event's frame is where the stretch puts its sample (its frame in the model's audio / stretch).
        stretcher = None
        if stretch > 1.0:
            library = Sonic.library()
            if library is not None:
                stretcher = Stretch(library, self.rate, stretch)
                starts = starts / stretch
        target = TARGET_RMS_AT_100 * unit.volume / 100
        start, trimmed, placed = self.produced, 0, False

        def send(samples):
            nonlocal trimmed, placed
            if not self.audible:
                loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > SILENCE_THRESHOLD)
                if len(loud):
                    cut = max(int(loud[0]) - max(self.rate // 1000, 1), 0)
                    self.audible = True
                else:
                    cut = len(samples)
                trimmed += cut
                samples = samples[cut:]
            if self.audible and not placed:  # where the unit's sound starts is known: its events' frames too
                self.place(unit.events, starts, start, trimmed)
                placed = True
            self.emit(samples)

        try:
            for piece, gain in self.scaled(audio, target, unit.volume, stretch if stretcher else 1.0):
                samples = np.clip(np.round(self.limiter.process(piece * gain) * 32767), -32768, 32767).astype(np.int16)
                send(stretcher.write(samples) if stretcher else samples)
            if stretcher:
                send(stretcher.flush())
        finally:
            if stretcher:
                stretcher.close()
        if not placed:
            self.place(unit.events, starts, start, trimmed)

    def scaled(self, audio, target, volume, stretch=1.0):
        """(piece of the unit's audio, its gain: a number or one per sample), in order: the unit's loudness
        (gated_rms) brought to `target`. A unit is one piece, but when the model is split (DecoderSplit) and
        the unit cannot be decoded whole while what was sent before it plays (always the utterance's first;
        a long clause after a short one): its first frames (first_piece) are decoded and sent first, then the
        rest while they play. The unit's loudness is known only once the rest is decoded, so the first piece is brought
        to `target` on its own, and the rest to the gain that puts the whole unit at `target` (rest_gain),
        reached over UNIT_GAIN_RAMP_SECONDS: the unit is as loud as when decoded whole, its start stands at
        the target rather than where its prosody put it (a clause's first 0.2 s is 2 dB louder than the
        whole clause, median of 36 clauses of en_US-joe-medium, from -6 to +6 dB). With a `stretch`, the
        audio plays that many times faster: decoding takes that much more of its playing time."""
        def gain_of(loudness):
            return target / loudness if loudness > 1e-4 else volume / 100

        if isinstance(audio, Latent):
            frames = audio.frames.shape[2]
            hop_seconds = audio.split.hop / audio.split.sample_rate / stretch
            first = first_piece(frames, audio.split.context, audio.split.share() * stretch, self.lead() / hop_seconds,
                                lead_in=0 if self.audible else LEAD_IN_FRAMES)
            if first < frames:
                piece = self.synthesizer.decode(self.job, audio, 0, first)
                own = gated_rms(piece, self.rate)
                first_gain = gain_of(own)
                yield piece.astype(np.float64), first_gain
                rest = self.synthesizer.decode(self.job, audio, first, frames)
                whole = np.concatenate([piece, rest])
                gain = gain_of(gated_rms(whole, self.rate))
                balanced = rest_gain(whole, len(piece), first_gain, target, self.rate)
                if own > 1e-4 and balanced is not None:  # else the first piece was silence: the unit's own gain
                    gain = min(max(balanced, gain / 2), gain * 2)
                gains = np.full(len(rest), gain)
                if own > 1e-4:
                    ramp = min(len(rest), max(int(UNIT_GAIN_RAMP_SECONDS * self.rate), 1))
                    gains[:ramp] = first_gain + (gain - first_gain) * np.arange(1, ramp + 1) / ramp
                yield rest.astype(np.float64), gains
                return
            audio = self.synthesizer.decode(self.job, audio, 0, frames)
        yield audio.astype(np.float64), gain_of(gated_rms(audio, self.rate))

    def place(self, events, starts, start, trimmed):
        """The unit's events at their frames: the unit's first frame is `start`, less what was trimmed."""
        for position, kind, payload in events:
            if position < 0:  # the unit's first frame
                self.pending.append((start, kind, payload))
                continue
            index = min(int(position), len(starts) - 1)
            fraction = position - index
            frame = starts[index]
            if fraction > 0 and index + 1 < len(starts):
                frame += fraction * (starts[index + 1] - starts[index])
            self.pending.append((start + max(int(round(frame)) - trimmed, 0), kind, payload))

    def emit(self, samples):
        for first in range(0, max(len(samples), 1), self.chunk_frames()):
            self.job.check()
            piece = samples[first:first + self.chunk_frames()]
            if len(piece) == 0 and not self.pending:
                return
            if len(piece) and self.playing_since is None:
                self.playing_since = time.monotonic()
            self.produced += len(piece)
            words, marks = self.take(flush=False)
            if len(piece) or words or marks:
                self.synthesizer.channel.chunk(self.job.id, piece, words, marks)

    def chunk_frames(self):
        return self.synthesizer.chunk_frames

    def lead(self):
        """Seconds of the audio sent that are still to play, if it began to play as its first samples were
        sent (so at least this many: a11yd starts it later, and a pause holds it)."""
        if self.playing_since is None:
            return 0.0
        return max(self.produced / self.rate - (time.monotonic() - self.playing_since), 0.0)

    def take(self, flush):
        """The pending events that stand in the audio produced so far (all with `flush`): word frames
        strictly increase, a mark never stands before a word or mark already given."""
        words, marks, taken = [], [], 0
        for frame, kind, payload in self.pending:
            frame = max(frame, 0, self.last_word + 1, self.last_mark)
            if kind == "word":
                if frame >= self.produced:
                    if not flush:
                        break
                    frame = max(self.produced - 1, 0)
                self.last_word = frame
                words.append((frame, payload[0], payload[1]))
            else:
                if frame >= self.produced:
                    if not flush:
                        break
                    frame = self.produced
                self.last_mark = frame
                marks.append((frame, payload))
            taken += 1
        del self.pending[:taken]
        return words, marks

    def finish(self):
        if self.pending:
            words, marks = self.take(flush=True)
            self.synthesizer.channel.chunk(self.job.id, np.zeros(0, dtype=np.int16), words, marks)


# --- the main thread: requests --------------------------------------------------------------------------


def serve(arguments):
    channel = Channel(CHANNEL)
    voices = Voices(arguments.voices_dir, arguments.threads)
    synthesizer = Synthesizer(channel, voices, arguments.sample_rate)
    channel.ready(arguments.sample_rate)
    threading.Thread(target=synthesizer.run, name="a11yd-piper-synthesis", daemon=True).start()
    for name in arguments.preload or []:
        synthesizer.submit(Preload(name[len("piper:"):] if name.startswith("piper:") else name))
    try:
        for kind, body in channel.messages():
            reader = Reader(body)
            if kind == SYNTHESIZE:
                request_id, utterance = decode_synthesize(reader)
                reader.done()
                synthesizer.submit(Job(request_id, utterance))
            elif kind == CANCEL:
                request_id = reader.u32()
                reader.done()
                synthesizer.cancel(request_id)
            elif kind == ASK:
                request_id = reader.u32()
                question = reader.u8()
                if question in (Q_IPA_OF_TEXT, Q_IPA_OF_MNEMONICS, Q_IPA_OF_LETTER):
                    reader.string()
                    reader.string()
                elif question == Q_INVENTORY:
                    reader.string()
                elif question not in (Q_VOICES, Q_ALL_MNEMONICS):
                    raise ProtocolError("unknown question")
                reader.done()
                if question == Q_VOICES:
                    channel.voices(request_id, voices.listing())
                else:
                    channel.end(request_id, ENGINE_FAILED, "the Piper worker answers no phoneme questions")
            elif kind in (READY, CHUNK, END, ANSWER):
                raise ProtocolError("a11yd sent a worker's message")
            else:
                raise ProtocolError("unknown message type")
    except ProtocolError as error:
        log(f"bad request from a11yd: {error}")
        os._exit(1)
    os._exit(0)  # a11yd closed its end


def main():
    faulthandler.enable()  # a crash in eSpeak or onnxruntime leaves its Python stack in a11yd's log
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda number, _: (log(f"ended by {signal.Signals(number).name}"), os._exit(128 + number)))
    parser = argparse.ArgumentParser(description="a11yd's Piper engine worker (frames on descriptor 0)")
    parser.add_argument("--sample-rate", type=int, default=22050)
    parser.add_argument("--voices-dir", action="append", required=True)
    parser.add_argument("--preload", action="append", help="a voice to load at start (NAME or piper:NAME)")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime's threads per inference")
    arguments = parser.parse_args()
    if not 1000 <= arguments.sample_rate <= 384_000:
        parser.error("--sample-rate must be within 1000...384000")
    arguments.threads = max(arguments.threads, 1)
    serve(arguments)


if __name__ == "__main__":
    main()
