"""Helpers for firmware tests: stage the firmware once, run scenarios under the real MicroPython."""

import json
import pathlib
import subprocess
import tempfile

from battlement.link import wire
from battlement.sim import firmware as fwsim

HERE = pathlib.Path(__file__).resolve().parent
DRIVER = HERE / "mp" / "drive.py"


# Board models the scenario tests run on (tests/firmware/fakes/machine.py), and how far a
# measured width may stray from the truth on each (IRQ latency: 10-20 us on rp2, 30-150 us on esp32).
MODELS = ("ideal", "rp2", "esp32-gc")
WIDTH_SLACK = {"ideal": 0, "rp2": 20, "esp32-gc": 200}


def run_mp(code_dir, script, args=(), heapsize=None, timeout=120, model=None):
    cmd = [fwsim.micropython_binary()]
    if heapsize:
        cmd += ["-X", "heapsize=" + heapsize]
    cmd += [str(script), *map(str, args)]
    env = fwsim.micropython_env(code_dir, model=model)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return p


class Result:
    def __init__(self, lines):
        self.frames = []
        self.pixels = []
        self.stats = {}
        for line in lines:
            d = json.loads(line)
            if "frame" in d:
                self.frames.append(wire.decode(d["frame"].encode()))
            elif "pixels" in d:
                self.pixels.append([tuple(c) for c in d["pixels"]])
            else:
                self.stats = d["stats"]

    def of(self, typ):
        return [f for t, f in self.frames if t == typ]

    def events(self, sensor=None):
        return [f for f in self.of("event") if sensor is None or f[3] == sensor]


def run_scenario(code_dir, config, ops, heapsize=None, model=None):
    """Replay ops through App (tests/firmware/mp/drive.py); returns a Result with frames and counters."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"config": config, "ops": ops}, f)
        path = f.name
    try:
        p = run_mp(code_dir, DRIVER, [path], heapsize=heapsize, model=model)
    finally:
        pathlib.Path(path).unlink()
    if p.returncode != 0:
        raise AssertionError(
            "firmware failed under MicroPython on the %s board (exit %d):\n%s%s" % (model or "ideal", p.returncode, p.stdout[-3000:], p.stderr)
        )
    return Result(p.stdout.splitlines())


def frame(typ, *fields):
    return wire.encode(typ, fields).decode().strip()


def widths_close(got, want, model):
    """Widths as measured on this board: exact on the ideal one, within the IRQ latency elsewhere."""
    slack = WIDTH_SLACK.get(model or "ideal", 0)
    return len(got) == len(want) and all(abs(g - w) <= slack for g, w in zip(got, want))
