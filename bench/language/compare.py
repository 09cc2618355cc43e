#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reads compare_detectors' lines (one per row of sentences.tsv) and applies LanguageDecision's rules to
each whole text, posted in French with five languages listed: the share of each language's sentences
said in it, and of short French texts kept French, for CLD2's vote flat (the first version) and
weighed by CLD2's own score (a11yd's). Whole texts, not cut into sentences and clauses as the planner
does (LanguageAccuracyTests measures that).

    g++ -O2 -o /tmp/compare_detectors bench/language/compare_detectors.cpp -lcld2 -lexttextcat-2.0 \\
        -I/usr/include/libexttextcat && /tmp/compare_detectors bench/language/sentences.tsv > /tmp/raw.tsv
    python3 bench/language/compare.py /tmp/raw.tsv bench/language/sentences.tsv
"""
import collections
import re
import sys

LISTED = ["fr", "en", "de", "es", "it"]
SHORT_WORDS, SHORT_MARGIN = 4, 0.15


def choose(cld2, distances, own, words, vote, full_score):
    """LanguageDecision.choose: the listed language the text is said in, None to keep `own`."""
    if not distances:
        return None
    nearest = min(distances.values())
    relative = {k: v / nearest for k, v in distances.items()}
    first, score, reliable = cld2
    says = first if reliable and first in relative else None
    if says:
        relative[says] -= vote * (min(max(score, 0), full_score) / full_score if full_score else 1)
    best = min(LISTED, key=lambda k: (relative[k], k != own))
    if best == own:
        return None
    margin = relative[own] - relative[best]
    if words <= SHORT_WORDS:
        return best if says == best and margin >= SHORT_MARGIN else None
    return best if margin > 0 else None


def main(raw_path, tsv_path):
    texts = [line.rstrip("\n").split("\t")[3] for line in open(tsv_path, encoding="utf-8") if not line.startswith("#")]
    rows = []
    for line in open(raw_path, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if len(f) < 9:
            continue
        cld2 = f[2].split(",")  # CLD2 without a hint, as a11yd calls it
        code, _, score = cld2[0].split(":")
        distances = {k: int(v) for k, v in (x.split(":") for x in f[8].split(",") if x)}
        rows.append((f[0], f[1], (code, float(score), cld2[4] == "1"), distances))
    for name, vote, full in (("flat vote 0.05", 0.05, 0), ("vote 0.06 weighed by CLD2's score up to 1000", 0.06, 1000.0)):
        right, total = collections.Counter(), collections.Counter()
        for (language, kind, cld2, distances), text in zip(rows, texts):
            words = len(re.findall(r"\w+(?:['’-]\w+)*", text))
            said = choose(cld2, distances, "fr", words, vote, full) or "fr"
            key = language if kind == "sentence" else "short French kept"
            total[key] += 1
            right[key] += said == language
        print(name + ": " + ", ".join(f"{k} {100 * right[k] / total[k]:.1f} %" for k in LISTED + ["short French kept"]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
