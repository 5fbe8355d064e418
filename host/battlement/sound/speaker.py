"""Sound: spoken announcements (espeak-ng) and short cue tones (sox), one at a time.

Modes: "speaker" plays on the sound card (espeak-ng's audio piped into sox's `play`, which
says when there is no sound device; espeak-ng's own output stays silent about it), "file"
writes numbered WAV files into a folder (a table with no sound card, and the tests), "null"
is silent by choice and only counts. "auto" is speaker when this machine can play, else null.

Everything goes through one queue and one player thread, so two announcements never talk
over each other. Each item has a priority:
    WINNER  the end of a game: goes before everything waiting, and turn calls waiting are dropped;
    NORMAL  hits, falls, refusals, in the order they happened;
    TURN    "Red, your turn": only the newest one matters, so a new one replaces one still waiting.
and the moment of the game it speaks of (battlement.table.calls.Moment): an item whose moment is over
when its turn to play comes (its turn has passed, or its step was undone) is dropped, counted "stale".
The player is a thread (a blocking wait on a child process), not a coroutine: the sessions call
say() from plain code, with or without an event loop. "said" counts what actually played.

On a speaker, espeak-ng's audio passes through the player thread on its way to `play` (each chunk as soon
as it comes), so the WAV of each phrase is kept (speechcache.py): a phrase said before is played from its
file, without starting espeak-ng at all. Volume is applied by `play`, so one file serves every volume.
"""

from __future__ import annotations

import heapq
import logging
import os
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Callable

from battlement.sound.speechcache import BYTES, ENTRIES, SpeechCache

# The priorities are the table's (a rules step's calls); the speaker only keeps to them.
from battlement.table.calls import NORMAL, TURN, WINNER, Moment

log = logging.getLogger("battlement.sound")

MAX_WAITING = 8  # beyond this the oldest, least urgent waiting item is dropped: a table lives in the present
PLAY_TIMEOUT = 30.0  # seconds: a player that hangs longer is killed and counted as failed
# cue -> (frequency Hz, seconds): a tone a player learns to recognise
TONES = {
    "ball.in": (880, 0.15), "tower.destroyed": (220, 0.4), "crown.exposed": (1320, 0.3),
    "move.illegal": (150, 0.3), "capture": (660, 0.2), "fell": (440, 0.2), "game.over": (523, 0.6),
}


def can_play() -> bool:
    """True when `play` (sox) finds a sound device: a silent tone of 10 ms."""
    play = shutil.which("play")
    if not play:
        return False
    try:
        r = subprocess.run([play, "-q", "-n", "synth", "0.01", "sine", "440", "vol", "0"],
                           check=False, capture_output=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def _name(p: subprocess.Popen) -> str:
    return os.path.basename(str(p.args[0]))  # type: ignore[index]


class Sound:
    def __init__(self, mode: str = "null", folder: str | None = None, voice: str = "en", volume: int = 100,
                 speed: int = 160, cache_entries: int = ENTRIES, cache_bytes: int = BYTES):
        if mode not in ("null", "file", "speaker", "auto"):
            raise ValueError("sound mode is auto, null, file or speaker")
        self.asked = mode
        if mode == "auto":
            mode = "speaker" if shutil.which("espeak-ng") and can_play() else "null"
        self.mode = mode
        self.folder = folder
        self.voice, self.speed = voice, speed
        self.volume = max(0, min(200, int(volume)))
        self.muted = False
        self.espeak = shutil.which("espeak-ng")
        self.sox = shutil.which("sox")
        self.play = shutil.which("play")
        self.counters = {"said": 0, "tones": 0, "failed": 0, "dropped": 0, "replaced": 0, "stale": 0, "muted": 0,
                         "silent": 0}
        self.problem = ""  # the last failure, in words, until something plays again
        self.n = 0
        self.files: list[str] = []
        self.cache = SpeechCache(cache_entries, cache_bytes)
        self.on_change: Callable[[], object] | None = None  # called from the player thread after each sound or failure
        self.started: Callable[[str, float], None] | None = None  # hook(text, t) when an item starts playing
        self._waiting: list[tuple[int, int, str, str, Moment | None]] = []  # (priority, order, kind, text or cue, moment)
        self._seq = 0
        self._lock = threading.Condition()
        self._playing = False
        self._closed = False
        self._thread: threading.Thread | None = None
        if mode == "file":
            os.makedirs(folder or ".", exist_ok=True)
        missing = self._missing()
        if missing:
            self._fail(missing)

    def _missing(self) -> str:
        if self.mode == "null":
            return ""
        if not self.espeak:
            return "espeak-ng is not installed, so nothing is said (Debian: apt-get install espeak-ng)"
        if not self.sox or (self.mode == "speaker" and not self.play):
            return "sox is not installed, so nothing is played (Debian: apt-get install sox)"
        return ""

    # --- what the sessions call ------------------------------------------------------

    def say(self, text: str, priority: int = NORMAL, moment: Moment | None = None) -> None:
        if self.mode == "null":
            self.counters["silent"] += 1
            return
        if not self.espeak:
            self.counters["failed"] += 1
            return
        self._put(priority, "say", text, moment)

    def cue(self, name: str, priority: int = NORMAL, moment: Moment | None = None) -> None:
        if name not in TONES:
            return
        if self.mode == "null":
            self.counters["silent"] += 1
            return
        if not self.sox:
            self.counters["failed"] += 1
            return
        self._put(priority, "tone", name, moment)

    def set(self, muted: bool | None = None, volume: int | None = None) -> None:
        """The host page's mute and volume (0-200); muting also drops what is waiting."""
        with self._lock:
            if volume is not None:
                self.volume = max(0, min(200, int(volume)))
            if muted is not None:
                self.muted = bool(muted)
                if self.muted:
                    self.counters["muted"] += len(self._waiting)
                    self._waiting.clear()
        log.info("sound %s, volume %d", "muted" if self.muted else "on", self.volume)

    def describe(self) -> str:
        """The start-up line about the sound, in words."""
        if self.mode == "null":
            return ("off: no sound device found (--sound file writes the announcements as WAV files)"
                    if self.asked == "auto" else "off (--sound null)")
        return ("speaker" if self.mode == "speaker" else "WAV files in %s" % self.folder) + (
            "; problem: " + self.problem if self.problem else "")

    def status(self) -> dict:
        return {"mode": self.mode, "muted": self.muted, "volume": self.volume, "problem": self.problem,
                "waiting": len(self._waiting), "playing": self._playing}

    # --- the queue ---------------------------------------------------------------------

    def _put(self, priority: int, kind: str, what: str, moment: Moment | None = None) -> None:
        with self._lock:
            if self._closed:
                return
            if self.muted:
                self.counters["muted"] += 1
                return
            if priority == TURN or priority == WINNER:
                # an older turn call still waiting is stale: the newest one (or the winner) says what is true now
                before = len(self._waiting)
                self._waiting = [w for w in self._waiting if w[0] != TURN]
                self.counters["replaced"] += before - len(self._waiting)
                heapq.heapify(self._waiting)
            if len(self._waiting) >= MAX_WAITING:  # what is no longer true goes first
                fresh = [w for w in self._waiting if w[4] is None or not w[4].stale(w[0])]
                self.counters["stale"] += len(self._waiting) - len(fresh)
                self._waiting = fresh
                heapq.heapify(self._waiting)
            if len(self._waiting) >= MAX_WAITING:
                least = max(w[0] for w in self._waiting)  # the oldest of the least urgent goes
                worst = min(w for w in self._waiting if w[0] == least)
                self._waiting.remove(worst)
                heapq.heapify(self._waiting)
                self.counters["dropped"] += 1
            self._seq += 1
            heapq.heappush(self._waiting, (priority, self._seq, kind, what, moment))
            if self._thread is None:
                self._thread = threading.Thread(target=self._player, name="sound", daemon=True)
                self._thread.start()
            self._lock.notify()

    def _player(self) -> None:
        while True:
            with self._lock:
                while not self._waiting and not self._closed:
                    self._lock.wait()
                if not self._waiting:
                    return
                prio, _seq, kind, what, moment = heapq.heappop(self._waiting)
                if moment is not None and moment.stale(prio):  # said now, it would no longer be true
                    self.counters["stale"] += 1
                    self._lock.notify_all()
                    continue
                self._playing = True
            try:
                self._play(kind, what)
            except Exception as e:  # noqa: BLE001 -- a sound failure must never stop the player
                self._fail("%s: %s" % (type(e).__name__, e))
            finally:
                with self._lock:
                    self._playing = False
                    self._lock.notify_all()

    def _target(self, stem: str) -> str:
        self.n += 1
        path = os.path.join(self.folder or ".", "%04d-%s.wav" % (self.n, stem))
        self.files.append(path)
        return path

    def _play(self, kind: str, what: str) -> None:
        gain = "%.2f" % (self.volume / 100.0)
        target = ""
        cached: tuple | None = None
        if kind == "say":
            if self.mode == "file":
                speak = [self.espeak or "espeak-ng", "-v", self.voice, "-a", str(self.volume), "-s", str(self.speed)]
                target = self._target("say")
                procs = [self._spawn(speak + ["-w", target, "--", what])]
            else:
                key = self.key(what)
                wav = self.cache.get(key)
                if not wav:
                    return self._speak(what, key, gain)
                cached = key
                procs = [self._spawn([self.play or "play", "-q", wav, "vol", gain])]
        else:
            freq, secs = TONES[what]
            tone = ["synth", str(secs), "sine", str(freq), "vol", "%.2f" % (self.volume / 200.0)]
            if self.mode == "file":
                target = self._target(what.replace(".", "-"))
                procs = [self._spawn([self.sox or "sox", "-q", "-n", target] + tone)]
            else:
                procs = [self._spawn([self.play or "play", "-q", "-n"] + tone)]
        if self.started:
            self.started(what, time.perf_counter())
        self._finish(kind, procs, target=target, cached=cached)

    def key(self, text: str) -> tuple:
        """What espeak-ng's audio for text depends on (volume is applied when playing)."""
        return (self.voice, self.speed, text)

    def _speak(self, what: str, key: tuple, gain: str) -> None:
        """A phrase not in the cache: espeak-ng -> this thread -> `play`, each chunk passed on as it comes,
        and the whole kept for next time when both ended well."""
        speak = [self.espeak or "espeak-ng", "-v", self.voice, "-a", "100", "-s", str(self.speed),
                 "--stdout", "--", what]
        first = self._spawn(speak, stdout=subprocess.PIPE)
        player = self._spawn([self.play or "play", "-q", "-t", "wav", "-", "vol", gain], stdin=subprocess.PIPE)
        if self.started:
            self.started(what, time.perf_counter())
        wav, late = _relay(first, player, time.monotonic() + PLAY_TIMEOUT)
        if late:
            for p in (first, player):
                if p.poll() is None:
                    p.kill()
        if self._finish("say", [first, player], late=late) and wav:
            self.cache.put(key, wav)

    def _finish(self, kind: str, procs: list, target: str = "", cached: tuple | None = None, late: bool = False) -> bool:
        """Wait for the processes of one item; count it as played, or say in words why not."""
        bad, said_why = ("%s did not finish in %d s" % (_name(procs[0]), PLAY_TIMEOUT) if late else ""), ""
        for p in procs:
            try:
                _out, err = p.communicate(timeout=PLAY_TIMEOUT)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                bad = bad or "%s did not finish in %d s" % (_name(p), PLAY_TIMEOUT)
                continue
            lines = [ln for ln in (err or b"").decode("utf-8", "replace").splitlines()
                     if ln.strip() and not ln.startswith("ALSA lib")]
            said_why = said_why or (lines[-1].strip() if lines else "")
            if p.returncode != 0 and not bad:
                why = lines[-1].strip() if lines else "exit status %d" % p.returncode
                if "no default audio device" in why or "cannot open" in why.lower():
                    why = "no sound device (%s); try --sound file, or check the speaker" % why
                bad = "%s failed: %s" % (_name(p), why)
        if not bad and target and not (os.path.exists(target) and os.path.getsize(target) > 44):
            # espeak-ng exits 0 even when it cannot write its file: the file itself is the proof
            bad = "could not write %s%s" % (target, ": " + said_why if said_why else "")
        if bad:
            if cached:
                self.cache.drop(cached)  # the next time it is made again
            self._fail(bad)
            return False
        self.counters["said" if kind == "say" else "tones"] += 1
        if self.problem:
            self.problem = ""
            log.info("sound works again")
        self._tell()  # the host page's counts follow what actually played
        return True

    def _spawn(self, argv: list[str], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL) -> subprocess.Popen:
        return subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)

    def _fail(self, text: str) -> None:
        self.counters["failed"] += 1
        if text != self.problem:
            log.error("sound: %s", text)
            self.problem = text
            self._tell()

    def _tell(self) -> None:
        if self.on_change:
            try:
                self.on_change()
            except Exception:
                log.exception("sound: telling the pages failed")

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until nothing is waiting or playing (tests, and a clean stop)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._waiting or self._playing:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self, wait: float = 5.0) -> None:
        """Finish what is playing and waiting (up to `wait` seconds), then stop the player."""
        self.wait_idle(wait)
        with self._lock:
            self._closed = True
            self.counters["dropped"] += len(self._waiting)
            self._waiting.clear()
            self._lock.notify_all()
        if self._thread:
            self._thread.join(wait)
        self.cache.close()


def _relay(src: subprocess.Popen, dst: subprocess.Popen, deadline: float) -> tuple[bytes, bool]:
    """Pass src's stdout to dst's stdin as it comes (the player starts on the first chunk), keeping a copy.
    Returns (all the bytes, whether the deadline passed). A player that died early stops the passing on,
    never the reading: espeak-ng is not left blocked on a full pipe."""
    out, dst_in = src.stdout, dst.stdin
    src.stdout = dst.stdin = None  # read and closed here: communicate() must not touch them
    assert out is not None and dst_in is not None
    in_fd, out_fd = out.fileno(), dst_in.fileno()
    os.set_blocking(out_fd, False)
    chunks: list[bytes] = []
    pending, passing, reading = b"", True, True
    try:
        while reading or (pending and passing):
            left = deadline - time.monotonic()
            if left <= 0:
                return b"".join(chunks), True
            r, w, _x = select.select([in_fd] if reading else [], [out_fd] if pending and passing else [], [], left)
            if r:
                data = os.read(in_fd, 65536)
                if not data:
                    reading = False
                else:
                    chunks.append(data)
                    pending += data if passing else b""
            if pending and passing and (w or r):
                try:
                    pending = pending[os.write(out_fd, pending):]
                except BlockingIOError:
                    pass
                except (BrokenPipeError, OSError):
                    passing, pending = False, b""
        return b"".join(chunks), False
    finally:
        out.close()
        try:
            dst_in.close()
        except OSError:
            pass
