# SPDX-License-Identifier: GPL-3.0-or-later
"""The frames between a11yd and its engine worker, as Sources/A11yEngineWorker/WorkerMessage.swift writes and reads
them (docs/architecture.md, "The engine worker"): u32 little-endian length of what follows, u8 type, body. Pure:
bytes in, values out, and values in, bytes out; the channel (channel.py) moves them."""

import math
import struct

MAXIMUM_FRAME = 64 << 20

# Message types (WorkerFrame.Kind) and question codes (WorkerFrame.Question).
SYNTHESIZE, CANCEL, ASK, READY, CHUNK, END, ANSWER = 1, 2, 3, 10, 11, 12, 13
Q_VOICES, Q_IPA_OF_TEXT, Q_IPA_OF_MNEMONICS, Q_IPA_OF_LETTER, Q_INVENTORY, Q_ALL_MNEMONICS = range(6)
# `end` statuses.
DONE, ENGINE_FAILED, UNKNOWN_VOICE = 0, 1, 2


class ProtocolError(Exception):
    pass


class Reader:
    """A frame's body; every read checks what is left (WorkerMessage.swift's FrameBodyReader)."""

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


def split_frames(buffer):
    """Yields (type, body) of each whole frame at the start of `buffer` (a bytearray), removing it from there;
    an incomplete frame stays for more bytes. A length out of bounds raises ProtocolError."""
    while len(buffer) >= 4:
        length = struct.unpack_from("<I", buffer)[0]
        if length < 1 or length > MAXIMUM_FRAME:
            raise ProtocolError(f"frame length {length}")
        if len(buffer) < 4 + length:
            return
        kind = buffer[4]
        body = bytes(buffer[5:4 + length])
        del buffer[:4 + length]
        yield kind, body


def decode_ask(reader):
    """(request id, question code) of an `ask`; the arguments of the questions this worker refuses are read
    and dropped. An unknown question raises ProtocolError."""
    request_id = reader.u32()
    question = reader.u8()
    if question in (Q_IPA_OF_TEXT, Q_IPA_OF_MNEMONICS, Q_IPA_OF_LETTER):
        reader.string()
        reader.string()
    elif question == Q_INVENTORY:
        reader.string()
    elif question not in (Q_VOICES, Q_ALL_MNEMONICS):
        raise ProtocolError("unknown question")
    return request_id, question


def ready_frame(sample_rate, protection):
    writer = Writer()
    writer.int(sample_rate)
    writer.string(protection)
    return writer.frame(READY)


def end_frame(request_id, status=DONE, message=""):
    writer = Writer()
    writer.u32(request_id)
    writer.u8(status)
    writer.string(message)
    return writer.frame(END)


def chunk_frame(request_id, samples, words, marks):
    """`samples` a numpy array of int16; `words` (frame, start, length); `marks` (frame, name)."""
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
    return writer.frame(CHUNK)


def voices_frame(request_id, entries):
    """The answer to `voices`: `entries` (identifier, name, [(language, priority)])."""
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
    return writer.frame(ANSWER)
