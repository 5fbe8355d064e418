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
   received, which bound where min_pulse_us and lockout_ms may sit. A ball the
   board reported `blind` (a collection it ran hid the break: the host asks a
   person) is "asked", neither missed nor false. BENCH_DROPS sets the drops per
   model, BENCH_MODELS (comma-separated labels) which models run.
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
from battlement.sim import firmware as fwsim

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
            for _ in a.take():  # the link's part: the events' frames are made as it takes them
                pass
            a.on_line(wire.encode("evack", (a.board, a.boot, a.seq)))
    a.sense(hal.ticks_us())
    for _ in a.take():
        pass
    return time.ticks_diff(time.ticks_us(), t0)

def run_edges_only():
    hits = [0]
    def count(pin):
        hits[0] += 1
    q = [machine.Pin(40 + i, machine.Pin.IN, machine.Pin.PULL_UP) for i in range(8)]  # not the board's 0-7
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


CHUNK = 500  # drops per MicroPython run: past ~1,000 the unix port's own GC crawls (2,000 took 90 s to 15 min and once ran out of its 32 MB heap)
JOBS = int(os.getenv("BENCH_JOBS") or min(2, os.cpu_count() or 1))  # MicroPython runs at once


def _empty():
    return {
        "bands": {name: {"n": 0, "none": 0, "one": 0, "double": 0, "asked": 0, "hidden": 0, "errors": []} for name, *_ in drops.BANDS},
        "seen": {name: {"dark": [], "light": []} for name, *_ in drops.BANDS},
        "unmatched": 0, "hidden": 0, "unhidden_wrong": 0, "questions": 0, "empty": 0, "asked_hidden": 0, "late_max": 0, "masked_us": 0, "frames": 0, "gc": 0, "secs": 0.0,
        "lost": 0, "both": 0, "false": 0, "unasked": 0, "sched_lost": 0,
    }


def _run_chunk(code, label, k, n, seed):
    """One MicroPython run: drops k..k+n of a model (their own seed); returns its figures."""
    model, anim = drops.MODELS[label]
    leds = 73 if anim else 0
    t0 = time.perf_counter()
    pauses = ()
    extra = dict(drops.EXTRA.get(label) or {})
    if label in drops.HARD:
        edges, truth, pauses = drops.timeline(n, seed * 1000 + k, hard=True)
        extra["sensors"] = [drops.CUP, drops.TILT]
    else:
        edges, truth = drops.timeline(n, seed * 1000 + k)
    events, stats = drops.run(
        code, model, edges, lines=drops.animate(leds), leds=leds, seed=seed + k, log_edges=True, extra=extra, pauses=pauses
    )
    events = [ev for ev in events if ev[0] == drops.CUP["id"]]
    counts = []
    asks = {}
    score, um = drops.score(truth, events, counts, asks)
    seen = drops.measured(truth, stats.pop("edges_seen"))
    hid = drops.hidden(truth, stats)
    out = _empty()
    # Target drops got wrong that no collection hid: what the firmware must never do.
    for i, (name, _, _) in enumerate(truth):
        if name in drops.TARGET and i not in hid:
            bad = counts[i] > 0 if name.startswith(drops.NOT_BALLS) else counts[i] != 1 and not (counts[i] == 0 and i in asks["drops"])
            out["unhidden_wrong"] += bad
    for i in hid:
        out["bands"][truth[i][0]]["hidden"] += 1
        out["asked_hidden"] += i in asks["drops"] and truth[i][0] in drops.TARGET and not truth[i][0].startswith("noise")
    for i, (name, _, _) in enumerate(truth):
        if name in drops.TARGET and name.startswith(drops.NOT_BALLS):
            out["false"] += counts[i] > 0
        elif name in drops.TARGET:
            out["lost"] += counts[i] == 0 and i not in asks["drops"]
    out["both"] = len(asks["both"])
    out["unasked"] = stats.get("unasked", 0)
    out["sched_lost"] = stats.get("sched_lost", 0)
    out["questions"] = asks["questions"]
    out["empty"] = asks["empty"]
    for name, tot in out["bands"].items():
        for key in ("n", "none", "one", "double", "asked"):
            tot[key] += score[name][key]
        tot["errors"] += score[name]["errors"]
    out["seen"] = seen
    out.update(unmatched=um, hidden=len(hid), late_max=stats["late_max"], masked_us=stats["masked_us"],
               frames=stats.get("frames", 0), gc=stats.get("gc", 0), secs=time.perf_counter() - t0)
    return out


def _merge(a, b):
    for name, tot in a["bands"].items():
        for key in ("n", "none", "one", "double", "asked", "hidden"):
            tot[key] += b["bands"][name][key]
        tot["errors"] += b["bands"][name]["errors"]
        for key in ("dark", "light"):
            a["seen"][name][key] += b["seen"][name][key]
    for key in ("unmatched", "hidden", "unhidden_wrong", "questions", "empty", "asked_hidden", "masked_us", "frames", "gc", "secs",
                "lost", "both", "false", "unasked", "sched_lost"):
        a[key] += b[key]
    a["late_max"] = max(a["late_max"], b["late_max"])


def _labels():
    want = [x.strip() for x in (os.getenv("BENCH_MODELS") or "").split(",") if x.strip()]
    bad = [x for x in want if x not in drops.MODELS]
    if bad:
        raise SystemExit("BENCH_MODELS: unknown model %s (models: %s)" % (", ".join(bad), ", ".join(drops.MODELS)))
    return want or list(drops.MODELS)


def run_models(code, n, seed):
    """Every model over the same n drops, in runs of CHUNK spread over JOBS processes; progress as runs end."""
    labels = _labels()
    tasks = [(lb, k, min(CHUNK, n - k)) for k in range(0, n, CHUNK) for lb in labels]
    by = {lb: _empty() for lb in labels}
    done = {lb: 0 for lb in labels}
    t0 = time.perf_counter()
    print("   %d runs of up to %d drops, %d at a time" % (len(tasks), CHUNK, JOBS), flush=True)
    with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:  # each thread waits on its MicroPython child
        futs = {pool.submit(_run_chunk, code, lb, k, m, seed): (lb, m) for lb, k, m in tasks}
        for i, f in enumerate(concurrent.futures.as_completed(futs), 1):
            lb, m = futs[f]
            _merge(by[lb], f.result())
            done[lb] += m
            print("   [%2d/%d] %-20s %6d/%d drops  %6.0f s" % (i, len(tasks), lb, done[lb], n, time.perf_counter() - t0), flush=True)
    return by


def confusion(code, n=10_000, seed=3):
    """Every model over the same n drops (same seed), the idealized board beside them."""
    labels = _labels()
    by = run_models(code, n, seed)
    col = "%20s"
    print()
    print("   %d drops per model (seed %d); noise: false balls; balls: missed (not asked) + counted twice" % (n, seed))
    print("   %-24s" % "band (wrong/drops)" + "".join(col % lb for lb in labels))
    for name, *_ in drops.BANDS:
        row = "   %-24s" % (name + (" *" if name in drops.TARGET else ""))
        for lb in labels:
            b = by[lb]["bands"][name]
            cell = "%d/%d" % (drops.wrong(name, b), b["n"])
            if b["double"]:
                cell += " (%d x2)" % b["double"]
            row += col % cell
        print(row)
    print("   %-24s" % "TARGET balls lost unasked" + "".join(col % by[lb]["lost"] for lb in labels))
    print("   %-24s" % "TARGET counted and asked" + "".join(col % by[lb]["both"] for lb in labels))
    print("   %-24s" % "TARGET false balls" + "".join(col % by[lb]["false"] for lb in labels))
    print("   %-24s" % "questions per pause" + "".join(
        col % ("%.2f" % (by[lb]["questions"] / max(1, by[lb]["gc"] + by[lb]["unasked"]))) for lb in labels))
    print("   %-24s" % "pauses not asked for" + "".join(col % by[lb]["unasked"] for lb in labels))
    print("   %-24s" % "handlers dropped (queue)" + "".join(col % by[lb]["sched_lost"] for lb in labels))
    print("   %-24s" % "target balls in a pause" + "".join(
        col % sum(by[lb]["bands"][nm]["hidden"] for nm in drops.TARGET if not nm.startswith("noise")) for lb in labels))
    print("   %-24s" % "asked (a pause hid it)" + "".join(
        col % sum(by[lb]["bands"][nm]["asked"] for nm in drops.TARGET if not nm.startswith("noise")) for lb in labels))
    print("   %-24s" % "  of them in a pause" + "".join(col % by[lb]["asked_hidden"] for lb in labels))
    print("   %-24s" % "questions (blind events)" + "".join(col % by[lb]["questions"] for lb in labels))
    print("   %-24s" % "  asked of noise" + "".join(
        col % sum(by[lb]["bands"][nm]["asked"] for nm in ("noise 0.1-0.5 ms", "noise 0.5-1.0 ms")) for lb in labels))
    print("   %-24s" % "  with no drop to ask" + "".join(col % by[lb]["empty"] for lb in labels))
    print("   %-24s" % "targets wrong, not hidden" + "".join(col % by[lb]["unhidden_wrong"] for lb in labels))
    widths = ("ball 5-30 ms", "ball 1.5-5 ms", "burst ball 2-30 ms", "flicker ball 2-30 ms")
    print("   %-24s" % "width error p99 (us)" + "".join(
        col % drops.p99([x for nm in widths for x in by[lb]["bands"][nm]["errors"]]) for lb in labels))
    print("   %-24s" % "width error max (us)" + "".join(
        col % max([abs(x) for nm in widths for x in by[lb]["bands"][nm]["errors"]] or [0]) for lb in labels))
    print("   %-24s" % "events matching none" + "".join(col % by[lb]["unmatched"] for lb in labels))
    print("   %-24s" % "drops inside a pause" + "".join(col % by[lb]["hidden"] for lb in labels))
    print("   %-24s" % "collections" + "".join(col % by[lb]["gc"] for lb in labels))
    print("   %-24s" % "worst IRQ lateness us" + "".join(col % by[lb]["late_max"] for lb in labels))
    print("   %-24s" % "IRQs masked (ms)" + "".join(col % (by[lb]["masked_us"] // 1000) for lb in labels))
    print("   %-24s" % "LED frames" + "".join(col % by[lb]["frames"] for lb in labels))
    print("   %-24s" % "MicroPython time (s)" + "".join(col % ("%.1f" % by[lb]["secs"]) for lb in labels))
    print("   * a target band: 0 wrong; on the ESP32 a ball a collection hid whole (or the light before it)")
    print("     cannot be timed by software (docs/hardware.md \"Timing\"): the board reports it blind and the")
    print("     host asks a person (\"asked\"), so it is neither missed nor false")
    # Where the thresholds may sit, from the edges as the detector received them.
    print("   measured, as the detector saw the edges (us): threshold windows")
    print("   %-24s" % "" + "".join(col % lb for lb in labels))
    rows = (
        ("noise <0.5 dark max", "noise 0.1-0.5 ms", "dark", max),
        ("ball 2-30 dark min", None, "dark", min),
        ("flicker light max", "flicker ball 2-30 ms", "light", max),
        ("burst gap min", "burst ball 2-30 ms", "light", min),
    )
    for title, band, key, f in rows:
        cells = ""
        for lb in labels:
            seen = by[lb]["seen"]
            if band is None:
                vals = [d for nm in ("ball 5-30 ms", "flicker ball 2-30 ms", "burst ball 2-30 ms") for d in seen[nm]["dark"] if d > 0]
                vals += [d for d in seen["ball 1.5-5 ms"]["dark"] if d >= 2000]
            else:
                vals = [v for v in seen[band][key] if v > 0 or key == "dark"]
            cells += col % (f(vals) if vals else "-")
        print("   %-24s%s" % (title, cells))


def main():
    with tempfile.TemporaryDirectory() as d:
        code = fwsim.stage(pathlib.Path(d) / "code", compiled=True)
        throughput(code)
        confusion(code, n=int(os.getenv("BENCH_DROPS") or 10_000))


if __name__ == "__main__":
    main()
