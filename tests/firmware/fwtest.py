"""Helpers for firmware tests: stage the firmware once, run scenarios under the real MicroPython."""

import json
import pathlib
import subprocess
import tempfile

from battlement import fwsim, wire

HERE = pathlib.Path(__file__).resolve().parent
DRIVER = HERE / "mp" / "drive.py"


def run_mp(code_dir, script, args=(), heapsize=None, timeout=120):
    cmd = [fwsim.micropython_binary()]
    if heapsize:
        cmd += ["-X", "heapsize=" + heapsize]
    cmd += [str(script), *map(str, args)]
    p = subprocess.run(
        cmd, env=fwsim.micropython_env(code_dir), capture_output=True, text=True, timeout=timeout, check=False
    )
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


def run_scenario(code_dir, config, ops, heapsize=None):
    """Replay ops through App (tests/firmware/mp/drive.py); returns a Result with frames and counters."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"config": config, "ops": ops}, f)
        path = f.name
    try:
        p = run_mp(code_dir, DRIVER, [path], heapsize=heapsize)
    finally:
        pathlib.Path(path).unlink()
    if p.returncode != 0:
        raise AssertionError(
            "firmware failed under MicroPython (exit %d):\n%s%s" % (p.returncode, p.stdout[-3000:], p.stderr)
        )
    return Result(p.stdout.splitlines())


def frame(typ, *fields):
    return wire.encode(typ, fields).decode().strip()
