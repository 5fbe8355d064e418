"""Shared formatting and statistics for the benchmarks (one line per figure, baseline beside it)."""

import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "tests", ROOT / "host"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))


def pct(samples, q):
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def ms(seconds):
    return seconds * 1000.0


def line(name, rate, raw_rate, raw_name, lat=None, raw_lat=None, unit="events/s"):
    """`serial  events/s  12,345  (raw pyserial 15,000, ratio 0.82)   p50 .. p99 .. (raw .., overhead p99 +.. ms)`."""
    text = "%-8s %s %9s  (%s %s, ratio %.2f)" % (
        name, unit, f"{rate:,.0f}", raw_name, f"{raw_rate:,.0f}", rate / raw_rate)
    if lat:
        p50, p99 = ms(pct(lat, 0.5)), ms(pct(lat, 0.99))
        r50, r99 = ms(pct(raw_lat, 0.5)), ms(pct(raw_lat, 0.99))
        text += "   p50 %.3f ms p99 %.3f ms (raw p50 %.3f p99 %.3f, overhead p99 %+.3f ms%s)" % (
            p50, p99, r50, r99, p99 - r99, "" if p99 - r99 <= 1.0 else " OVER 1 ms TARGET")
    print(text, flush=True)


def report(name, rounds, raw_rounds, raw_name, rejected=None):
    """One line for a transport path: its best round beside the raw baseline's, then any rejections."""
    raw_rate, raw_lat = best_of(raw_rounds)
    rate, lat = best_of(rounds)
    line(name, rate, raw_rate, raw_name, lat, raw_lat)
    if rejected:
        print("         rejections during the run: %s" % rejected)


def best_of(rounds):
    """rounds: [(rate, latencies), ...] of one path -> (best rate, latencies of the round with the lowest p99).

    The paths are measured in alternating rounds, so a burst of load from other
    processes on the machine does not land on one side of the comparison only.
    """
    rate = max(r for r, _ in rounds)
    lat = min((lat for _, lat in rounds), key=lambda s: pct(s, 0.99))
    return rate, lat


# ---- rules benchmarks: CPU-time rates and MicroPython heap searches

def rate(fn, n):
    t0 = time.process_time()
    for i in range(n):
        fn(i)
    return n / (time.process_time() - t0)


def best_rates(fns, n, rounds=3):
    """The best rate of each fn over `rounds` interleaved rounds (a busy machine only slows a run down)."""
    best = [0.0] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            best[k] = max(best[k], rate(fn, n))
    return best


MP_ONE_GAME = """
from shared_rules import engine
%s
"""


def micropython(code, heap=None, path=None):
    cmd = [_micropython_binary()]
    if heap:
        cmd += ["-X", "heapsize=%d" % heap]
    env = dict(os.environ, MICROPYPATH="%s:.frozen" % (path or ROOT))
    # Run from the rules' own folder so '' on sys.path finds those and not the sources.
    return subprocess.run(cmd + ["-c", code], capture_output=True, text=True, timeout=600, check=False, env=env,
                          cwd=str(path or ROOT))


def smallest_heap(code, path=None):
    """The smallest -X heapsize (to 256 bytes) with which code runs to the end under MicroPython."""
    lo, hi = 2048, 1 << 20
    if micropython(code, hi, path).returncode != 0:
        return None
    while hi - lo > 256:
        mid = (lo + hi) // 2
        if micropython(code, mid, path).returncode == 0:
            hi = mid
        else:
            lo = mid
    return hi


def _micropython_binary():
    from support.procs import MICROPYTHON

    return MICROPYTHON


# ---- random games through the bare rules calls, beside the same games through Match


def bare_playout(game, opts, seed, max_steps):
    """One random game through the rules calls alone (setup, legal, apply), announcements and all."""
    from shared_rules import engine

    st = game.setup(opts, seed)
    rng = engine.Rng(seed + 1)
    legal, apply_ = game.legal, game.apply
    steps = 0
    while not st["over"] and steps < max_steps:
        apply_(st, rng.choice(legal(st)))
        steps += 1
    return st


_MP_PLAYOUTS = """
import time
from shared_rules import engine, load
g = load(%r)
opts = engine.complete_options(g, %r)
n, cap = %d, %d
t0 = time.ticks_ms()
for i in range(n):
    engine.playout(g, opts, i, cap)
t1 = time.ticks_ms()
for i in range(n):
    st = g.setup(opts, i)
    rng = engine.Rng(i + 1)
    k = 0
    while not st["over"] and k < cap:
        g.apply(st, rng.choice(g.legal(st)))
        k += 1
t2 = time.ticks_ms()
print(n * 1000 / time.ticks_diff(t1, t0), n * 1000 / time.ticks_diff(t2, t1))
"""


def micropython_playouts(name, game, options, n, max_steps, cpython_rate):
    """Print MicroPython's random games/s through the bare rules beside the same games through Match,
    and its speed against CPython's rate (bare rules calls) measured by the caller."""
    out = micropython(_MP_PLAYOUTS % (game, options, n, max_steps))
    if out.returncode != 0:
        print("micropython playouts failed: %s" % (out.stdout + out.stderr)[-500:], flush=True)
        return
    match_rate, rules_rate = (float(x) for x in out.stdout.split())
    line(name, rules_rate, match_rate, "through Match/engine.playout", unit="random games/s (MicroPython)")
    print("         MicroPython/CPython speed: %.2f" % (rules_rate / cpython_rate), flush=True)
