"""Sound: spoken announcements (espeak-ng) and short cue tones (sox).

Modes: "speaker" plays on the sound card, "file" writes numbered WAV files into a
folder (a table with no sound card, and the tests), "null" only counts. Each
sound is its own child process so a slow synthesiser never holds up the game;
past MAX_BUSY sounds still playing, new ones are dropped and counted.
"""

from __future__ import annotations

import os
import shutil
import subprocess

MAX_BUSY = 4
# cue -> (frequency Hz, seconds): a tone a player learns to recognise
TONES = {
    "ball.in": (880, 0.15), "tower.destroyed": (220, 0.4), "crown.exposed": (1320, 0.3),
    "move.illegal": (150, 0.3), "capture": (660, 0.2), "fell": (440, 0.2), "game.over": (523, 0.6),
}


class Sound:
    def __init__(self, mode: str = "null", folder: str | None = None, voice: str = "en", volume: int = 100,
                 speed: int = 160):
        if mode not in ("null", "file", "speaker"):
            raise ValueError("sound mode is null, file or speaker")
        self.mode = mode
        self.folder = folder
        self.voice, self.volume, self.speed = voice, volume, speed
        self.espeak = shutil.which("espeak-ng")
        self.sox = shutil.which("sox")
        self.counters = {"said": 0, "tones": 0, "dropped": 0}
        self.procs: list[subprocess.Popen] = []
        self.n = 0
        self.files: list[str] = []
        if mode == "file":
            os.makedirs(folder or ".", exist_ok=True)

    def _busy(self) -> bool:
        self.procs = [p for p in self.procs if p.poll() is None]
        return len(self.procs) >= MAX_BUSY

    def _run(self, argv: list[str]) -> None:
        self.procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL))

    def _target(self, stem: str) -> str:
        self.n += 1
        path = os.path.join(self.folder or ".", "%04d-%s.wav" % (self.n, stem))
        self.files.append(path)
        return path

    def say(self, text: str) -> None:
        if self.mode == "null" or not self.espeak or self._busy():
            self.counters["dropped" if self.mode != "null" else "said"] += 1
            return
        argv = [self.espeak, "-v", self.voice, "-a", str(self.volume), "-s", str(self.speed)]
        if self.mode == "file":
            argv += ["-w", self._target("say")]
        self._run(argv + ["--", text])
        self.counters["said"] += 1

    def cue(self, name: str) -> None:
        tone = TONES.get(name)
        if tone is None:
            return
        if self.mode == "null" or not self.sox or self._busy():
            self.counters["dropped" if self.mode != "null" else "tones"] += 1
            return
        freq, secs = tone
        gain = "%.2f" % (self.volume / 200.0)
        out = [self._target(name.replace(".", "-"))] if self.mode == "file" else ["-d"]
        self._run([self.sox, "-q", "-n"] + out + ["synth", str(secs), "sine", str(freq), "vol", gain])
        self.counters["tones"] += 1

    def close(self, wait: float = 5.0) -> None:
        for p in self.procs:
            try:
                p.wait(wait)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
