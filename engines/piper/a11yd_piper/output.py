# SPDX-License-Identifier: GPL-3.0-or-later
"""One utterance's sound and events as frames: each unit synthesised (inference.py), resampled, brought to its
loudness, limited, time-stretched, its leading silence trimmed, cut into chunks, and its events placed at their
frames."""

import time

import numpy as np

from . import inference
from .decoder_split import LEAD_IN_FRAMES, Latent, first_piece
from .limiter import PeakLimiter
from .loudness import TARGET_RMS_AT_100, gated_rms, rest_gain
from .resampler import resample
from .time_stretch import Sonic, Stretch

# Leading near-silence of an utterance is dropped (as the eSpeak worker does), keeping 1 ms before the
# first sample louder than this (int16).
SILENCE_THRESHOLD = 64
# After the first piece, brought to the target loudness on its own, the gain moves to the rest's over this time.
UNIT_GAIN_RAMP_SECONDS = 0.1


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
        audio, starts, stretch = inference.infer(self.job, unit)
        voice = unit.voice
        if voice.sample_rate != self.rate:
            if isinstance(audio, Latent):  # the resampler reads a whole unit (it starts and ends in silence)
                audio = inference.decode(self.job, audio, 0, audio.frames.shape[2])
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
        rest while they play. The unit's loudness is known only once the rest is decoded, so the first piece is
        brought to `target` on its own, and the rest to the gain that puts the whole unit at `target`
        (rest_gain), reached over UNIT_GAIN_RAMP_SECONDS: the unit is as loud as when decoded whole, its start
        stands at the target rather than where its prosody put it (a clause's start is often louder or softer
        than the whole clause). With a `stretch`, the audio plays that many times faster: decoding takes that
        much more of its playing time."""
        def gain_of(loudness):
            return target / loudness if loudness > 1e-4 else volume / 100

        if isinstance(audio, Latent):
            frames = audio.frames.shape[2]
            hop_seconds = audio.split.hop / audio.split.sample_rate / stretch
            first = first_piece(frames, audio.split.context, audio.split.share() * stretch, self.lead() / hop_seconds,
                                lead_in=0 if self.audible else LEAD_IN_FRAMES)
            if first < frames:
                piece = inference.decode(self.job, audio, 0, first)
                own = gated_rms(piece, self.rate)
                first_gain = gain_of(own)
                yield piece.astype(np.float64), first_gain
                rest = inference.decode(self.job, audio, first, frames)
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
            audio = inference.decode(self.job, audio, 0, frames)
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
