# SPDX-License-Identifier: GPL-3.0-or-later
"""The worker's log: stderr, which a11yd reads line by line into its own log."""

import sys


def log(text):
    try:
        sys.stderr.write("a11yd-piper: " + " ".join(str(text).split()) + "\n")
        sys.stderr.flush()
    except Exception:
        pass
