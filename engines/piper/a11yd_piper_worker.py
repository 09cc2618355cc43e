#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""a11yd's Piper engine worker, as a11yd starts it: the package a11yd_piper beside this script (its
__init__ says what the worker does).

    python3 a11yd_piper_worker.py --sample-rate 22050 --voices-dir DIR [--voices-dir DIR ...]
                                  [--preload NAME] [--threads 1]
"""

import os
import sys

# The package is found beside this script whatever the interpreter puts first on sys.path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from a11yd_piper.worker import main  # noqa: E402

if __name__ == "__main__":
    main()
