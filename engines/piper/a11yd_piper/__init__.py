# SPDX-License-Identifier: GPL-3.0-or-later
"""a11yd's Piper engine worker: natural voices through the same frames as the eSpeak worker.

a11yd runs it as `python3 a11yd_piper_worker.py` (the script beside this package, which puts its folder on
sys.path and calls worker.main):

    python3 a11yd_piper_worker.py --sample-rate 22050 --voices-dir DIR [--voices-dir DIR ...]
                                  [--preload NAME] [--threads 1]

with descriptor 0 one end of a Unix stream socket pair (requests are read from it and answers written to it),
stdout /dev/null, and its log on stderr (one line per problem, prefixed "a11yd-piper:").

What it does, and how it differs from the eSpeak worker:
- Voices (voices.py, voice.py): every NAME.onnx that has a NAME.onnx.json beside it, in the --voices-dir
  folders in order (the first folder wins a name); identifier "piper:NAME". A voice loads at its first use
  (or at start with --preload, after `ready`) and stays loaded; a11yd ends an idle worker to give the memory
  back. A voice that fails to load fails that request (end status 1, the file and why) and the others
  still speak.
- Output (output.py, resampler.py): mono signed 16-bit at --sample-rate, whatever the voice's rate
  (windowed-sinc resampling).
- Text (utterance_plan.py, text_splitting.py, phonemizer.py) is phonemised by the eSpeak-NG inside
  piper-tts, a block at a time as it is needed, clause by clause, and each clause (cut into bounded units:
  a long word is cut too) is synthesised and sent (in chunks of at most 100 ms) as soon as it exists, so
  the first sound of a long text or word waits for its first unit only; and that clause's first sound
  waits only for the model's front and the decoding of its first frames (decoder_split.py), its rest being
  decoded while they play. So does a later clause's when what was sent before it would have played before
  it is decoded whole. Consecutive segments in the same voice and prosody are said as one stream of
  phonemes (an IPA span inside a sentence keeps the sentence's intonation), cut at clause ends.
- `.phonemes` segments carry IPA here (not eSpeak mnemonics): a11yd converts before sending. Each
  codepoint is looked up in the voice's phoneme_id_map; others are dropped and logged (units.py).
- Word events come from the model's per-phoneme durations when the voice has that output (install-voices.sh
  adds it with piper.patch_voice_with_alignment); otherwise each clause's duration is shared out in
  proportion to phoneme counts, and the log says so once per voice (inference.py).
- Rate (rate.py, time_stretch.py): the model's length scale up to MODEL_TOP_SPEED times the voice's speed,
  then libsonic's pitch-preserving time-stretch (ctypes), streamed piece by piece and flushed at each unit's
  end; word and mark frames are scaled by the stretch. Without libsonic: the length scale alone, logged once.
- Loudness (loudness.py, limiter.py): each clause is scaled to a fixed RMS (over its voiced 20 ms windows)
  that matches eSpeak-NG's at the same volume, then peak-limited at -1 dBFS; Piper's own peak
  normalisation is not used. The first clause's first piece, sent before the clause's loudness is known,
  is scaled on its own (Output.scaled).
- Not done: pitch (a Piper model has no pitch control; the value is ignored) and the punctuation flag
  (piper-tts's eSpeak-NG build refuses espeakPUNCTUATION, EINVAL): a11yd's router names punctuation
  before it sends a segment here, so the flag only comes from another sender. Questions other than
  `voices` are refused.

The rest: frames.py (the frames' bytes), channel.py (the socket), jobs.py (a request's life),
synthesizer.py (the synthesis thread), worker.py (the process and its request loop), log.py,
quiet_onnxruntime.py and piper_tts.py (the imports). Each module's tests are in test_MODULE.py beside it;
test_worker.py, beside this package, tests the whole worker over its channel. From engines/piper:

    PYTHON -m unittest discover -s . -t .        all of them (make test-piper)
    PYTHON -m unittest a11yd_piper.test_frames   one module's
"""
