# SPDX-License-Identifier: GPL-3.0-or-later
"""The frames' bytes, read and written by the worker's codec, against worker_client's own encoding of
WorkerMessage.swift's frames."""

import struct
import unittest

import numpy as np

import worker_client as client

from . import frames


class FrameTests(unittest.TestCase):
    def test_a_synthesize_request_is_read_as_a11yd_wrote_it(self):
        segments = [client.segment("Hello ", start=0, length=5, rate_scale=1.5, volume_scale=0.5, pause=20),
                    client.segment("həlˈoʊ", kind=1, start=6, length=3, spell=True, punctuation=True, mark="m1")]
        data = client.synthesize(7, "Hello hey", segments, rate=300, pitch=40, volume=80)
        (kind, body), = frames.split_frames(bytearray(data))
        self.assertEqual(kind, frames.SYNTHESIZE)
        reader = frames.Reader(body)
        request_id, utterance = frames.decode_synthesize(reader)
        reader.done()
        self.assertEqual((request_id, utterance.text, utterance.rate, utterance.pitch, utterance.volume),
                         (7, "Hello hey", 300, 40, 80))
        first, second = utterance.segments
        self.assertEqual((first.kind, first.content, first.voice, first.source_start, first.source_length),
                         (0, "Hello ", client.JOE, 0, 5))
        self.assertEqual((first.spell_out, first.punctuation, first.rate_scale, first.volume_scale, first.pause_ms,
                          first.mark), (False, False, 1.5, 0.5, 20, None))
        self.assertEqual((second.kind, second.content, second.spell_out, second.punctuation, second.mark),
                         (1, "həlˈoʊ", True, True, "m1"))

    def test_frames_are_split_as_they_arrive(self):
        data = client.frame(frames.CANCEL, client.u32(3)) + client.frame(frames.ASK, client.u32(4) + client.u8(0))
        buffer = bytearray()
        seen = []
        for byte in data:
            buffer.append(byte)
            seen += list(frames.split_frames(buffer))
        self.assertEqual(seen, [(frames.CANCEL, client.u32(3)), (frames.ASK, client.u32(4) + client.u8(0))])
        self.assertEqual(buffer, bytearray())

    def test_bad_frames_and_bodies_are_protocol_errors(self):
        for length in (0, frames.MAXIMUM_FRAME + 1):
            with self.assertRaises(frames.ProtocolError):
                list(frames.split_frames(bytearray(struct.pack("<I", length) + b"\x01")))
        bad_bodies = (client.u32(1) + b"\xff\xff",  # ends early
                      client.u32(1) + client.u32(2) + b"\xff\xfe",  # a text that is not UTF-8
                      client.u32(1) + client.string("x") + client.i64(0) * 3 + client.u32(1 << 30))  # a count too big
        for body in bad_bodies:
            with self.assertRaises(frames.ProtocolError):
                frames.decode_synthesize(frames.Reader(body))
        reader = frames.Reader(client.u32(1) + b"\x00")
        reader.u32()
        with self.assertRaises(frames.ProtocolError):
            reader.done()
        with self.assertRaises(frames.ProtocolError):
            frames.decode_ask(frames.Reader(client.u32(1) + client.u8(6)))
        with self.assertRaises(frames.ProtocolError):
            frames.Reader(client.f64(float("nan"))).double()

    def test_questions_are_read_with_their_arguments(self):
        for question, arguments in ((frames.Q_VOICES, b""),
                                    (frames.Q_IPA_OF_TEXT, client.string("a") + client.string("b")),
                                    (frames.Q_INVENTORY, client.string("piper:x")), (frames.Q_ALL_MNEMONICS, b"")):
            reader = frames.Reader(client.u32(9) + client.u8(question) + arguments)
            self.assertEqual(frames.decode_ask(reader), (9, question))
            reader.done()

    def read(self, data):
        """The worker's frame as worker_client reads it."""
        length = struct.unpack_from("<I", data)[0]
        self.assertEqual(length, len(data) - 4)
        return client.decode(data[4], data[5:])

    def test_the_worker_writes_what_a11yd_reads(self):
        self.assertEqual(self.read(frames.ready_frame(22050, "landlock")), ("ready", 22050, "landlock"))
        self.assertEqual(self.read(frames.end_frame(5, frames.UNKNOWN_VOICE, "no such voice")),
                         ("end", 5, frames.UNKNOWN_VOICE, "no such voice"))
        self.assertEqual(self.read(frames.end_frame(6)), ("end", 6, frames.DONE, ""))
        samples = np.array([0, 1, -1, 32767, -32768], dtype=np.int16)
        chunk = frames.chunk_frame(8, samples, [(0, 2, 5), (9, 8, 3)], [(4, "m")])
        kind, request_id, read, words, marks = self.read(chunk)
        self.assertEqual((kind, request_id, words, marks), ("chunk", 8, [(0, 2, 5), (9, 8, 3)], [(4, "m")]))
        self.assertEqual(read.tolist(), samples.tolist())
        entries = [("piper:en_US-joe-medium", "Joe (en_US, medium, Piper)", [("en-us", 5), ("en", 5)])]
        self.assertEqual(self.read(frames.voices_frame(10, entries)), ("voices", 10, entries))


if __name__ == "__main__":
    unittest.main()
