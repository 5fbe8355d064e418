# What the firmware's sensing loop allocates once the board is up, per pass of the loop.
# Usage: micropython quiet_heap.py CONFIG.json -- prints "<bytes per quiet pass> <bytes per pass with noise> <glitches>".
# Quiet: no edge at all. Noise: every beam broken for 0.3 ms in turn (no ball, so no event to encode).
import gc
import json
import sys

import app
import machine

with open(sys.argv[1]) as f:
    cfg = json.load(f)
cfg["gc_ms"] = 600_000  # no collection of the firmware's own while it is measured (gc.mem_alloc() would drop)
pins = [s["pin"] for s in cfg["sensors"] if s["kind"] == "beam"] + [s["lower"] for s in cfg["sensors"] if "lower" in s]
a = app.App(cfg)  # takes the sensors out of cfg as it builds them
machine._apply("freeze")
N = 400
machine.schedule([(t, p, lv) for k in range(N) for p, t0 in ((pins[k % len(pins)], 1_000_000 + k * 2000),)
                  for t, lv in ((t0, 0), (t0 + 300, 1))])


def passes(n):
    for _ in range(n):
        a.cycle(machine.now() // 1000)
        machine.advance(1000)


passes(100)  # warm up: every list at its size, the clock's first reads done
gc.collect()
gc.disable()  # what the passes allocate stays counted
m0 = gc.mem_alloc()
passes(300)
quiet = (gc.mem_alloc() - m0) // 300
machine.advance(1_000_000 - machine.now())
passes(100)
m0 = gc.mem_alloc()
passes(2 * N - 200)
noise = (gc.mem_alloc() - m0) // (2 * N - 200)
glitches = sum(b.count("glitches") for b in a.channels if hasattr(b, "count"))
print(quiet, noise, glitches)
