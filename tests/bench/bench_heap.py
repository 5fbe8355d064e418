"""The heap each board's firmware needs, beside the previous release's firmware in the same run.

Each pin map in hardware/boards is run as tests/firmware/test_build.py runs it (the compiled
firmware on the virtual-time board, MicroPython's 64-bit unix port, every sensor triggered, the
LEDs chasing, signed frames off) in heaps of shrinking size; the figure is the smallest that
kept the board alive without a MemoryError, in 4K steps. The previous release is the firmware at
BASELINE (git), staged and compiled the same way, on the same simulated board.
BENCH_HEAP_MAPS (comma-separated map names) picks the maps.
"""

import asyncio
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from battlement.boards import firmware as fwboard
from battlement.link.messages import Event, Hello, Led, Reply
from battlement.link.transport import SerialTransport
from battlement.sim import firmware as fwsim
from support.procs import PtyPair

BASELINE = "d597074"  # the release before the honest beam account (its red-kingdom needed 152K)
MAPS = ("red-kingdom", "plingpong-1", "ringo-a", "outer-wall")
LOW, HIGH, STEP = 64, 256, 4  # K


def stage_rev(rev, dest):
    """The firmware of a git revision, compiled as a board gets it (git show: the work tree is not touched)."""
    src = pathlib.Path(dest) / "src"
    src.mkdir(parents=True)
    names = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", rev, "firmware/"],
                           capture_output=True, text=True, check=True).stdout.split()
    wire = "host/battlement/link/wire.py"
    for path in [n for n in names if n.endswith(".py")] + [wire]:
        data = subprocess.run(["git", "-C", str(ROOT), "show", "%s:%s" % (rev, path)], capture_output=True, check=True).stdout
        (src / pathlib.Path(path).name).write_bytes(data)
    out = pathlib.Path(dest) / "code"
    out.mkdir()
    for p in sorted(src.glob("*.py")):
        if p.name == "main.py":
            (out / p.name).write_bytes(p.read_bytes())
        else:
            fwboard.compile_module(p, out / (p.stem + ".mpy"))
    return out


async def _next(t, kind, timeout):
    while True:
        m = await asyncio.wait_for(t.get(), timeout)
        if isinstance(m, kind):
            return m


def runs_in(code, pinmap, heap):
    """The board of this pin map boots, reports every sensor and keeps animating in heap (K)."""
    pair = PtyPair().start()
    staged = fwsim.stage

    async def main():
        t = SerialTransport([pair.a])
        await t.start()
        fw = fwsim.FirmwareProcess(pinmap, pinmap=str(fwsim.ROOT / "hardware" / "boards" / (pinmap + ".json")),
                                   port=pair.b, heapsize="%dK" % heap, compiled=True)
        try:
            fw.start()
            hello = await _next(t, Hello, 20)
            group = {"red-kingdom": "kingdom", "ringo-a": "cells"}.get(pinmap, "all")
            await t.send(Led(pinmap, group, "chase", 0xFF0000, 400))
            if not (await _next(t, Reply, 20)).ok:
                return False
            for sid, kind in sorted(hello.sensors.items()):
                if kind == "beam":
                    fw.drop_ball(sid, width_ms=8)
                elif kind == "tilt":
                    fw.tilt(sid, True, settle=False)
                else:
                    fw.presence(sid, True, settle=False)
            fw.sync()
            fw.advance(300_000)
            got = set()
            while len(got) < len(hello.sensors):
                got.add((await _next(t, Event, 20)).sensor)
            await asyncio.sleep(0.5)
            return fw.alive() and "MemoryError" not in fw.log()
        except (TimeoutError, OSError, RuntimeError):
            return False
        finally:
            fw.stop()
            await t.stop()

    async def bounded():
        try:
            return await asyncio.wait_for(main(), 60)  # near its limit a heap can crawl: that is a failure too
        except TimeoutError:
            return False

    fwsim.stage = lambda dest, compiled=False, march=None: _copy(code, dest)
    try:
        return asyncio.run(bounded())
    finally:
        fwsim.stage = staged
        pair.close() if hasattr(pair, "close") else pair.stop()


def _copy(code, dest):
    import shutil

    shutil.copytree(code, dest)
    return pathlib.Path(dest)


def least_heap(code, pinmap):
    """The smallest heap (K, in STEP steps) the board runs in: the largest failing one plus STEP."""
    lo, hi = LOW, HIGH  # lo fails (assumed), hi must run
    if not runs_in(code, pinmap, hi):
        return None
    while hi - lo > STEP:
        mid = (lo + hi) // 2 // STEP * STEP
        if runs_in(code, pinmap, mid):
            hi = mid
        else:
            lo = mid
    return hi


def main():
    maps = [m.strip() for m in (os.getenv("BENCH_HEAP_MAPS") or ",".join(MAPS)).split(",") if m.strip()]
    with tempfile.TemporaryDirectory() as d:
        now = fwsim.stage(pathlib.Path(d) / "now", compiled=True)
        before = stage_rev(BASELINE, pathlib.Path(d) / "before")
        size = lambda c: sum(p.stat().st_size for p in c.glob("*.mpy")) / 1024
        print("   compiled firmware: %.1f KB (previous release %.1f KB)" % (size(now), size(before)))
        print("   %-16s %12s %18s" % ("board", "heap now", "previous release"))
        for m in maps:
            a, b = least_heap(now, m), least_heap(before, m)
            print("   %-16s %11sK %17sK" % (m, a or ">%d" % HIGH, b or ">%d" % HIGH), flush=True)
        print("   (64-bit unix port: objects about twice their size on the 32-bit boards; 4K steps)")


if __name__ == "__main__":
    main()
