# SPDX-License-Identifier: GPL-3.0-or-later
"""One loaded Piper voice: its configuration, its model (split when it can be) and a run of it."""

import ctypes
import json

import numpy as np

from .decoder_split import DecoderSplit, Latent
from .log import log
from .piper_tts import BOS, EOS, PAD, PhonemeType, PiperConfig, onnxruntime

# The same text is said with the same rhythm every time, as eSpeak and VoiceOver's voices say it: a
# screen reader's user hears the same words many times a day and knows them by their sound. Piper's
# duration noise (the voice's noise_w) draws each phoneme's length at random on every inference: the same
# sentence lasted longer or shorter each time, and its words moved with it. At 0 the lengths are the
# duration model's own; the voice's noise_scale (timbre) is kept.
DURATION_NOISE = 0.0


def release_free_memory():
    """Gives the C heap's free pages back to the system (glibc's malloc_trim); nothing where there is none."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass


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
        # Loading leaves the parsed model and the two graphs' bytes freed but kept by the C heap: given back
        # to the system, the memory a loaded worker holds is its voice's.
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
