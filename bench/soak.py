#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""make soak: an hour of a desktop's speech compressed into minutes, against the release daemon.

Starts its own sound server (a private PulseAudio; with --pipewire-share > 0 the last part of the run is
on a private PipeWire + WirePlumber + pipewire-pulse taking over the same socket path, as when a user
switches servers) and its own a11yd, then drives concurrent clients of both protocols with seeded random
mixes (docs/protocol.md, docs/ssip.md, spoken as raw socket lines, never through the project's own code):
posts of every kind, priority and form (text, element, SSML, IPA, language and spell-out spans, queued,
several in one write), pauses at both boundaries, resumes, stops, status, bad bytes, over-long lines,
half lines finished later or never, abrupt disconnects, subscribers that read slowly or never, and
sound-server kills and restarts (some longer than the daemon's 3 s grace).

An auditor subscribed to every event tallies `finished` per utterance. At the end: every accepted post
(JSON `utterance`, SSIP `225-<id>`) has exactly one `finished`, and `finished` is each utterance's last
event; a final post is heard on the null sink's monitor; between stretches of load (--probe-every), once
quiet, the audio oracle on a sample item: heard unpaused, then paused at a random boundary and moment and
resumed, it must be told `spoken`, voice as long (within 5 %) and be silent while paused; the daemon is alive; RSS, PSS and RssAnon
(/proc/PID/smaps_rollup) at a quiet point after warm-up and at the end, RSS and RssAnon at
the end within --memory-slack-kib of warm-up. Any violation: exit status 1, and the report says which.
Standard library only, with the bench's clients, recorder and memory reading (instruments.py), none of whose
numpy parts it uses; the report is JSON on stdout, progress on stderr.
"""
import argparse
import asyncio
import collections
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from instruments import A11ydClient, Recorder, SSIPClient, logger, memory

LONG = ("La synthèse vocale lit ce long paragraphe pendant plusieurs secondes, afin que nous puissions "
        "l'interrompre, le mettre en pause puis le reprendre exactement là où il s'était arrêté.")
SHORT = ["bonjour", "message envoyé", "trois nouveaux messages", "batterie faible", "page suivante",
         "fenêtre fermée", "téléchargement terminé", "Le train de la SNCF part à 8 h 15.",
         "Ouvrez le fichier README maintenant", "café, thé, chocolat ?"]
ELEMENTS = [
    {"label": "Envoyer", "value": "3 pièces jointes", "traits": ["button", "selected"], "hint": "Touchez deux fois."},
    {"label": "Volume", "value": "50 %", "traits": ["adjustable"]},
    {"label": "Réglages", "traits": ["header", "link"]},
    {"label": "Recherche", "traits": ["searchField", "notEnabled"]},
]
SSML = [
    '<speak xml:lang="fr">Appelez le <say-as interpret-as="telephone">06.11.22.33.06</say-as>'
    '<mark name="m1"/> maintenant.</speak>',
    '<speak>Un <break time="200ms"/> deux <prosody rate="fast">trois quatre</prosody> '
    '<emphasis>cinq</emphasis></speak>',
    '<speak xml:lang="fr">Le mot <phoneme alphabet="ipa" ph="ʃa">pomme</phoneme><mark name="m2"/> est dit.</speak>',
]
# RMS under which the sink counts as silent: as far under a11yd's speech (0.10-0.17) as the tests' `HeardWhole.silence`.
SILENCE = 0.006
# Items sampled for the audio oracle (long enough to be paused in the middle).
PROBES = [LONG, "mon ami Émile a lu le long roman en une année, le long du lac, mais lui, non, il a mal",
          "Ouvrez le fichier README maintenant, puis fermez la fenêtre des réglages et revenez à l'accueil."]
KINDS = ["announcement"] * 6 + ["layoutChanged", "layoutChanged", "screenChanged", "pageScrolled"]
PRIORITIES = [None, None, "low", "default", "high"]


log = logger("soak")
# The recorder's fragments: the soak only listens whether an item was heard, and a 1 ms recorder would load
# the machine it loads already.
RECORDER_MS = 10


# --------------------------------------------------------------------------------------------- sound
class SoundServer:
    """A private pulse-protocol server whose socket is always `<run>/pulse/native`."""

    def __init__(self, work, kind):
        self.work, self.kind = work, kind
        self.run = os.path.join(work, "snd")
        self.socket = os.path.join(self.run, "pulse", "native")
        self.procs = []
        self.starts = 0
        os.makedirs(os.path.join(self.run, "pulse"), mode=0o700, exist_ok=True)
        os.makedirs(os.path.join(work, "snd-home"), exist_ok=True)
        self.env = dict(os.environ, XDG_RUNTIME_DIR=self.run, HOME=os.path.join(work, "snd-home"),
                        XDG_CONFIG_HOME=os.path.join(work, "snd-config"))
        for name in ("PULSE_SERVER", "PIPEWIRE_REMOTE", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
            self.env.pop(name, None)
        self.bus = None
        if kind == "pulseaudio":
            self.script = os.path.join(work, "server.pa")
            with open(self.script, "w") as f:
                f.write("load-module module-null-sink sink_name=nullsink rate=48000\n"
                        "set-default-sink nullsink\n"
                        f"load-module module-native-protocol-unix auth-anonymous=1 socket={self.socket}\n")
        else:
            dropins = os.path.join(work, "snd-config", "pipewire", "pipewire.conf.d")
            os.makedirs(dropins, exist_ok=True)
            with open(os.path.join(dropins, "a11y-null-sink.conf"), "w") as f:
                f.write("context.objects = [ { factory = adapter args = { factory.name = support.null-audio-sink "
                        "node.name = nullsink media.class = Audio/Sink audio.rate = 48000 "
                        "audio.position = [ FL FR ] monitor.channel-volumes = true object.linger = true } } ]\n")
            bus = os.path.join(self.run, "bus")
            self.env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + bus
            self.bus = self._spawn(["dbus-daemon", "--session", "--address=unix:path=" + bus, "--nofork",
                                    "--nopidfile"], "dbus")
            self._wait(lambda: accepts(bus), "the session bus", [self.bus])

    @property
    def client_env(self):
        return {"PULSE_SERVER": "unix:" + self.socket}

    def _spawn(self, argv, name):
        out = open(os.path.join(self.work, "logs", f"{name}.log"), "ab")
        return subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True)

    def _wait(self, ready, what, procs, timeout=15):
        deadline = time.monotonic() + timeout
        while not ready():
            if any(p.poll() is not None for p in procs):
                raise RuntimeError(f"{self.kind}: a process exited before {what}; see logs/")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.kind}: no {what} within {timeout} s; see logs/")
            time.sleep(0.01)

    def start(self):
        self.starts += 1
        if self.kind == "pulseaudio":
            self.procs = [self._spawn(["pulseaudio", "-n", f"--file={self.script}", "--daemonize=no",
                                       "--exit-idle-time=-1", "--use-pid-file=no", "--disallow-exit"],
                                      "pulseaudio")]
            self._wait(lambda: accepts(self.socket), "socket", self.procs)
        else:
            self.procs = [self._spawn(["pipewire"], "pipewire")]
            self._wait(lambda: accepts(os.path.join(self.run, "pipewire-0")), "PipeWire socket", self.procs)
            self.procs.append(self._spawn(["wireplumber"], "wireplumber"))
            # The pulse server only once WirePlumber has chosen the default sink (as PrivatePipeWireServer).
            self._wait(lambda: '"nullsink"' in output(["pw-metadata", "-n", "default", "0", "default.audio.sink"],
                                                      self.env), "WirePlumber's default sink", self.procs)
            self.procs.append(self._spawn(["pipewire-pulse"], "pipewire-pulse"))
            env = dict(self.env, **self.client_env)
            self._wait(lambda: output(["pactl", "get-default-sink"], env).strip() == "nullsink", "default nullsink",
                       self.procs)

    def kill(self):
        for p in reversed(self.procs):
            p.send_signal(signal.SIGKILL)
        for p in self.procs:
            p.wait()
        self.procs = []

    def close(self):
        self.kill()
        if self.bus:
            self.bus.kill()
            self.bus.wait()


def output(argv, env, timeout=5):
    """A tool's standard output ('' if it hung past `timeout` seconds and was killed)."""
    try:
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return ""


def accepts(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def rms(samples):
    return math.sqrt(sum(x * x for x in samples) / len(samples)) if samples else 0.0


def voiced_seconds(samples, rate=48000, window=0.02, threshold=0.01):
    """Seconds of 20 ms windows loud enough to be speech (the tests' `Recording.voicedDuration`)."""
    n = int(rate * window)
    return sum(n for i in range(0, len(samples) - n + 1, n) if rms(samples[i:i + n]) >= threshold) / rate


# --------------------------------------------------------------------------------------------- tally
class Tally:
    def __init__(self):
        self.accepted = {}                       # utterance -> who posted it
        self.finished = collections.Counter()    # utterance -> finished events seen by the auditor
        self.after_finished = []                 # (utterance, event) seen after its finished
        self.reasons = collections.Counter()
        self.final, self.final_reason = None, None
        self.probes = {}                         # utterance -> its finished reason (None until then)
        self.calm = set()                        # utterances posted in calm spells
        self.calm_reasons = collections.Counter()
        self.ops = collections.Counter()
        self.errors = collections.Counter()      # error codes in replies
        self.violations = []

    def accept(self, utterance, who):
        if utterance in self.accepted:
            self.violations.append(f"utterance {utterance} accepted twice ({self.accepted[utterance]}, {who})")
        self.accepted[utterance] = who


class Pace:
    """Bursts (everything, fast) alternate with calm spells (a desktop's ordinary pace: short posts now
    and then, often queued, nothing else), so that items are also spoken to their end."""

    def __init__(self):
        self.calm = False
        self.spells = collections.Counter()

    async def alternate(self, stop_at, rng):
        while time.monotonic() < stop_at:
            self.spells["calm" if self.calm else "burst"] += 1
            await asyncio.sleep(rng.uniform(10, 20) if self.calm else rng.uniform(15, 30))
            self.calm = not self.calm


async def calm_post(conn, name, tally, rng):
    post = {"op": "post", "text": rng.choice(SHORT), "queue": rng.random() < 0.5}
    tally.ops["calm-post"] += 1
    reply = (await conn.request(post))[0]
    if reply.get("ok"):
        tally.accept(reply["utterance"], name)
        tally.calm.add(reply["utterance"])


# --------------------------------------------------------------------------------------------- JSON clients
def random_post(rng):
    post = {"op": "post", "kind": rng.choice(KINDS)}
    form = rng.random()
    if form < 0.45:
        post["text"] = rng.choice(SHORT) if rng.random() < 0.7 else LONG
    elif form < 0.6:
        post["element"] = rng.choice(ELEMENTS)
    elif form < 0.72:
        post["ssml"] = rng.choice(SSML)
    elif form < 0.84:
        post["text"] = "Le mot blablabla est prononcé autrement."
        post["spans"] = [{"start": 7, "length": 9, "ipa": "mɔ̃.daj.fɔ.nə.fɔ̃.ksjɔ.nə.paʀ.fɛ.tə.ˈmɑ̃"}]
    elif form < 0.92:
        post["text"] = "Ouvrez le fichier README maintenant"
        post["spans"] = [{"start": 18, "length": 6, "lang": "en"}]
    else:
        post["text"] = "la SNCF, vraiment !"
        post["spans"] = [{"start": 3, "length": 4, "spellOut": True}, {"start": 7, "length": 12, "punctuation": True}]
    if rng.random() < 0.3:
        post["queue"] = True
    priority = rng.choice(PRIORITIES)
    if priority:
        post["priority"] = priority
    if rng.random() < 0.3:
        post["rate"] = round(rng.uniform(0.4, 1.0), 2)
    if rng.random() < 0.2:
        post["lang"] = rng.choice(["fr", "en-US", "de"])
    return post


async def json_client(n, args, tally, stop_at, rng, pace):
    name = f"json{n}"
    conn = A11ydClient(args.socket, name)
    was_calm = False
    while time.monotonic() < stop_at:
        if pace.calm:
            try:
                if not was_calm:
                    # The user silences the burst's backlog (and any pause left over), as one does with
                    # a screen reader's stop key; then speech comes at an ordinary pace.
                    await conn.request({"op": "stop"} if n == 0 else {"op": "resume"})
                await asyncio.sleep(rng.uniform(4, 12))
                await calm_post(conn, name, tally, rng)
            except (ConnectionError, asyncio.TimeoutError) as error:
                tally.violations.append(f"{name}: {type(error).__name__} {error} (calm post)")
                conn.abort()
                conn = A11ydClient(args.socket, name)
            was_calm = True
            continue
        was_calm = False
        await asyncio.sleep(rng.expovariate(1 / args.think))
        r = rng.random()
        try:
            if r < 0.50:
                count = 1 if rng.random() < 0.8 else rng.randint(2, 4)
                posts = [random_post(rng) for _ in range(count)]
                tally.ops["post"] += count
                for reply in await conn.request(*posts):
                    if reply.get("ok"):
                        tally.accept(reply["utterance"], name)
                    else:
                        tally.errors[reply["error"]["code"]] += 1
            elif r < 0.62:
                at = rng.choice(["immediate", "word"])
                tally.ops["pause-" + at] += 1
                await conn.request({"op": "pause", "at": at})
            elif r < 0.76:
                tally.ops["resume"] += 1
                await conn.request({"op": "resume"})
            elif r < 0.765:
                tally.ops["stop"] += 1
                await conn.request({"op": "stop"})
            elif r < 0.84:
                # Then listen for a while, as a user does.
                tally.ops["status"] += 1
                await asyncio.sleep(rng.uniform(0.5, 3))
                await conn.request({"op": "status"})
            elif r < 0.87:
                # A pause/resume storm, 0-10 ms apart: a11yd must neither crash nor leave an item silent for good.
                tally.ops["storm"] += 1
                for _ in range(rng.randint(5, 20)):
                    conn.send_lines([{"op": "pause", "at": "immediate"}])
                    await asyncio.sleep(rng.uniform(0, 0.01))
                    conn.send_lines([{"op": "resume"}])
                    await asyncio.sleep(rng.uniform(0, 0.01))
                await conn.request({"op": "status"})
            elif r < 0.90:
                # Bad bytes: not JSON, invalid UTF-8, a bad field. Each gets an error; the connection lives.
                tally.ops["bad-line"] += 1
                bad = rng.choice([b"this is not json\n", b'{"op":"post","text":"caf\xe9"}\n',
                                  b'{"op":"post","text":"x","rate":7}\n', b'{"op":"fly"}\n', b"\xff\xfe\n"])
                conn.send_bytes(bad)
                await conn.request({"op": "status"})
            elif r < 0.91:
                tally.ops["huge-line"] += 1
                conn.send_bytes(b'{"op":"post","text":"' + b"a" * (1 << 20) + b'"}\n')
                await conn.request({"op": "status"}, timeout=30)
            elif r < 0.94:
                # Half a line, the rest later.
                tally.ops["half-line"] += 1
                post = dict(random_post(rng), id="half-%d" % rng.randrange(1 << 30))
                data = json.dumps(post, ensure_ascii=False).encode() + b"\n"
                cut = rng.randrange(1, len(data) - 1)
                future = conn.expect(post["id"])
                conn.send_bytes(data[:cut])
                await asyncio.sleep(rng.uniform(0, 0.3))
                conn.send_bytes(data[cut:])
                tally.ops["post"] += 1
                reply = await asyncio.wait_for(asyncio.wrap_future(future), 15)
                if reply.get("ok"):
                    tally.accept(reply["utterance"], name)
                else:
                    tally.errors[reply["error"]["code"]] += 1
            else:
                # Leave abruptly: after a post whose reply is read, sometimes with half a line or an
                # unread reply behind; then come back on a new connection.
                tally.ops["disconnect"] += 1
                reply = (await conn.request(random_post(rng)))[0]
                if reply.get("ok"):
                    tally.accept(reply["utterance"], name)
                what = rng.random()
                if what < 0.3:
                    conn.send_bytes(b'{"op":"post","text":"jamais fini')
                elif what < 0.6:
                    conn.send_bytes(json.dumps({"op": "stop"}).encode() + b"\n")
                await asyncio.sleep(0)
                conn.abort()
                conn = A11ydClient(args.socket, name)
        except (ConnectionError, asyncio.TimeoutError) as error:
            tally.violations.append(f"{name}: {type(error).__name__} {error} (op draw {r:.2f})")
            conn.abort()
            conn = A11ydClient(args.socket, name)
    conn.abort()


# --------------------------------------------------------------------------------------------- SSIP clients
async def ssip_client(n, args, tally, stop_at, rng, pace):
    name = f"ssip{n}"
    conn = await SSIPClient.open(args.ssip_socket, name)
    while time.monotonic() < stop_at:
        if pace.calm:
            # Orca's ordinary pace is the JSON clients' calm; here, just let go of a pause of ours.
            await asyncio.sleep(rng.uniform(2, 5))
            try:
                await conn.acommand("RESUME self")
            except (ConnectionError, asyncio.TimeoutError) as error:
                tally.violations.append(f"{name}: {type(error).__name__} {error} (calm resume)")
                conn.abort()
                conn = await SSIPClient.open(args.ssip_socket, name)
            continue
        await asyncio.sleep(rng.expovariate(1 / args.think))
        r = rng.random()
        try:
            if r < 0.55:
                tally.ops["ssip-speak"] += 1
                if rng.random() < 0.3:
                    await conn.acommand("SET SELF PRIORITY " + rng.choice(
                        ["important", "message", "text", "notification", "progress"]))
                reply = await conn.acommand("SPEAK")
                if not reply[-1].startswith("230"):
                    tally.violations.append(f"{name}: SPEAK answered {reply}")
                    continue
                text = rng.choice(SHORT + [LONG])
                lines = await conn.aask(text.encode() + b"\r\n.\r\n")
                if lines[-1].startswith("225"):
                    tally.accept(int(lines[0][4:]), name)
                    if rng.random() < 0.3:
                        await asyncio.sleep(rng.uniform(0.5, 3))
                elif not lines[-1].startswith("227"):
                    tally.violations.append(f"{name}: SPEAK data answered {lines}")
            elif r < 0.65:
                tally.ops["ssip-cancel"] += 1
                await conn.acommand(rng.choice(["CANCEL self", "STOP self", "CANCEL self", "STOP self", "CANCEL all"]))
            elif r < 0.75:
                tally.ops["ssip-pause"] += 1
                await conn.acommand(rng.choice(["PAUSE self", "PAUSE all"]))
            elif r < 0.88:
                tally.ops["ssip-resume"] += 1
                await conn.acommand(rng.choice(["RESUME self", "RESUME all"]))
            elif r < 0.92:
                tally.ops["ssip-garbage"] += 1
                await conn.acommand(rng.choice(["FLY AWAY", "SET SELF RATE 9000", "SET SELF PRIORITY urgent", "BLOCK END"]))
            else:
                # Leave: QUIT, or vanish (sometimes in the middle of a SPEAK, whose message is then dropped).
                tally.ops["ssip-disconnect"] += 1
                if rng.random() < 0.5:
                    await conn.acommand("QUIT")
                else:
                    if rng.random() < 0.5:
                        await conn.acommand("SPEAK")
                        conn.send("jamais terminé\r\n".encode())
                    conn.abort()
                conn = await SSIPClient.open(args.ssip_socket, name)
        except (ConnectionError, asyncio.TimeoutError) as error:
            tally.violations.append(f"{name}: {type(error).__name__} {error} (op draw {r:.2f}); "
                                    f"last lines: {list(conn.recent)}")
            conn.abort()
            conn = await SSIPClient.open(args.ssip_socket, name)
    conn.abort()


# --------------------------------------------------------------------------------------------- readers
async def auditor(args, tally, ready):
    """Subscribed to everything, reads as fast as it can (on its client's thread): the tally of finished per
    utterance, kept in the event loop's thread."""
    loop = asyncio.get_running_loop()

    def deliver(_, message):
        try:
            loop.call_soon_threadsafe(audit, tally, message)
        except RuntimeError:
            pass  # the loop is closed: the run is over

    conn = A11ydClient(args.socket, "auditor", on_event=deliver)
    conn.send_bytes(b'{"op":"subscribe","all":true,"id":"audit"}\n')
    ready.set()
    try:
        await asyncio.shield(asyncio.wrap_future(conn.ended))
    except asyncio.CancelledError:
        conn.abort()
        raise
    tally.violations.append("the auditor was disconnected: the tally is incomplete")


def audit(tally, message):
    u = message.get("utterance")
    if tally.finished[u]:
        tally.after_finished.append((u, message["event"]))
    if message["event"] == "finished":
        tally.finished[u] += 1
        tally.reasons[message.get("reason")] += 1
        if u == tally.final:
            tally.final_reason = message.get("reason")
        if u in tally.probes:
            tally.probes[u] = message.get("reason")
        if u in tally.calm:
            tally.calm_reasons[message.get("reason")] += 1


async def slow_reader(args, tally, stop_at, rng, never):
    """A subscriber that reads a line now and then (or never), reconnecting when the daemon drops it."""
    kind = "never" if never else "slow"
    while time.monotonic() < stop_at:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(args.socket)
        reader, writer = await asyncio.open_unix_connection(sock=sock, limit=1 << 16)
        writer.write(b'{"op":"subscribe","all":true}\n')
        tally.ops[f"{kind}-reader"] += 1
        life = time.monotonic() + rng.uniform(20, 90)
        dropped = False
        while time.monotonic() < min(life, stop_at):
            if never:
                await asyncio.sleep(0.5)
                continue
            await asyncio.sleep(rng.uniform(0.05, 0.5))
            try:
                line = await asyncio.wait_for(reader.readline(), 1)
            except asyncio.TimeoutError:
                continue
            if not line:
                dropped = True
                break
        if dropped:
            tally.ops[f"{kind}-reader-dropped"] += 1
        writer.transport.abort()


# --------------------------------------------------------------------------------------------- driver
class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.tally = Tally()
        self.work = tempfile.mkdtemp(prefix="a11yd-soak.")
        os.makedirs(os.path.join(self.work, "logs"))
        os.chmod(self.work, 0o700)
        self.run_dir = os.path.join(self.work, "run")
        os.makedirs(self.run_dir, mode=0o700)
        args.socket = os.path.join(self.run_dir, "a11yd", "socket")
        args.ssip_socket = os.path.join(self.run_dir, "speech-dispatcher", "speechd.sock")
        self.sound = None
        self.daemon = None
        self.restarts = collections.Counter()
        self.memory = {}
        self.memory_series = []  # every 30 s under load, for the report
        self.pace = Pace()
        self.probe_results = []  # the audio oracle's samples

    def start_daemon(self):
        env = dict(os.environ, XDG_RUNTIME_DIR=self.run_dir, HOME=os.path.join(self.work, "home"),
                   XDG_CONFIG_HOME=os.path.join(self.work, "config"), PULSE_SERVER="unix:" + self.sound.socket,
                   A11YD_NO_AUTOSPAWN="1")
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        log_file = open(os.path.join(self.work, "logs", "a11yd.log"), "ab")
        self.daemon = subprocess.Popen([os.path.join(self.args.bin_dir, "a11yd"), "--socket", self.args.socket,
                                        "--ssip-socket", self.args.ssip_socket], env=env,
                                       stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file)
        deadline = time.monotonic() + 20
        while not (accepts(self.args.socket) and accepts(self.args.ssip_socket)):
            if self.daemon.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("a11yd did not start; see logs/a11yd.log")
            time.sleep(0.02)

    def alive(self):
        if self.daemon.poll() is not None:
            self.tally.violations.append(f"a11yd died (exit status {self.daemon.returncode})")
            return False
        return True

    async def sound_faults(self, stop_at, switch_at):
        """Kills the sound server every 10-40 s; down 0.05-1.5 s, now and then longer than the 3 s grace.
        At switch_at, PipeWire's pulse server takes over the socket path."""
        rng = random.Random(self.rng.random())
        while True:
            wait = rng.uniform(10, 40)
            if time.monotonic() + wait >= stop_at:
                break
            await asyncio.sleep(wait)
            switching = switch_at is not None and time.monotonic() >= switch_at and self.sound.kind == "pulseaudio"
            down = rng.uniform(3.5, 5) if rng.random() < 0.15 else rng.uniform(0.05, 1.5)
            self.sound.kill()
            await asyncio.sleep(down)
            loop = asyncio.get_running_loop()
            if switching:
                self.sound.close()
                self.sound = await loop.run_in_executor(None, SoundServer, self.work, "pipewire")
                log("PipeWire's pulse server takes over")
            try:
                await loop.run_in_executor(None, self.sound.start)
            except RuntimeError as error:
                # The sound server itself failed to come up (not a11yd's doing): counted, tried once more.
                log(f"sound server start failed ({error}); once more")
                self.restarts["sound server failed to start, retried"] += 1
                self.sound.kill()
                await loop.run_in_executor(None, self.sound.start)
            self.restarts[self.sound.kind] += 1
            if down > 3:
                self.restarts["longer than the grace"] += 1

    async def load(self, seconds, switch_at=None, faults=True):
        args, rng = self.args, self.rng
        stop_at = time.monotonic() + seconds
        tasks = [asyncio.ensure_future(self.pace.alternate(stop_at, random.Random(rng.random())))]
        tasks += [asyncio.ensure_future(json_client(n, args, self.tally, stop_at, random.Random(rng.random()), self.pace))
                  for n in range(args.json_clients)]
        tasks += [asyncio.ensure_future(ssip_client(n, args, self.tally, stop_at, random.Random(rng.random()), self.pace))
                  for n in range(args.ssip_clients)]
        tasks += [asyncio.ensure_future(slow_reader(args, self.tally, stop_at, random.Random(rng.random()), never))
                  for never in (False, True)]
        if faults:
            tasks.append(asyncio.ensure_future(self.sound_faults(stop_at, switch_at)))
        watchdog = asyncio.ensure_future(self.watch(stop_at))
        try:
            await asyncio.gather(*tasks, watchdog)
        finally:
            for task in tasks:
                task.cancel()

    async def watch(self, stop_at):
        last = time.monotonic()
        while time.monotonic() < stop_at:
            await asyncio.sleep(1)
            if not self.alive():
                raise RuntimeError("a11yd died")
            if time.monotonic() - last > 30:
                last = time.monotonic()
                self.memory_series.append(memory(self.daemon.pid))
                log(f"{int(stop_at - time.monotonic())} s to go: {sum(self.tally.ops.values())} operations, "
                    f"{len(self.tally.accepted)} posts accepted, {sum(self.tally.finished.values())} finished")

    async def quiesce(self, timeout=60):
        """Resume and stop, then wait until every accepted post has finished; idle for a moment."""
        conn = A11ydClient(self.args.socket, "quiesce")
        await conn.request({"op": "resume"}, {"op": "stop"})
        deadline = time.monotonic() + timeout
        while True:
            missing = [u for u in self.tally.accepted if not self.tally.finished[u]]
            status = (await conn.request({"op": "status"}))[0]
            if not missing and status.get("state") == "idle":
                break
            if time.monotonic() > deadline:
                self.tally.violations.append(
                    f"not quiet {timeout} s after stop: state {status.get('state')}, "
                    f"{len(missing)} accepted posts without finished: {missing[:20]}")
                break
            await conn.request({"op": "resume"}, {"op": "stop"})
            await asyncio.sleep(0.2)
        conn.abort()
        await asyncio.sleep(2)

    async def heard_whole(self):
        """The audio oracle on a sample item (docs/reliability.md): between two stretches of load, once quiet,
        a text is heard unpaused, then again paused at a random boundary and moment and resumed 0.6 s later;
        the second must be told `spoken` and voice as long as the first (within 5 %), silent while paused."""
        rng = random.Random(self.rng.random())
        text, boundary = rng.choice(PROBES), rng.choice(["word", "immediate"])
        env = dict(XDG_RUNTIME_DIR=self.sound.run, HOME=os.path.join(self.work, "snd-home"), **self.sound.client_env)
        conn = A11ydClient(self.args.socket, "probe")
        # A sound server restarted as the load stopped may still be coming up, and a11yd reconnects to it
        # within a second or two: a short item told `spoken` first means the path to the sink is back.
        await asyncio.sleep(2)
        if not self.sound.procs:
            self.sound.start()
        warm = (await conn.request({"op": "post", "text": "un", "lang": "fr"}))[0]
        if warm.get("ok"):
            self.tally.accept(warm["utterance"], "probe")
            self.tally.probes[warm["utterance"]] = None
            deadline = time.monotonic() + 15
            while self.tally.probes[warm["utterance"]] is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        heard = []
        for paused in (False, True):
            recorder = Recorder(RECORDER_MS, env=env, log_path=os.path.join(self.work, "logs", "parec.log"))
            await asyncio.sleep(0.5)
            reply = (await conn.request({"op": "post", "text": text, "lang": "fr"}))[0]
            if not reply.get("ok"):
                recorder.stop()
                self.tally.violations.append(f"a probe was refused: {reply}")
                break
            u = reply["utterance"]
            self.tally.accept(u, "probe")
            self.tally.probes[u] = None
            window = None
            if paused:
                await asyncio.sleep(rng.uniform(0.05, heard[0] * 0.8))
                await conn.request({"op": "pause", "at": boundary})
                # In force once the item says so (a word pause lets its word end first), or it ended.
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and not any(
                        m.get("utterance") == u and m["event"] in ("paused", "finished") for _, m in conn.events):
                    await asyncio.sleep(0.01)
                # The pause on the recording's own count (parec starts a while after it is spawned, later
                # under load), with 0.1 s off both ends: what was mixed before the pause and is still on
                # its way, and the resume's sound.
                margin = int(0.1 * 48000)
                paused_from = recorder.count() + margin
                await asyncio.sleep(0.6)
                window = (paused_from, recorder.count() - margin)
                await conn.request({"op": "resume"})
            deadline = time.monotonic() + 30
            while self.tally.probes[u] is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            samples = recorder.stop()
            heard.append(voiced_seconds(samples))
            if len(samples) < 48000 * 0.5:
                # The recorder itself got nothing (parec could not record): nothing to judge.
                self.probe_results.append({"text": text[:30], "recorder failed": f"{len(samples)} samples"})
                log(f"heard-whole probe skipped: the recorder got {len(samples)} samples")
                break
            if not paused:
                if self.tally.probes[u] == "spoken" and heard[0] < 0.2:
                    self.tally.violations.append(f"a probe was told spoken and not heard: {text[:30]}, "
                                                 f"{len(samples)} samples, peak {max(map(abs, samples)):.4f}")
                continue
            quiet = rms(samples[window[0]:window[1]]) if window else 0
            result = {"text": text[:30], "pause": boundary, "reason": self.tally.probes[u],
                      "voiced": round(heard[1], 2), "unpaused": round(heard[0], 2), "rms while paused": round(quiet, 4)}
            self.probe_results.append(result)
            log(f"heard-whole probe: {result}")
            if result["reason"] != "spoken" or abs(heard[1] - heard[0]) > 0.05 * heard[0] or quiet >= SILENCE:
                self.tally.violations.append(f"a probe was not heard whole: {result}")
        conn.abort()

    async def final_post(self):
        """A post after everything: spoken, and heard on the monitor."""
        env = dict(XDG_RUNTIME_DIR=self.sound.run, HOME=os.path.join(self.work, "snd-home"), **self.sound.client_env)
        recorder = Recorder(RECORDER_MS, env=env, log_path=os.path.join(self.work, "logs", "parec.log"))
        await asyncio.sleep(0.5)
        conn = A11ydClient(self.args.socket, "final")
        reply = (await conn.request({"op": "post", "text": "le test d'endurance est terminé", "lang": "fr"}))[0]
        reason = None
        if reply.get("ok"):
            u = reply["utterance"]
            self.tally.accept(u, "final")
            self.tally.final = u
            deadline = time.monotonic() + 20
            while not self.tally.finished[u] and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            reason = self.tally.final_reason
        await asyncio.sleep(0.3)
        samples = recorder.stop()
        conn.abort()
        return reply, reason, rms(samples), len(samples) / 48000

    async def main(self):
        args = self.args
        log(f"seed {args.seed}, {args.seconds} s ({args.pipewire_share:.0%} on PipeWire), "
            f"{args.json_clients} JSON + {args.ssip_clients} SSIP clients, work folder {self.work}")
        self.sound = SoundServer(self.work, "pulseaudio")
        self.sound.start()
        self.start_daemon()
        ready = asyncio.Event()
        audit = asyncio.ensure_future(auditor(args, self.tally, ready))
        await ready.wait()
        await asyncio.sleep(0.2)
        started = time.monotonic()

        # Warm-up: every kind of operation, sound-server kills included, has happened at least once.
        warmup = min(90.0, args.seconds * 0.15)
        await self.load(warmup)
        await self.quiesce()
        self.memory["warm-up"] = memory(self.daemon.pid)
        log(f"after warm-up: {self.memory['warm-up']}")

        rest = args.seconds - (time.monotonic() - started)
        end_at = time.monotonic() + rest
        switch_at = time.monotonic() + rest * (1 - args.pipewire_share) if args.pipewire_share > 0 else None
        try:
            # Stretches of load, each followed, once quiet, by the audio oracle on a sample item.
            while time.monotonic() < end_at - 1:
                await self.load(min(args.probe_every, end_at - time.monotonic()), switch_at=switch_at)
                if time.monotonic() >= end_at - 1 or not self.alive():
                    break
                if not self.sound.procs:
                    self.sound.start()
                await self.quiesce()
                await self.heard_whole()
        except Exception as error:
            self.tally.violations.append(f"the load stopped early: {type(error).__name__} {error}")
        if self.alive():
            if not self.sound.procs:
                self.sound.start()
            await self.quiesce()
            reply, reason, heard, seconds = await self.final_post()
            self.final = {"reply": reply.get("ok"), "reason": reason, "rms": round(heard, 4),
                          "seconds recorded": round(seconds, 2)}
            if not (reply.get("ok") and reason == "spoken" and heard > 0.02):
                self.tally.violations.append(f"the final post was not heard: {self.final}")
            await self.quiesce()
            self.memory["end"] = memory(self.daemon.pid)
            log(f"at the end: {self.memory['end']}")
            self.alive()
        else:
            self.final = None
        audit.cancel()
        self.elapsed = time.monotonic() - started
        return self.report()

    def report(self):
        t, args = self.tally, self.args
        once = sum(1 for u in t.accepted if t.finished[u] == 1)
        none = [u for u in t.accepted if t.finished[u] == 0]
        twice = [u for u, c in t.finished.items() if c > 1]
        unknown = [u for u in t.finished if u not in t.accepted]
        if none:
            t.violations.append(f"{len(none)} accepted posts without finished: {none[:20]}")
        if twice:
            t.violations.append(f"{len(twice)} utterances with more than one finished: {twice[:20]}")
        if t.after_finished:
            t.violations.append(f"{len(t.after_finished)} events after their utterance's finished: "
                                f"{t.after_finished[:20]}")
        growth = None
        if "end" in self.memory:
            w, e = self.memory["warm-up"], self.memory["end"]
            growth = {k: e[k] - w[k] for k in ("Rss", "Pss", "RssAnon")}
            # Resident memory is the criterion. PSS is reported, not judged: its file-backed part is shared
            # out among every process mapping the same libraries, so it moves when other processes come and go.
            if max(growth["Rss"], growth["RssAnon"]) > args.memory_slack_kib:
                t.violations.append(f"resident memory grew past {args.memory_slack_kib} KiB: {growth}")
        result = {
            "seed": args.seed, "seconds": round(self.elapsed, 1), "operations": sum(t.ops.values()),
            "ops": dict(sorted(t.ops.items())), "accepted": len(t.accepted), "finished once": once,
            "finished for posts whose reply was never read": len(unknown),
            "spells": dict(self.pace.spells), "reasons": dict(t.reasons), "reasons in calm spells": dict(t.calm_reasons), "error replies": dict(t.errors), "sound-server restarts": dict(self.restarts),
            "final post": self.final, "heard-whole probes": self.probe_results, "memory KiB": self.memory, "memory growth KiB": growth,
            "RssAnon under load, every 30 s": [m["RssAnon"] for m in self.memory_series],
            "violations": t.violations,
        }
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 1 if t.violations else 0

    def close(self):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(10)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
        if self.sound:
            self.sound.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", default=os.path.join(os.path.dirname(__file__), "..", ".build", "release"))
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", 600)))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", 0)) or random.randrange(1, 1 << 31))
    parser.add_argument("--json-clients", type=int, default=5)
    parser.add_argument("--ssip-clients", type=int, default=2)
    parser.add_argument("--think", type=float, default=0.2, help="mean seconds between a client's operations")
    parser.add_argument("--pipewire-share", type=float, default=float(os.environ.get("SOAK_PIPEWIRE_SHARE", 0.3)),
                        help="last share of the run on PipeWire's pulse server (0: PulseAudio only)")
    parser.add_argument("--memory-slack-kib", type=int, default=2048)
    parser.add_argument("--probe-every", type=float, default=120,
                        help="seconds of load between two heard-whole probes (the audio oracle on a sample item)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs) even on success")
    args = parser.parse_args()
    for tool in ["pulseaudio", "parec", "pactl"] + (["pipewire", "wireplumber", "pipewire-pulse", "dbus-daemon"]
                                                    if args.pipewire_share > 0 else []):
        if not shutil.which(tool):
            sys.exit(f"soak: {tool} is missing (scripts/install-deps.sh --test)")
    soak = Soak(args)
    status = 1
    try:
        status = asyncio.run(soak.main())
    finally:
        soak.close()
        if status == 0 and not args.keep:
            shutil.rmtree(soak.work, ignore_errors=True)
        else:
            log(f"logs kept in {soak.work}/logs")
    log(f"seed {args.seed}: {'passed' if status == 0 else 'FAILED'}")
    sys.exit(status)


if __name__ == "__main__":
    main()
