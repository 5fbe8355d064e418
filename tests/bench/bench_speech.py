"""P7: an event -> the start of its announcement's audio, through the bridge's speech queue.

The real espeak-ng synthesises; `play` is the logging stand-in (tests/support/speech.py; this machine has
no sound card), which notes when the first audio after the WAV header reaches it (a tone: when it starts). Event: a Ringo piece
put on a cell it may not reach, which the rules refuse aloud. Baseline in the same run: a bare
`espeak-ng --stdout TEXT | play` started by hand, no session, queue or thread. Rounds alternate.
"""

import os
import subprocess
import tempfile
import time

import benchutil
from battlement.journal import Journal
from battlement.session import Session
from battlement.sound import Sound
from battlement.tables import for_game
from support import speech

ROUNDS = 30
FIRST = 44 + 512  # WAV header, then the first 256 samples of voice


def first_after(log, t0):
    """When the first sound after t0 began: the event's tone or its words, whichever the queue played first."""
    return min(r["first"] for r in speech.records(log) if r["prog"] == "play" and r["start"] >= t0)


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
            ours, bare = [], []
            for _ in range(ROUNDS):
                s.apply({"t": "cell", "cell": "b5", "occupied": False}, "bench")
                sound.wait_idle(30)
                t0 = time.time()
                s.apply({"t": "cell", "cell": "b3", "occupied": True}, "bench")  # refused aloud
                sound.wait_idle(30)
                ours.append(first_after(log, t0) - t0)
                for inp in ({"t": "cell", "cell": "b3", "occupied": False}, {"t": "cell", "cell": "b5", "occupied": True}):
                    s.apply(inp, "bench")
                sound.wait_idle(30)

                t0 = time.time()
                e = subprocess.Popen([sound.espeak, "-v", "en", "-s", "160", "--stdout", "--", said[-1]],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                p = subprocess.Popen([sound.play, "-q", "-t", "wav", "-"], stdin=e.stdout, stderr=subprocess.DEVNULL)
                e.stdout.close()
                p.wait(30)
                e.wait(30)
                bare.append(first_after(log, t0) - t0)
            sound.close()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    p50, p95 = benchutil.ms(benchutil.pct(ours, 0.5)), benchutil.ms(benchutil.pct(ours, 0.95))
    b50, b95 = benchutil.ms(benchutil.pct(bare, 0.5)), benchutil.ms(benchutil.pct(bare, 0.95))
    print("P7 speech  event -> start of audio  p50 %.1f ms p95 %.1f ms  (bare espeak-ng | play p50 %.1f p95 %.1f; "
          "queue overhead p95 %+.1f ms; target p95 <= 150 ms%s)  [%d rounds, counters %s]"
          % (p50, p95, b50, b95, p95 - b95, "" if p95 <= 150 else " OVER TARGET", ROUNDS,
             {k: v for k, v in sound.counters.items() if v}), flush=True)


if __name__ == "__main__":
    main()
