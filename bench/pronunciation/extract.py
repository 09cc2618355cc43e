#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Extracts a fixed, seeded sample of words with independent dictionary IPA from the gruut
lexicons (gruut-lang-XX on PyPI: `lexicon.db`, NOT the `espeak/lexicon.db` next to it, which was
made with eSpeak and would make the benchmark circular).

    pip download --no-deps gruut-lang-fr ... -d /tmp/gruut && (cd /tmp/gruut && for f in *.tar.gz; do tar xzf $f; done)
    python3 bench/pronunciation/extract.py /tmp/gruut bench/pronunciation/data

Writes data/<lang>.tsv: word<TAB>ipa (phonemes joined without spaces), 200 words per language.
Kept: words of letters only, 3+ letters, with exactly one pronunciation in the lexicon."""
import glob, os, random, sqlite3, sys, unicodedata

LANGS = ["fr", "en", "de", "es", "it", "nl", "pt", "ru", "sv", "cs"]
N, SEED = 200, 4

def main(root, out):
    os.makedirs(out, exist_ok=True)
    for lang in LANGS:
        dbs = glob.glob(os.path.join(root, f"gruut_lang_{lang}-*", f"gruut_lang_{lang}", "lexicon.db"))
        if not dbs:
            print("missing", lang, file=sys.stderr); continue
        con = sqlite3.connect(dbs[0])
        prons = {}
        for word, phonemes in con.execute("SELECT word, phonemes FROM word_phonemes ORDER BY id"):
            prons.setdefault(word, []).append(phonemes)
        words = sorted(w for w, p in prons.items()
                       if len(p) == 1 and len(w) >= 3 and all(unicodedata.category(c).startswith("L") for c in w)
                       and w == w.lower())
        rng = random.Random(SEED)
        sample = sorted(rng.sample(words, N))
        with open(os.path.join(out, f"{lang}.tsv"), "w", encoding="utf-8") as f:
            for w in sample:
                f.write(f"{w}\t{''.join(prons[w][0].split())}\n")
        print(lang, len(words), "->", N)

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
