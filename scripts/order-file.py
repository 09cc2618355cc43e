#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""make order-file: writes Sources/a11yd/a11yd.order, the functions a running a11yd executes, for lld.

Why: a11yd's resident memory is mostly its own binary's pages, and the kernel maps 64 KiB of a file around
every page a process touches (fault-around). Functions executed by a daemon are scattered through 17 MB of
code; laid out together (lld --symbol-ordering-file) they fill a few megabytes instead of most of it.

How: runs a copy of the release a11yd under valgrind's callgrind (which records every function executed),
with a private PulseAudio and null sink, and drives what a desktop does with it, through the real CLI and raw
sockets: start, posts of every kind and form in both protocols, pause at both boundaries, resume, stop,
status, voices, pronounce, render, lexicon changes, a bad line, SIGHUP, then SIGTERM. The functions it ran that
the binary defines are kept, one name per input section of the link (link map): lld moves whole sections, so
one name per section places it, and the file stays small. Local functions, which the map leaves out, are kept
by name.

The order only lays out code: a stale file (names the code no longer has) costs memory, never correctness;
lld ignores the names it does not find. Run again after large changes; `make bench` reports resident memory.
Needs valgrind (Debian: valgrind) and a release build with a link map (the Makefile target makes both).
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))


def log(*args):
    print("order-file:", *args, file=sys.stderr, flush=True)


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise SystemExit(f"order-file: timed out waiting for {what}")


class Session:
    """A private PulseAudio and the daemon under callgrind, in one temporary folder."""

    def __init__(self, daemon, work):
        self.work = work
        self.env = dict(os.environ)
        runtime = os.path.join(work, "run")
        os.makedirs(runtime, mode=0o700)
        os.makedirs(os.path.join(work, "home"))
        pulse = os.path.join(work, "pulse")
        os.makedirs(os.path.join(pulse, "run"), mode=0o700)
        with open(os.path.join(pulse, "server.pa"), "w") as f:
            f.write("load-module module-null-sink sink_name=nullsink rate=48000\nset-default-sink nullsink\n"
                    f"load-module module-native-protocol-unix auth-anonymous=1 socket={pulse}/native\n")
        self.pulse = subprocess.Popen(
            ["pulseaudio", "-n", f"--file={pulse}/server.pa", "--daemonize=no", "--exit-idle-time=-1",
             "--use-pid-file=no"],
            env=dict(self.env, XDG_RUNTIME_DIR=f"{pulse}/run", HOME=pulse),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: os.path.exists(f"{pulse}/native"), 20, "PulseAudio")
        self.env.update(XDG_RUNTIME_DIR=runtime, HOME=os.path.join(work, "home"), PULSE_SERVER=f"unix:{pulse}/native",
                        A11YD_NO_AUTOSPAWN="1", XDG_CONFIG_HOME=os.path.join(work, "home", ".config"))
        self.json_path = os.path.join(runtime, "a11yd", "socket")
        self.ssip_path = os.path.join(runtime, "speech-dispatcher", "speechd.sock")
        self.profile = os.path.join(work, "callgrind.out")
        self.daemon = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--dump-instr=no", "--demangle=no",
             f"--callgrind-out-file={self.profile}", daemon],
            env=self.env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "daemon.log"), "w"))
        wait_for(lambda: os.path.exists(self.json_path) and os.path.exists(self.ssip_path), 120, "a11yd's sockets")

    def say(self, say_bin, *args, timeout=120):
        result = subprocess.run([say_bin, *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        log("a11ysay", " ".join(args)[:60], "->", result.returncode)
        return result

    def json_lines(self, requests, until):
        """Sends JSON requests on one connection; reads until `until(message)` is true for a message."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(120)
            s.connect(self.json_path)
            s.sendall("".join(json.dumps(r) + "\n" if isinstance(r, dict) else r for r in requests).encode())
            buffer = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if until(json.loads(line)):
                        return

    def ssip(self, lines, until):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(120)
            s.connect(self.ssip_path)
            s.sendall("".join(line + "\r\n" for line in lines).encode())
            received = b""
            while until not in received:
                chunk = s.recv(65536)
                if not chunk:
                    break
                received += chunk
            s.sendall(b"QUIT\r\n")

    def finish(self):
        self.daemon.send_signal(signal.SIGTERM)
        self.daemon.wait(timeout=120)
        self.pulse.terminate()
        self.pulse.wait(timeout=20)


def workload(session, say):
    session.say(say, "--status")
    session.say(say, "--wait", "--lang", "fr", "Bonjour tout le monde, il est 8 h 15.")
    session.say(say, "--wait", "--lang", "en", "Hello, this is a test of the speech daemon.")
    session.say(say, "--queue", "--wait", "phrase numéro 2")
    session.say(say, "--screen", "--wait", "Réglages")
    session.say(say, "--layout", "--wait", "Le bouton a changé")
    session.say(say, "--scrolled", "--wait", "page 2 sur 5")
    session.say(say, "--wait", "--ipa", "pomme=ʃa", "--spell", "SNCF", "une pomme et la SNCF")
    session.say(say, "--wait", "--ssml", '<speak xml:lang="fr">Un <break time="100ms"/> deux '
                '<prosody rate="fast">trois</prosody> <say-as interpret-as="characters">abc</say-as>'
                '<mark name="m1"/> quatre</speak>')
    session.say(say, "--wait", "--rate", "0.7", "--pitch", "1.2", "--volume", "0.8", "--priority", "high", "plus vite")
    session.say(say, "--show-ipa", "--lang", "fr", "bonjour")
    session.say(say, "--list-voices")
    session.say(say, "--output", os.path.join(session.work, "out.wav"), "bonjour")
    # Pause at both boundaries, resume, stop, around a long item.
    long_text = ("La synthèse vocale lit ce long paragraphe pendant plusieurs secondes, afin que nous puissions "
                 "l'interrompre, le mettre en pause puis le reprendre exactement là où il s'était arrêté.")
    session.say(say, long_text)
    time.sleep(3)
    for args in (["--pause", "--at", "word"], ["--resume"], ["--pause"], ["--status"], ["--resume"], ["--stop"]):
        session.say(say, *args)
        time.sleep(1.5)
    session.say(say, "--lexicon-add", "pomme=ʃa", "--lang", "fr")
    session.say(say, "--lexicon-alias", "SNCF=société nationale")
    session.say(say, "--lexicon-list")
    session.say(say, "--wait", "--lang", "fr", "une pomme à la SNCF")
    session.say(say, "--lexicon-remove", "pomme", "--lang", "fr")
    session.say(say, "--lexicon-remove", "SNCF")
    # Raw JSON Lines: a subscriber, an element, a batch, a bad line, voices, pronounce, render.
    element = {"op": "post", "id": 1, "kind": "screenChanged",
               "element": {"label": "Envoyer", "value": "3 pièces jointes", "traits": ["button", "selected"],
                           "hint": "Touchez deux fois."}}
    batch = {"op": "batch", "id": 2, "posts": [{"text": "premier", "lang": "fr"},
                                               {"text": "second", "queue": True, "priority": "low"}]}
    finished = set()
    session.json_lines(
        [{"op": "subscribe", "all": True}, element, batch, "not json\n", {"op": "voices", "id": 3},
         {"op": "pronounce", "id": 4, "text": "bonjour", "lang": "fr"},
         {"op": "render", "id": 5, "text": "oui", "lang": "fr"}],
        lambda m: m.get("event") == "finished" and finished.add(m.get("utterance")) is None and len(finished) >= 3)
    # SSIP, as speech-dispatcher's clients speak it.
    session.ssip(["SET SELF CLIENT_NAME user:order-file:main", "SET SELF LANGUAGE fr", "SET SELF PRIORITY text",
                  "SET SELF NOTIFICATION ALL on", "SPEAK", "Bonjour depuis SSIP.", ".", "CHAR a", "KEY space"],
                 b"702")
    session.daemon.send_signal(signal.SIGHUP)
    time.sleep(2)
    session.say(say, "--wait", "après le rechargement")


def callgrind_functions(profile):
    names = set()
    with open(profile, errors="replace") as f:
        for line in f:
            m = re.match(r"c?fn=\(\d+\) (\S+)", line)
            if m:
                names.add(m.group(1))
    return names


def local_functions(binary):
    """The names of the binary's local functions (nm type t)."""
    listing = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    return {parts[2] for parts in (line.split() for line in listing.splitlines()) if len(parts) == 3 and parts[1] == "t"}


def sections_of(link_map):
    """For lld's -Map output: {symbol: input section}, in link order."""
    owner = {}
    section = None
    symbol_line = re.compile(r"\s*[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+\d+\s+(.*)$")
    with open(link_map, errors="replace") as f:
        for line in f:
            m = symbol_line.match(line)
            if not m:
                continue
            rest = m.group(1).strip()
            if ":(" in rest:
                section = rest if ":(.text" in rest else None
            elif section is not None and " " not in rest:
                owner.setdefault(rest, section)
    return owner


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--link-map", required=True, help="lld's -Map output for the a11yd in --bin-dir")
    parser.add_argument("--output", default=os.path.join(ROOT, "Sources", "a11yd", "a11yd.order"))
    parser.add_argument("--keep", action="store_true", help="keep the work folder (profile, logs)")
    args = parser.parse_args()
    for tool in ("valgrind", "pulseaudio", "strip"):
        if not shutil.which(tool):
            raise SystemExit(f"order-file: {tool} is missing (scripts/install-deps.sh --bench installs it)")

    work = tempfile.mkdtemp(prefix="a11yd-order.")
    daemon = os.path.join(work, "a11yd")
    # valgrind 3.19 cannot read the DWARF 5 debug information clang writes; the symbol table is enough.
    subprocess.run(["strip", "-g", "-o", daemon, os.path.join(args.bin_dir, "a11yd")], check=True)
    session = Session(daemon, work)
    try:
        workload(session, os.path.join(args.bin_dir, "a11ysay"))
    finally:
        session.finish()

    executed = callgrind_functions(session.profile)
    owner = sections_of(args.link_map)
    chosen, seen = [], set()
    for symbol in sorted(s for s in executed if s in owner):
        if owner[symbol] not in seen:
            seen.add(owner[symbol])
            chosen.append(symbol)
    # lld's map lists global symbols only; the runtime's C++ helpers are local, in sections of their own.
    local = local_functions(os.path.join(args.bin_dir, "a11yd"))
    chosen += sorted(s for s in executed if s not in owner and s in local)
    if len(chosen) < 500:
        raise SystemExit(f"order-file: only {len(chosen)} functions matched the link map; is it this binary's? "
                         f"(work folder kept: {work})")
    with open(args.output, "w") as f:
        f.write("\n".join(chosen) + "\n")
    log(f"{len(executed)} functions executed, {len(chosen)} names (one per input section of the link) "
        f"-> {os.path.relpath(args.output)}")
    if args.keep:
        log(f"work folder kept: {work}")
    else:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
