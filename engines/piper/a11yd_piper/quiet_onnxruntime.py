# SPDX-License-Identifier: GPL-3.0-or-later
"""onnxruntime, imported once, before anything else imports it (piper-tts does), without its noise."""

import os
import re
import sys


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
