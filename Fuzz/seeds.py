#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the seed inputs of every fuzzer into Fuzz/seeds/NAME/ (not committed): examples from
docs/protocol.md, docs/ssip.md, docs/pronunciation.md and the tests, eSpeak's special characters,
huge numbers and control characters. `make fuzz` merges them into Fuzz/corpus/NAME/ (-merge=1),
which keeps only the ones that add coverage."""
import hashlib, json, os, re, sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)

def read(path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()

def write(name, items):
    folder = os.path.join(here, "seeds", name)
    os.makedirs(folder, exist_ok=True)
    for item in items:
        data = item if isinstance(item, bytes) else item.encode("utf-8")
        with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)

# Characters eSpeak gives a meaning to in text or in phoneme input, and control characters.
SPECIAL = "[[ ]] [[a]] < > & \" ' ` _ ^ | # @ % = + ~ \\ / * { } \u00a0 \u200b \u200d \ufeff \ufffd \u2028 \x00 \x01 \x07 \x1b \x7f"
NUMBERS = ["0", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
           "1e308", "1e309", "-0", "NaN", "Infinity", "99999999999999999999999999999999999", "3.14159", "1,000,000.00"]
TEXTS = ["bonjour tout le monde", "Message envoyé", "Hello, world.", "2026-11-23 15:00", "é\u0301\u0301\u0301",
         "🙂👩‍👩‍👧", "ﷺ", "אבג abc", "日本語のテキスト", "\t\r\n\v\f", " ", "a" * 200, "A.B.C. etc.",
         SPECIAL] + NUMBERS

# --- JSON Lines: [limit, 4 split sizes] + lines ---------------------------------------------------
lines = [l for l in re.findall(r'\{"op"[^\n`]*\}', read("docs/protocol.md") + read("README.md")) if "…" not in l]
for text in TEXTS:
    lines.append(json.dumps({"op": "post", "id": 1, "text": text}, ensure_ascii=False))
    lines.append(json.dumps({"op": "render", "text": text, "spans": [{"start": 0, "length": 1, "ipa": "a"}]}))
for number in NUMBERS:
    lines.append('{"op":"post","id":%s,"text":"x","rate":%s}' % (number, number))
    lines.append('{"op":"post","text":"abc","spans":[{"start":%s,"length":%s,"lang":"fr"}]}' % (number, number))
lines += ['{"op":"post","ssml":"<speak>a<mark name=\\"m\\"/></speak>"}', '{"op":"pause","at":"word"}',
          '{"op":"post","element":{"label":"OK","traits":["button"]}}', '{"op":"lexicon","action":"add","grapheme":"x","alias":"y"}',
          '{"op":"post","text":"a","kind":"screenChanged","priority":"high","queue":true}',
          '[]', 'null', '{"op":"post","text":"\\ud800"}', '{"op":"post","text":"a\\u0000b"}', '{"op":"post","op":"stop"}']
lines_inputs = []
for i, line in enumerate(lines):
    head = bytes([255, i % 7, (i * 13) % 256, 3, 200])
    lines_inputs.append(head + line.encode("utf-8") + b"\n")
lines_inputs.append(bytes([0, 1, 2, 3, 4]) + "\n".join(lines[:6]).encode() + b"\n" + b"x" * 300 + b"\n" + lines[0].encode())
lines_inputs.append(bytes([255, 0, 0, 0, 0]) + b'{"op":"post","text":"caf\xc3"}\n{"op":"post","text":"\xff"}\n')
write("lines", lines_inputs)

# --- SSML -------------------------------------------------------------------------------------
ssml = set(re.findall(r'<speak[^`\n]*</speak>', read("docs/pronunciation.md") + read("docs/protocol.md")))
ssml |= {s for s in re.findall(r'<speak[^`\n]*?</speak>', "\n".join(
    read(os.path.join("Tests/A11yPronunciationTests", f)) for f in os.listdir(os.path.join(root, "Tests/A11yPronunciationTests"))))
    if '" +' not in s}
ssml = {s.replace('\\"', '"') for s in ssml}
ssml |= {
    '<speak><prosody volume="silent"><prosody volume="+6dB">a</prosody></prosody></speak>',
    '<speak><prosody rate="x-fast"><prosody rate="400%"><prosody pitch="+50%">a</prosody></prosody></prosody></speak>',
    '<speak><break time="60000ms"/><break time="0.5s"/><break strength="x-strong"/></speak>',
    '<speak><voice gender="male" age="30" variant="2">a</voice></speak>',
    '<speak><s xml:lang="fr">a</s><p xml:lang="de">b</p><emphasis level="strong">c</emphasis></speak>',
    '<speak><say-as interpret-as="characters">abc</say-as><say-as interpret-as="spell-out">x</say-as></speak>',
    '<speak>' + SPECIAL.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") + '</speak>',
    '<speak>' + " ".join(NUMBERS) + '</speak>',
}
write("ssml", sorted(ssml))

# --- IPA: [voice] + IPA ---------------------------------------------------------------------
ipa = set(re.findall(r'"([^"\\]*[ˈˌːʃʒʁɔɛəɪʊæɑθðŋ][^"\\]*)"', "\n".join(
    read(os.path.join("Tests/A11yPronunciationTests", f)) for f in os.listdir(os.path.join(root, "Tests/A11yPronunciationTests")))))
ipa = {s for s in ipa if len(s) < 60}
ipa |= {"a", "ˈ", "ː", ".", "a|b", "[a]", "/a/", "a b  c", "²anden", "t͡ʃ", "ɐ̃w̃", "ẽj̃", "ʀʁr", "k'a:", "ǂ", "\u0303", "ˈˈaˌˌ"}
write("ipa", [bytes([i % 12]) + s.encode("utf-8") for i, s in enumerate(sorted(ipa))])

# --- SSIP: [line limit, message limit, 8 answers] + a conversation --------------------------------
commands = sorted(set(re.findall(r'"((?:SPEAK|SET|LIST|GET|HISTORY|BLOCK|CHAR|KEY|QUIT|STOP|CANCEL|PAUSE|RESUME|SOUND_ICON|HELP|BYE)[^"\\]*)"',
    "\n".join(read(os.path.join("Tests/A11ySSIPTests", f)) for f in os.listdir(os.path.join(root, "Tests/A11ySSIPTests"))))))
conversations = [[c] for c in commands]
conversations += [
    ["SET self NOTIFICATION all on", "SPEAK", "Bonjour", "..dot", ".", "QUIT"],
    ["SET self SSML_MODE on", "SPEAK", '<speak>a<mark name="x"/>b</speak>', ".", "HISTORY GET LAST"],
    ["SET self SPELLING on", "SET self PUNCTUATION all", "SPEAK", "a.b", ".", "CHAR x", "KEY shift_a"],
    ["BLOCK BEGIN", "SPEAK", "un", ".", "SPEAK", "deux", ".", "BLOCK END"],
    ["SET all RATE 50", "SET 2 PITCH 10", "SET self SYNTHESIS_VOICE French", "LIST SYNTHESIS_VOICES fr", "LIST SYNTHESIS_VOICES en us"],
    ["SPEAK", "x" * 300, "."], ["SPEAK", "", "."], ["SPEAK", "caf\udcc3", "."],
    ["SET self RATE 99999999999999999999999", "SET self PITCH -9223372036854775808", "GET RATE"],
]
ssip = []
for i, conversation in enumerate(conversations):
    head = bytes([200, 100 + i % 100, i % 256, 1, 2, 3, 0, 1, 0, 2])
    body = "\r\n".join(conversation).encode("utf-8", "surrogateescape") + b"\r\n"
    ssip.append(head + body)
ssip.append(bytes([200, 255, 0, 0, 0, 0, 0, 0, 0, 0]) + b"SPEAK\r\nline one\nline two\r\n.\r\n")
write("ssip", ssip)

# --- render: [mode, language, settings, 6 span bytes, 3 x 8 raw settings] + text or SSML -----------
render = []
for i, text in enumerate(TEXTS):
    for mode in range(4):
        head = bytes([mode, i % 8, (i * 37) % 256, 0, 3, 5, 1, 1, 2])
        raw = (175).to_bytes(8, "little") + (50).to_bytes(8, "little") + (100).to_bytes(8, "little")
        if mode == 3 and i % 3 == 0:
            raw = bytes([255] * 7 + [127]) + bytes([0] * 7 + [128]) + bytes([255] * 8)
        payload = ("<speak>%s</speak>" % text.replace("&", "&amp;").replace("<", "&lt;")) if mode == 2 else text
        render.append(head + raw + payload.encode("utf-8"))
for s in sorted(ssml)[:30]:
    render.append(bytes([2, 1, 7, 0, 0, 0, 0, 0, 0]) + bytes(24) + s.encode("utf-8"))
write("render", render)
# --- TOML: the documented configuration, its sections one by one, the reader tests' inputs ---------
documented = read("config/a11yd.toml")
toml = [documented, documented.replace("\n", "\r\n"), "\ufeff" + documented]
toml += ["[" + part for part in documented.split("\n[")[1:]]
tests = read("Tests/A11yConfigurationTests/TOMLReaderTests.swift") + read("Tests/A11yConfigurationTests/ConfigurationTests.swift")
toml += [t.encode("utf-8").decode("unicode_escape", errors="ignore") for t in re.findall(r'\("((?:[^"\\]|\\.)*)", "', tests)]
toml += ['a = [' * 40, 'a = ' + '[' * 32 + ']' * 32, 'x = 0x_1', 'x = 1__0', 'x = 00', 'x = 1e309', 'x = -nan',
         '[a]\n[a]', '[a.b]\n[a]\nb = 1', 'a.b = 1\n[a]', '"" = 1', "'' = ''", 'a = "\\uD800"', 'a = "\\U0010FFFF"']
write("toml", toml)
print("seeds written to", os.path.join(here, "seeds"))
