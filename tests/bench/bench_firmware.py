"""Firmware benchmark, under the real MicroPython unix port.

1. Pipeline throughput: balls through the whole board path (IRQ handler with the
   heap locked -> ring -> beam detector -> event frame -> outbox -> link -> evack),
   beside a baseline of the simulated edges alone (same fake pins, handler that
   only counts), so the firmware's own cost per event is the difference.
2. Detection on the virtual-time board (tests/firmware/fakes/machine.py): 10,000
   seeded drops per board model (noise, balls per width band, rim flickers, bursts)
   through the firmware's real sensing loop, the confusion matrix per band for
   rp2, rp2 animating its LEDs, ESP32 with GC pauses (also animating), beside the
   idealized board's in the same run; then the widths and gaps the detector
   received, which bound where min_pulse_us and lockout_ms may sit.
"""

import concurrent.futures
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "firmware"))

import drops
from battlement import fwsim

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
        p.irq(handler=count, trigger=12)
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


CHUNK = 2000  # drops per MicroPython run: a long timeline makes the unix port's own GC crawl


def _run_model(code, label, n, seed):
    """n drops on one model, in runs of CHUNK (each its own seed); returns the summed figures."""
    model, anim = drops.MODELS[label]
    leds = 73 if anim else 0
    t0 = time.perf_counter()
    total = {name: {"n": 0, "none": 0, "one": 0, "double": 0, "errors": []} for name, *_ in drops.BANDS}
    seen_all = {name: {"dark": [], "light": []} for name, *_ in drops.BANDS}
    unmatched = hidden = 0
    stats_all = {"late_max": 0, "masked_us": 0, "frames": 0}
    for k in range(0, n, CHUNK):
        edges, truth = drops.timeline(min(CHUNK, n - k), seed * 1000 + k)
        events, stats = drops.run(code, model, edges, lines=drops.animate(leds), leds=leds, seed=seed + k, log_edges=True)
        score, um = drops.score(truth, events)
        seen = drops.measured(truth, stats.pop("edges_seen"))
        unmatched += um
        hidden += len(drops.hidden(truth, stats))
        for name, tot in total.items():
            for key in ("n", "none", "one", "double"):
                tot[key] += score[name][key]
            tot["errors"] += score[name]["errors"]
            seen_all[name]["dark"] += seen[name]["dark"]
            seen_all[name]["light"] += seen[name]["light"]
        stats_all["late_max"] = max(stats_all["late_max"], stats["late_max"])
        stats_all["masked_us"] += stats["masked_us"]
        stats_all["frames"] += stats.get("frames", 0)
    return label, total, unmatched, seen_all, stats_all, hidden, time.perf_counter() - t0


def confusion(code, n=10_000, seed=3):
    """Every model over the same n drops (same seed), the idealized board beside them."""
    labels = list(drops.MODELS)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda lb: _run_model(code, lb, n, seed), labels))
    by = {r[0]: r for r in results}
    head = "   %-22s" % "band (wrong/drops)" + "".join("%20s" % lb for lb in labels)
    print("   %d drops per model (seed %d, runs of %d); noise: false balls; balls: missed + counted twice" % (n, seed, CHUNK))
    print(head)
    for name, *_ in drops.BANDS:
        row = "   %-22s" % (name + (" *" if name in drops.TARGET else ""))
        for lb in labels:
            b = by[lb][1][name]
            cell = "%d/%d" % (drops.wrong(name, b), b["n"])
            if b["double"]:
                cell += " (%d x2)" % b["double"]
            row += "%20s" % cell
        print(row)
    print("   %-22s" % "width error p99 (us)" + "".join(
        "%20d" % drops.p99([x for nm in ("ball 5-30 ms", "ball 1.5-5 ms", "burst ball 2-30 ms") for x in by[lb][1][nm]["errors"]])
        for lb in labels))
    print("   %-22s" % "events matching none" + "".join("%20d" % by[lb][2] for lb in labels))
    print("   %-22s" % "drops a GC hid" + "".join("%20d" % by[lb][5] for lb in labels))
    print("   %-22s" % "worst IRQ lateness us" + "".join("%20d" % by[lb][4]["late_max"] for lb in labels))
    print("   %-22s" % "IRQs masked (ms)" + "".join("%20d" % (by[lb][4]["masked_us"] // 1000) for lb in labels))
    print("   %-22s" % "LED frames" + "".join("%20d" % by[lb][4].get("frames", 0) for lb in labels))
    print("   %-22s" % "run time (s)" + "".join("%20.1f" % by[lb][6] for lb in labels))
    print("   * a target band: 0 wrong (ESP32 with GC: except drops a 30 ms collection hid, or the light before them)")
    # Where the thresholds may sit, from the edges as the detector received them.
    print("   measured, as the detector saw the edges (us): threshold windows")
    print("   %-22s" % "" + "".join("%20s" % lb for lb in labels))
    rows = (
        ("noise <0.5 dark max", "noise 0.1-0.5 ms", "dark", max),
        ("ball 2-30 dark min", None, "dark", min),
        ("flicker light max", "flicker ball 2-30 ms", "light", max),
        ("burst gap min", "burst ball 2-30 ms", "light", min),
    )
    for title, band, key, f in rows:
        cells = ""
        for lb in labels:
            seen = by[lb][3]
            if band is None:
                vals = [d for nm in ("ball 5-30 ms", "flicker ball 2-30 ms", "burst ball 2-30 ms") for d in seen[nm]["dark"] if d > 0]
                vals += [d for d in seen["ball 1.5-5 ms"]["dark"] if d >= 2000]
            else:
                vals = [v for v in seen[band][key] if v > 0 or key == "dark"]
            cells += "%20s" % (f(vals) if vals else "-")
        print("   %-22s%s" % (title, cells))


def main():
    with tempfile.TemporaryDirectory() as d:
        code = fwsim.stage(pathlib.Path(d) / "code", compiled=True)
        throughput(code)
        confusion(code, n=int(os.getenv("BENCH_DROPS") or 10_000))


if __name__ == "__main__":
    main()
