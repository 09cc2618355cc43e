#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Builds bench/language/sentences.tsv: real sentences in French, English, German, Spanish and Italian,
for the language detector's accuracy test and benchmark (docs/architecture.md, "Language detection").

Sources, all from Debian's free packages installed on the machine that made the file:
- gettext catalogs (/usr/share/locale/{fr,de,es,it}/LC_MESSAGES/*.mo): each translation, and the English
  message it translates (the msgid), as shipped by the package;
- translated manual pages (/usr/share/man/{fr,de,es,it}/man1 and the English /usr/share/man/man1): their
  running text, rendered with man(1), less any sentence the English page of the same name has word for word
  (a paragraph left untranslated).
Each row: language, kind (sentence: 5-25 words; short: 2-4 words, a label or a button), source (package and
file), text. Placeholders (%s, {0}), accelerators (_File, &Open) and markup are removed; text still holding
code-like tokens (paths, options, URLs, '=' or digits-only words) is skipped. The choice is deterministic
(sha1 of the text), at most PER_SOURCE rows per catalog or page, so that no one package dominates.

    python3 bench/language/make_testset.py > bench/language/sentences.tsv
"""
import glob
import gettext
import hashlib
import os
import re
import subprocess
import sys

LANGUAGES = ["fr", "de", "es", "it"]
SENTENCES_PER_LANGUAGE = 360  # catalogs
MAN_SENTENCES_PER_LANGUAGE = 90  # manual pages
SHORT_FRENCH = 400
PER_SOURCE = 12
SKIP_CATALOGS = re.compile(r"^(iso_|iso-|xkeyboard-config|libc\.mo|.*-15\.mo$)")  # lists of names (countries, languages, keyboard layouts), not prose; the same Postgres text many times

PLACEHOLDER = re.compile(r"%(\([^)]*\))?[-+ #0-9.*]*(hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGaAcspn%]|\{[^}]*\}|\$\{?\w+\}?")
MARKUP = re.compile(r"<[^>]+>|&[a-z]+;")
BAD = re.compile(r"[/\\=@#<>|`\[\]{}~^]|--|\.\.\.|\b\w+\.\w+\b|\b[A-Z_]{3,}\b|\d")
WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)


def clean(text):
    text = PLACEHOLDER.sub(" ", text)
    text = MARKUP.sub(" ", text)
    text = re.sub(r"(?<=\w)_(?=\w)|(?<![\w])_(?=\w)", "", text)  # accelerators
    text = re.sub(r"&(?=\w)", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text


def usable(text, low, high):
    if not text or BAD.search(text) or '"' in text or "«" in text:
        return False
    words = WORD.findall(text)
    if not (low <= len(words) <= high):
        return False
    # Mostly words: no leftovers of placeholders or lists.
    letters = sum(c.isalpha() for c in text)
    if letters < 0.75 * len(text.replace(" ", "")):
        return False
    return text[0].isupper()


def key(text):
    return hashlib.sha1(text.encode()).hexdigest()


def package_of(path):
    try:
        out = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True, timeout=20).stdout
        return out.split(":")[0].strip() or "?"
    except Exception:
        return "?"


def pick(candidates, count):
    """candidates: {source: [text]} -> at most PER_SOURCE per source, `count` in all, by hash order."""
    chosen = []
    seen = set()
    pool = []
    for source, texts in candidates.items():
        texts = sorted(set(texts), key=key)[:PER_SOURCE]
        pool += [(key(source + t), source, t) for t in texts]
    for _, source, text in sorted(pool):
        if text.lower() in seen:
            continue
        seen.add(text.lower())
        chosen.append((source, text))
        if len(chosen) == count:
            break
    return chosen


def catalogs(language):
    for path in sorted(glob.glob(f"/usr/share/locale/{language}/LC_MESSAGES/*.mo")):
        name = os.path.basename(path)
        if SKIP_CATALOGS.match(name):
            continue
        try:
            with open(path, "rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog
        except Exception:
            continue
        yield path, catalog


def man_text(path):
    try:
        out = subprocess.run(["man", "-l", path], capture_output=True, text=True, timeout=20,
                             env=dict(os.environ, MANWIDTH="4000", MAN_KEEP_FORMATTING="0", LANG="C.UTF-8")).stdout
    except Exception:
        return []
    out = re.sub(r".\x08", "", out)
    sentences = []
    for paragraph in re.split(r"\n\s*\n", out):
        paragraph = re.sub(r"\s+", " ", paragraph).strip()
        # Sentences end at . ! ? followed by a space and a capital.
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-ZÀ-Ý])", paragraph):
            sentences.append(sentence.strip())
    return sentences


def main():
    rows = []
    english = {}
    short_french = {}
    for language in LANGUAGES:
        translated = {}
        for path, catalog in catalogs(language):
            source = path
            for msgid, msgstr in catalog.items():
                if not isinstance(msgid, str) or not isinstance(msgstr, str) or not msgid or msgid == msgstr:
                    continue
                text = clean(msgstr)
                if usable(text, 5, 25):
                    translated.setdefault(source, []).append(text)
                if language == "fr" and usable(text, 2, 4) and not text.endswith((":", ",")):
                    short_french.setdefault(source, []).append(text)
                english_text = clean(msgid)
                if usable(english_text, 5, 25):
                    english.setdefault(re.sub(r"/locale/\w+/", "/locale/*/", path), []).append(english_text)
        for source, text in pick(translated, SENTENCES_PER_LANGUAGE):
            rows.append((language, "sentence", source, text))
        pages = {}
        for path in sorted(glob.glob(f"/usr/share/man/{language}/man1/*")):
            # A translated page may leave some paragraphs in English: those are not its language's.
            original = set(man_text(path.replace(f"/man/{language}/", "/man/")))
            texts = [t for t in man_text(path) if usable(t, 5, 25) and t.endswith((".", "!", "?")) and t not in original]
            if texts:
                pages[path] = texts
        for source, text in pick(pages, MAN_SENTENCES_PER_LANGUAGE):
            rows.append((language, "sentence", source, text))
    for source, text in pick(english, SENTENCES_PER_LANGUAGE):
        rows.append(("en", "sentence", source, text))
    pages = {}
    for path in sorted(glob.glob("/usr/share/man/man1/*"))[::7]:
        texts = [t for t in man_text(path) if usable(t, 5, 25) and t.endswith((".", "!", "?"))]
        if texts:
            pages[path] = texts
    for source, text in pick(pages, MAN_SENTENCES_PER_LANGUAGE):
        rows.append(("en", "sentence", source, text))
    for source, text in pick(short_french, SHORT_FRENCH):
        rows.append(("fr", "short", source, text))

    packages = {}
    out = sys.stdout
    out.write("# Real sentences from Debian packages (bench/language/make_testset.py). Columns: language, kind, package:file, text.\n")
    out.write("# Each text is the package's own (its translators' or authors'), under the package's free licence (see its\n")
    out.write("# /usr/share/doc/PACKAGE/copyright); English catalog rows name the translated catalogs' msgid.\n")
    for language, kind, source, text in rows:
        probe = source.replace("/*/", "/fr/")
        if probe not in packages:
            packages[probe] = package_of(probe)
        out.write(f"{language}\t{kind}\t{packages[probe]}:{source.replace('/usr/share/', '')}\t{text}\n")


if __name__ == "__main__":
    main()
