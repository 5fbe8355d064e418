"""Firmware benchmark, under the real MicroPython unix port.

1. Pipeline throughput: balls through the whole board path (IRQ handler with the
   heap locked -> ring -> beam detector -> event frame -> outbox -> link -> evack),
   beside a baseline of the simulated edges alone (same fake pins, handler that
   only counts), so the firmware's own cost per event is the difference.
2. Detection accuracy over 10,000 simulated drops (1 ms breaks, 0.2 ms glitches,
   bursts of balls 6-15 ms apart): the firmware's detector beside a fixed 50 ms
   switch debounce fed the same edges.
"""

import pathlib
import random
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "firmware"))

from battlement import fwsim
from fwtest import run_scenario

THROUGHPUT = r"""
import time, machine, hal, app, wire
N = 20000
cfg = {"board": "bench", "sensors": [{"id": "cup-%d" % i, "kind": "beam", "pin": i} for i in range(8)]}
a = app.App(cfg)
machine._apply("freeze")
pins = [machine.pin(i) for i in range(8)]

def run_pipeline():
    t0 = time.ticks_us()
    for k in range(N):
        p = pins[k & 7]
        p.drive(0); machine.advance(8000); p.drive(1); machine.advance(7000)
        if k & 15 == 15:
            a.sense(hal.ticks_us())
            a.take()
            a.on_line(wire.encode("evack", (a.board, a.boot, a.seq)))
    a.sense(hal.ticks_us()); a.take()
    return time.ticks_diff(time.ticks_us(), t0)

def run_edges_only():
    hits = [0]
    def count(pin):
        hits[0] += 1
    q = [machine.Pin(100 + i, machine.Pin.IN, machine.Pin.PULL_UP) for i in range(8)]
    for p in q:
        p.irq(handler=count, trigger=3)
    t0 = time.ticks_us()
    for k in range(N):
        p = q[k & 7]
        p.drive(0); machine.advance(8000); p.drive(1); machine.advance(7000)
    return time.ticks_diff(time.ticks_us(), t0)

base = run_edges_only()
full = run_pipeline()
print(N, a.seq, base, full)
"""


def throughput(code):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(THROUGHPUT)
    try:
        p = subprocess.run(
            [fwsim.micropython_binary(), f.name],
            env=fwsim.micropython_env(code),
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        pathlib.Path(f.name).unlink()
    if p.returncode:
        raise SystemExit("throughput run failed:\n" + p.stdout + p.stderr)
    n, events, base, full = map(int, p.stdout.split())
    assert events == n, "pipeline lost events: %d of %d" % (events, n)
    print(
        "   pipeline: %8.0f events/s  %6.1f us/event  (all %d balls reported)" % (n / full * 1e6, full / n, n)
    )
    print(
        "   baseline: %8.0f edges-only drops/s  %6.1f us/drop  (simulated pins, handler that only counts)"
        % (n / base * 1e6, base / n)
    )
    print(
        "   firmware's own cost: %.1f us/event, %.1fx the simulation's"
        % ((full - base) / n, (full - base) / base)
    )


def accuracy(code, n=10_000, seed=1):
    rng = random.Random(seed)
    ops = ["freeze"]
    edges = []  # (t_us, level) as a plain debounce would see them
    t = 0
    kinds = {"ball": 0, "glitch": 0}
    for i in range(n):
        what = rng.choice(("ball", "glitch", "burst"))
        widths = [1000] if what == "ball" else [200] if what == "glitch" else [1000] * rng.randint(2, 4)
        for w in widths:
            gap = rng.randint(6000, 15000) if what == "burst" else rng.randint(6000, 80000)
            ops += ["set 2 0", "adv %d" % w, "set 2 1", "adv %d" % gap]
            edges += [(t, 0), (t + w, 1)]
            t += w + gap
            kinds["glitch" if w == 200 else "ball"] += 1
        if i % 8 == 7:
            ops.append("flush")
    ops.append("flush")
    cfg = {"board": "bench", "sensors": [{"id": "cup-1", "kind": "beam", "pin": 2}]}
    r = run_scenario(code, cfg, ops, heapsize="64M")  # room for the 80,000-step script itself
    got = len(r.events("cup-1"))
    glitches = r.stats["cup-1"]["glitches"]
    # Baseline: count a falling edge when none was counted in the last 50 ms (a common switch debounce).
    last = -(10**9)
    debounced = 0
    for tt, level in edges:
        if level == 0 and tt - last >= 50_000:
            debounced += 1
            last = tt
    balls, bad = kinds["ball"], kinds["glitch"]
    print("   %d drops: %d one-ms balls (bursts included), %d 0.2 ms glitches" % (n, balls, bad))
    print(
        "   firmware: %6.2f%% of 1 ms balls caught, %6.2f%% of 0.2 ms glitches rejected"
        % (100.0 * got / balls, 100.0 * glitches / bad)
    )
    print(
        "   baseline 50 ms debounce: %d counts for %d balls (%+.1f%%: it loses bursts and counts glitches)"
        % (debounced, balls, 100.0 * (debounced - balls) / balls)
    )


def main():
    with tempfile.TemporaryDirectory() as d:
        code = fwsim.stage(pathlib.Path(d) / "code", compiled=True)
        throughput(code)
        accuracy(code)


if __name__ == "__main__":
    main()
