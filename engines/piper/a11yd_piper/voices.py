# SPDX-License-Identifier: GPL-3.0-or-later
"""The voices in the --voices-dir folders: listed for a11yd, loaded at their first use, a broken one failing alone."""

import json
import os
import threading

from .frames import ENGINE_FAILED, UNKNOWN_VOICE
from .jobs import SpeechFailure
from .log import log
from .voice import Voice, VoiceError


class Voices:
    """The voices of the --voices-dir folders (the first folder wins a name), each loaded at its first use
    and kept; a voice that failed to load is not read again until its files change."""

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
