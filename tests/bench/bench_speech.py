"""P7: an event -> the start of its announcement's audio, through the bridge's speech queue.

The real espeak-ng synthesises; `play` is the logging stand-in (tests/support/speech.py; this machine has
no sound card), which notes when the first audio after the WAV header reaches it (a tone: when it starts).
Event: a Ringo piece put on a cell it may not reach, which the rules refuse aloud. Each round measures
    cold      the refusal never said before (the synthesis cache emptied first): espeak-ng -> queue -> play;
    repeated  the same refusal again: played from the cache, no espeak-ng;
and, in the same round, the baselines started by hand with no session, queue or thread:
    bare espeak-ng --stdout TEXT | play, and bare `play FILE` of the same WAV (starting a player at all).
Then the cache's hit rate over seeded games of Medieval Pong and Ringo (what a table repeats).
"""

import os
import random
import shutil
import subprocess
import tempfile
import time
from collections import OrderedDict

import benchutil
from battlement.sound.speaker import Sound
from battlement.sound.speechcache import ENTRIES
from battlement.table.journal import Journal
from battlement.table.maps import for_game
from battlement.table.session import Session
from support import speech

ROUNDS = 30
FIRST = 44 + 512  # WAV header, then the first 256 samples of voice
OFF, REFUSED = {"t": "cell", "cell": "b5", "occupied": False}, {"t": "cell", "cell": "b3", "occupied": True}
BACK = ({"t": "cell", "cell": "b3", "occupied": False}, {"t": "cell", "cell": "b5", "occupied": True})


def first_after(log, t0):
    """When the first sound after t0 began: the event's tone or its words, whichever the queue played first."""
    return min(r["first"] for r in speech.records(log) if r["prog"] == "play" and r["start"] >= t0)


def refusal(s, sound, log, cold):
    s.apply(OFF, "bench")
    sound.wait_idle(30)
    if cold:
        sound.cache.clear()
    t0 = time.time()
    s.apply(REFUSED, "bench")  # refused aloud
    sound.wait_idle(30)
    took = first_after(log, t0) - t0
    for inp in BACK:
        s.apply(inp, "bench")
    sound.wait_idle(30)
    return took


def bare(log, argv, feed=None):
    t0 = time.time()
    if feed:
        e = subprocess.Popen(feed, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p = subprocess.Popen(argv, stdin=e.stdout, stderr=subprocess.DEVNULL)
        e.stdout.close()
        p.wait(30)
        e.wait(30)
    else:
        subprocess.run(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, check=False)
    return first_after(log, t0) - t0


def game_said(game, seed):
    """What one seeded game (random legal moves to the end) sends to the speaker, in order."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as d:
        s = Session(for_game(game), Journal(os.path.join(d, "j.sqlite")), Sound("null"))
        said = []
        s.listeners.append(lambda _s, fx: said.extend(e["text"] for e in fx if e["t"] == "say" and e.get("to") is None))
        steps = 0
        while s.match.legal() and steps < 5000:
            s.apply(rng.choice(s.match.legal()), "bench")
            steps += 1
    return said


def lru_hits(said):
    """How many of these announcements an LRU of ENTRIES phrases already holds (voice and speed fixed)."""
    lru, hits = OrderedDict(), 0
    for t in said:
        if t in lru:
            hits += 1
            lru.move_to_end(t)
        else:
            lru[t] = True
            if len(lru) > ENTRIES:
                lru.popitem(last=False)
    return hits


def line(name, xs, base, base_name, base2=None, base2_name=""):
    p50, p95 = benchutil.ms(benchutil.pct(xs, 0.5)), benchutil.ms(benchutil.pct(xs, 0.95))
    b50, b95 = benchutil.ms(benchutil.pct(base, 0.5)), benchutil.ms(benchutil.pct(base, 0.95))
    extra = ""
    if base2:
        c50, c95 = benchutil.ms(benchutil.pct(base2, 0.5)), benchutil.ms(benchutil.pct(base2, 0.95))
        extra = "; %s p50 %.1f p95 %.1f" % (base2_name, c50, c95)
    print("P7 speech %-9s event -> start of audio  p50 %.1f ms p95 %.1f ms  (%s p50 %.1f p95 %.1f, p95 %+.1f ms%s; "
          "target p95 <= 150 ms%s)" % (name, p50, p95, base_name, b50, b95, p95 - b95, extra,
                                        "" if p95 <= 150 else " OVER TARGET"), flush=True)


def main():
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "speech.log")
        env = speech.environ(d, log, programs=("play",), STANDIN_FIRST_BYTES=FIRST)
        env["PATH"] = env["PATH"] + os.pathsep + os.environ.get("PATH", "")  # the real espeak-ng
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            sound = Sound("speaker")
            s = Session(for_game("ringo"), Journal(os.path.join(d, "j.sqlite")), sound)
            said = []
            s.listeners.append(lambda _s, fx: said.extend(e["text"] for e in fx if e["t"] == "say"))
            cold, repeated, bare_espeak, bare_play = [], [], [], []
            wav = os.path.join(d, "bare.wav")
            for _ in range(ROUNDS):
                cold.append(refusal(s, sound, log, cold=True))
                repeated.append(refusal(s, sound, log, cold=False))
                if not os.path.exists(wav):
                    shutil.copy(sound.cache.path(sound.key(said[-1])), wav)
                bare_espeak.append(bare(log, [sound.play, "-q", "-t", "wav", "-"],
                                        feed=[sound.espeak, "-v", "en", "-s", "160", "--stdout", "--", said[-1]]))
                bare_play.append(bare(log, [sound.play, "-q", wav, "vol", "1.00"]))
            counters = {k: v for k, v in sound.counters.items() if v}
            cache = (sound.cache.hits, sound.cache.misses)
            sound.close()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    line("cold", cold, bare_espeak, "bare espeak-ng | play")
    line("repeated", repeated, bare_espeak, "bare espeak-ng | play", bare_play, "bare play FILE")
    print("   [%d rounds each; cache hits/misses %d/%d; counters %s]" % (ROUNDS, cache[0], cache[1], counters))
    for game in ("medieval-pong", "ringo"):
        games = [game_said(game, seed) for seed in (1, 2, 3)]
        for name, said in (("one game", games[0]), ("three games", [t for g in games for t in g])):
            hits = lru_hits(said)
            print("P7 cache  %-13s %-11s %4d announcements, %3d different, %4d played from the cache "
                  "(hit rate %.0f%%; without the cache 0%%)"
                  % (game, name, len(said), len(set(said)), hits, 100.0 * hits / max(1, len(said))), flush=True)


if __name__ == "__main__":
    main()
