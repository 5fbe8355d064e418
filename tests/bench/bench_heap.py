"""The heap each board's firmware needs, beside the previous release's firmware in the same run.

Each pin map in hardware/boards is run as tests/firmware/test_build.py runs it (the compiled
firmware on the virtual-time board, MicroPython's 64-bit unix port, every sensor triggered, the
LEDs chasing, signed frames off) in heaps of shrinking size; the figure is the smallest that
kept the board alive without a MemoryError, in 1K steps. The previous release is the firmware at
BASELINE (git), staged and compiled the same way, on the same simulated board. The host side is a
few lines that speak each firmware's own wire codec (its revision's wire.py: the protocol moved on
since), so any release runs however the bridge talks today. The heap the simulated board's own
modules take (tests/firmware/fakes, the same for both) is printed apart.
BENCH_HEAP_MAPS (comma-separated map names) picks the maps.
"""

import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time
import types

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from battlement.boards import firmware as fwboard
from battlement.sim import firmware as fwsim
from support.procs import PtyPair

BASELINE = "d597074"  # the release before the honest beam account (its red-kingdom needed 152K)
MAPS = ("red-kingdom", "plingpong-1", "ringo-a", "outer-wall")
LOW, HIGH, STEP = 64, 256, 1  # K
WIRE = "host/battlement/link/wire.py"
GROUP = {"red-kingdom": "kingdom", "ringo-a": "cells"}  # the LED group each map chases (else "all")


def _git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=True).stdout


def stage_rev(rev, dest):
    """The firmware of a git revision, compiled as a board gets it (git show: the work tree is not touched)."""
    src = pathlib.Path(dest) / "src"
    src.mkdir(parents=True)
    names = _git("ls-tree", "--name-only", rev, "firmware/").decode().split()
    for path in [n for n in names if n.endswith(".py")] + [WIRE]:
        (src / pathlib.Path(path).name).write_bytes(_git("show", "%s:%s" % (rev, path)))
    out = pathlib.Path(dest) / "code"
    out.mkdir()
    for p in sorted(src.glob("*.py")):
        if p.name == "main.py":
            (out / p.name).write_bytes(p.read_bytes())
        else:
            fwboard.compile_module(p, out / (p.stem + ".mpy"))
    return out


def codec(source):
    """A wire module from its source text (a revision's own codec, beside today's)."""
    mod = types.ModuleType("wire_%x" % (hash(source) & 0xFFFFFF))
    exec(compile(source, "wire.py", "exec"), mod.__dict__)  # noqa: S102 - the project's own file at a revision
    return mod


class Host:
    """The host's end of the board's serial line: frames in, by the board's own codec; commands out."""

    def __init__(self, path, wire, alive):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        self.wire = wire
        self.alive = alive  # the board still runs (one that died of a MemoryError says nothing more)
        self.buf = b""

    def frame(self, timeout):
        """The next frame the board sent that decodes (typ, fields), or None after timeout s or once it died."""
        deadline = time.monotonic() + timeout
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[: nl + 1], self.buf[nl + 1 :]
                try:
                    return self.wire.decode(line)
                except Exception:  # noqa: BLE001, S112 - a boot line or a cut frame: the next one
                    continue
            left = deadline - time.monotonic()
            if left <= 0 or not self.alive():
                return None
            if not select.select([self.fd], [], [], min(left, 0.5))[0]:
                continue
            try:
                self.buf += os.read(self.fd, 4096)
            except BlockingIOError:
                continue

    def send(self, typ, fields):
        os.write(self.fd, self.wire.encode(typ, fields))

    def close(self):
        os.close(self.fd)


def runs_in(code, wire, pinmap, heap):
    """The board of this pin map boots, reports every sensor and keeps animating in heap (K)."""
    path = ROOT / "hardware" / "boards" / (pinmap + ".json")
    sensors = {s["id"]: s["kind"] for s in json.loads(path.read_text())["sensors"]}
    pair = PtyPair().start()
    staged = fwsim.stage
    fwsim.stage = lambda dest, compiled=False, march=None, ver=None: pathlib.Path(shutil.copytree(code, dest))
    fw = fwsim.FirmwareProcess(pinmap, pinmap=str(path), port=pair.b, heapsize="%dK" % heap, compiled=True)
    host = None
    try:
        fw.start()
        host = Host(pair.a, wire, fw.alive)
        deadline = time.monotonic() + 20  # near its limit a heap can crawl, or wait for a block: a failure too
        hello = None
        while hello is None or hello[0] != "hello":
            hello = host.frame(max(0.1, deadline - time.monotonic()))
            if hello is None:
                return False
        board, boot = hello[1][0], hello[1][1]
        host.send("led", (board, 1, GROUP.get(pinmap, "all"), "chase", 0xFF0000, 400))
        fw.trigger_all(sensors)
        got = set()
        while got != set(sensors):
            f = host.frame(max(0.1, deadline - time.monotonic()))
            if f is None:
                return False
            if f[0] == "event":
                got.add(f[1][3])
                host.send("evack", (board, boot, f[1][2]))
        time.sleep(0.5)
        return fw.alive() and "MemoryError" not in fw.log()
    except (TimeoutError, OSError, RuntimeError):
        return False
    finally:
        fw.stop()
        fwsim.stage = staged
        if host is not None:
            host.close()
        pair.stop()


def least_heap(code, wire, pinmap):
    """The smallest heap (K, in STEP steps) the board runs in: the largest failing one plus STEP."""
    lo, hi = LOW, HIGH  # lo fails (assumed), hi must run
    if not runs_in(code, wire, pinmap, hi):
        return None
    while hi - lo > STEP:
        mid = (lo + hi) // 2 // STEP * STEP
        if runs_in(code, wire, pinmap, mid):
            hi = mid
        else:
            lo = mid
    return hi


def board_share():
    """Bytes the simulated board's modules (machine and the rest of tests/firmware/fakes) take once loaded."""
    probe = "import gc\ngc.collect()\na = gc.mem_alloc()\nimport machine, neopixel\ngc.collect()\nprint(gc.mem_alloc() - a)\n"
    p = subprocess.run([fwsim.micropython_binary(), "-c", probe], env=fwsim.micropython_env(ROOT / "firmware"),
                       capture_output=True, text=True, check=False)
    return int(p.stdout.strip() or 0)


def main():
    maps = [m.strip() for m in (os.getenv("BENCH_HEAP_MAPS") or ",".join(MAPS)).split(",") if m.strip()]
    with tempfile.TemporaryDirectory() as d:
        now = fwsim.stage(pathlib.Path(d) / "now", compiled=True)
        before = stage_rev(BASELINE, pathlib.Path(d) / "before")
        wire_now = codec((ROOT / WIRE).read_text())
        wire_before = codec(_git("show", "%s:%s" % (BASELINE, WIRE)).decode())
        size = lambda c: sum(p.stat().st_size for p in c.glob("*.mpy")) / 1024
        print("   compiled firmware: %.1f KB (previous release %.1f KB)" % (size(now), size(before)))
        share = board_share() / 1024
        print("   %-16s %12s %18s   %s" % ("board", "heap now", "previous release",
                                          "less the simulated board's modules (now / previous)"))
        for m in maps:
            a, b = least_heap(now, wire_now, m), least_heap(before, wire_before, m)
            own = "%.0fK / %.0fK" % (a - share, b - share) if a and b else "-"
            print("   %-16s %11sK %17sK   %s" % (m, a or ">%d" % HIGH, b or ">%d" % HIGH, own), flush=True)
        print("   (64-bit unix port: objects about twice their size on the 32-bit boards; 1K steps; the simulated")
        print("    board's own modules, machine and neopixel, in ROM on a board, take %.1f KB of each)" % share)


if __name__ == "__main__":
    main()
