"""Seeded drops on a beam, run through the firmware on the virtual-time board, and what a referee counts.

Each drop is one happening on the beam with its truth: a noise break (0.1-0.5 ms, 0.5-1.0 ms),
a ball of a width band, a ball whose rim lets light through for 50-500 us somewhere inside it,
or a burst of 2-4 balls with 6-15 ms of light between them. The firmware's events are matched
to the drops by time and counted per band: false balls for noise, missed and doubled for balls,
and each counted ball's width error. A `blind` event (a break a collection kept the board from
timing: the host asks a person) is no ball: it "asks" for a drop in its window that got none.
"""

import bisect
import json
import pathlib
import random
import subprocess
import tempfile

from battlement.sim import firmware as fwsim

HERE = pathlib.Path(__file__).resolve().parent
BOARD = HERE / "mp" / "board.py"

PIN = 2
CUP = {"id": "cup-1", "kind": "beam", "pin": PIN}
# Bands in the order the reports print them: (name, what, low us, high us)
BANDS = (
    ("noise 0.1-0.5 ms", "noise", 100, 500),
    ("noise 0.5-1.0 ms", "noise", 500, 1000),
    ("ball 1.0-1.5 ms", "ball", 1000, 1500),
    ("ball 1.5-5 ms", "ball", 1500, 5000),
    ("ball 5-30 ms", "ball", 5000, 30000),
    ("flicker ball 2-30 ms", "flicker", 2000, 30000),
    ("burst ball 2-30 ms", "burst", 2000, 30000),
    ("blocked 1-3 s", "blocked", 1_000_000, 3_000_000),  # a hand or a cup: never a ball (hard timelines only)
)
# Where a target applies: the grey zone between noise and balls (0.5-2 ms) is only reported.
TARGET = {"noise 0.1-0.5 ms", "ball 5-30 ms", "flicker ball 2-30 ms", "burst ball 2-30 ms", "blocked 1-3 s"}
NOT_BALLS = ("noise", "blocked")  # bands whose drops must never count as a ball
MODELS = {
    "ideal": ("ideal", False),
    "rp2": ("rp2", False),
    "rp2 animating": ("rp2", True),
    "esp32 gc": ("esp32-gc", False),
    # The same with pauses it did not ask for (flash writes, Wi-Fi) placed around balls, a chattering
    # tilt on the same board, and beams held dark for seconds (the hard timeline).
    "esp32 gc + pauses": ("esp32-gc", False),
    "esp32 gc animating": ("esp32-gc", True),
    # Baseline: the ESP32 firmware before (the port's own collections, every 1.5 s while lit).
    "esp32 gc before": ("esp32-gc-auto", False),
}
HARD = {"esp32 gc + pauses"}  # models whose runs take the hard timeline
TILT_PIN = 9
TILT = {"id": "tilt-1", "kind": "tilt", "pin": TILT_PIN}
EXTRA = {"esp32 gc before": {"gc_ms": 1500}}  # board settings a model's runs use


def _ball_width(rng, lo, hi):
    # Log-uniform: as many narrow balls as wide ones.
    return int(lo * (hi / lo) ** rng.random())


def timeline(n, seed, start=200_000, hard=False):
    """n drops; returns (edges [(t, pin, level)], truth [(band, start, end)]); hard: also (pauses [(at, us)])
    the firmware did not ask for, placed around drops, and a chattering tilt's edges among the edges."""
    rng = random.Random(seed)
    t = start
    edges = []
    truth = []
    weights = (2, 1, 1, 2, 3, 2, 2, 0.2 if hard else 0)
    for _ in range(n):
        name, what, lo, hi = rng.choices(BANDS, weights)[0]
        if what == "noise" or what == "blocked":
            w = rng.randint(lo, hi - 1)
            edges += [(t, PIN, 0), (t + w, PIN, 1)]
            truth.append((name, t, t + w))
            t += w
        elif what == "ball" or what == "flicker":
            w = _ball_width(rng, lo, hi)
            if what == "flicker":
                light = rng.randint(50, 500)
                at = rng.randint(300, max(301, w - light - 300))
                edges += [(t, PIN, 0), (t + at, PIN, 1), (t + at + light, PIN, 0), (t + w, PIN, 1)]
            else:
                edges += [(t, PIN, 0), (t + w, PIN, 1)]
            truth.append((name, t, t + w))
            t += w
        else:
            for k in range(rng.randint(2, 4)):
                if k:
                    t += rng.randint(6000, 15000)
                w = _ball_width(rng, lo, hi)
                edges += [(t, PIN, 0), (t + w, PIN, 1)]
                truth.append((name, t, t + w))
                t += w
        t += rng.randint(20_000, 60_000)
    if not hard:
        return edges, truth
    return edges + chatter(rng, truth), truth, pauses_around(rng, truth)


# The longest pause the firmware did not ask for: a flash sector erase (tens of ms). A beam held dark for
# seconds gets one in it, never one seconds long.
PAUSE_MAX = 40_000


def pauses_around(rng, truth):
    """Pauses of 0.5-40 ms the firmware did not ask for, one near some drops: holding a drop whole, its
    start or its end, or ending 0.5-3 ms before it begins; at least 100 ms apart."""
    out = []
    free = 0
    for _name, s, e in truth:
        if s < free or rng.random() > 0.08:
            continue
        w = e - s
        how = rng.randrange(4)
        if how == 0:  # the whole drop inside
            at = s - rng.randint(500, 5000)
            us = max(rng.randint(5000, 40000), e - at + 500)
        elif how == 1:  # its start inside, its end after
            at = s - rng.randint(1000, 5000)
            us = (s - at) + max(1, w // 2)
        elif how == 2:  # its start before, its end inside
            at = s + max(1, w // 2)
            us = (e - at) + rng.randint(500, 5000)
        else:  # the drop begins 0.5-3 ms after the pause ends
            us = rng.randint(5000, 40000)
            at = s - rng.randint(500, 3000) - us
        us = min(us, PAUSE_MAX)
        out.append((at, us))
        free = at + us + 100_000
    return out


def chatter(rng, truth):
    """A tilt on the same board rattling for 50-200 ms (contacts 0.3-2 ms apart) near some drops."""
    out = []
    free = 0
    for _name, s, _e in truth:
        if s < free or rng.random() > 0.05:
            continue
        t = s - rng.randint(0, 20000)
        end = t + rng.randint(50000, 200000)
        lv = 0
        while t < end or lv == 0:
            out.append((t, TILT_PIN, lv))
            lv = 1 - lv
            t += rng.randint(300, 2000)
        free = t + 50_000
    return out


def run(code, model, edges, lines=(), leds=0, deaf=(), extra=None, seed=1, timeout=600, log_edges=False, pauses=(),
        holds=(), frame_holds=()):
    """Run the firmware's sensing loop over the edges; returns (events [(sensor, seq, t, width, kind)], stats).

    pauses: [(at_us, length_us)] the firmware did not ask for (tests/firmware/fakes/machine.py pauses());
    holds: [(from_us, length_us)] such pauses that begin the moment the first drain of the ring from then ends;
    frame_holds: the same, beginning inside the first LED frame from then."""
    cfg = {"board": "bench", "sensors": [CUP], "wdt_ms": 0}
    if leds:
        cfg["leds"] = {"pin": 16, "count": leds}
    cfg.update(extra or {})
    scen = {"config": cfg, "timeline": [list(e) for e in sorted(edges)], "lines": list(lines), "deaf": list(deaf),
            "log_edges": log_edges, "pauses": [list(p) for p in pauses], "holds": [list(h) for h in holds],
            "frame_holds": [list(h) for h in frame_holds]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scen, f)
        path = f.name
    try:
        env = fwsim.micropython_env(code, {"BATTLEMENT_SEED": str(seed)}, model=model)
        p = subprocess.run(
            [fwsim.micropython_binary(), "-X", "heapsize=32M", str(BOARD), path],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    finally:
        pathlib.Path(path).unlink()
    if p.returncode != 0:
        raise AssertionError("firmware failed on the %s board (exit %d):\n%s%s" % (model, p.returncode, p.stdout[-3000:], p.stderr))
    events = []
    stats = {}
    for line in p.stdout.splitlines():
        d = json.loads(line)
        if "ev" in d:
            events.append(tuple(d["ev"]))
        else:
            stats = d["stats"]
    return events, stats


def animate(leds):
    """Host frames that set every pixel pulsing: a frame goes out every 40 ms."""
    from battlement.link import wire

    return [wire.encode("led", ("bench", 1, "all", "pulse", 0x3060FF, 1200)).decode().strip()] if leds else []


def is_blind(ev):
    return len(ev) > 4 and ev[4] == "blind"


def score(truth, events, counts=None, asks=None):
    """Per band: {"n", "none", "one", "double", "asked", "errors" [width us]}, and the balls that overlap no drop.

    A ball event belongs to the drop its span [t, t + width] overlaps most (late IRQs shift it a
    little). A blind event asks for the first ball drop in its span (from the pause's start to the last
    clear the board saw) that got no ball, else for the first noise or blocked drop there that got none;
    "asked" counts those drops (they are in "none" too).
    counts, a list, gets how many ball events each drop got; asks, a dict, gets {"questions",
    "empty"} (blind events, and those that found no ball-less drop to ask for).
    """
    out = {name: {"n": 0, "none": 0, "one": 0, "double": 0, "asked": 0, "errors": []} for name, *_ in BANDS}
    starts = [s for _, s, _ in truth]
    got = [[] for _ in truth]
    unmatched = 0
    blind = [ev for ev in events if is_blind(ev)]
    for ev in events:
        if is_blind(ev) or (len(ev) > 4 and ev[4] == "blocked"):
            continue  # a question, or a beam dark past any ball: neither is a ball
        t, w = ev[2], ev[3]
        a, b = t - 200, t + max(w, 0) + 200
        k = max(0, bisect.bisect_right(starts, a) - 1)
        best, best_ov = None, 0
        while k < len(truth) and truth[k][1] <= b:
            ov = min(b, truth[k][2]) - max(a, truth[k][1])
            if ov > best_ov:
                best, best_ov = k, ov
            k += 1
        if best is None:
            unmatched += 1
        else:
            got[best].append(ev)
    asked = set()
    empty = 0
    for ev in blind:
        a, b = ev[2] - 200, ev[2] + max(ev[3], 0) + 200
        k = max(0, bisect.bisect_right(starts, a) - 1)
        hit = None
        while k < len(truth) and truth[k][1] <= b:
            if truth[k][2] >= a and not got[k] and k not in asked:
                if not truth[k][0].startswith(NOT_BALLS):
                    hit = k  # a person asked "was there a ball?" says yes for the ball, not for a hand or noise
                    break
                if hit is None:
                    hit = k
            k += 1
        if hit is None:
            empty += 1
        else:
            asked.add(hit)
    both = set()  # drops counted as a ball that a question covers too: a "yes" would count them twice
    for ev in blind:
        a, b = ev[2], ev[2] + max(ev[3], 0)
        k = max(0, bisect.bisect_right(starts, a) - 1)
        while k < len(truth) and truth[k][1] <= b:
            if truth[k][2] >= a and got[k] and not truth[k][0].startswith(NOT_BALLS):
                both.add(k)
            k += 1
    if asks is not None:
        asks.update(questions=len(blind), empty=empty, drops=asked, both=both)
    if counts is not None:
        counts[:] = [len(mine) for mine in got]
    for i, ((name, s, e), mine) in enumerate(zip(truth, got)):
        b = out[name]
        b["n"] += 1
        if not mine:
            b["none"] += 1
            b["asked"] += i in asked
        elif len(mine) == 1:
            b["one"] += 1
            b["errors"].append(mine[0][3] - (e - s))
        else:
            b["double"] += 1
    return out, unmatched


def p99(errors):
    if not errors:
        return 0
    a = sorted(abs(x) for x in errors)
    return a[min(len(a) - 1, int(0.99 * len(a)))]


def wrong(name, b):
    """Drops the firmware got wrong in a band: false balls for noise, missed (not asked) + doubled for balls."""
    if name.startswith(NOT_BALLS):
        return b["one"] + b["double"]
    return b["none"] - b.get("asked", 0) + b["double"]


def inside_gc(stats, s, e):
    """s..e fell inside one garbage collection (the VM saw none of its edges on time)."""
    return any(a <= s and e <= b for a, b in stats.get("gc_windows", ()))


def hidden(truth, stats):
    """Indexes of drops a collection hid: the whole drop, or the light before it (its edges all
    reach the firmware in one burst after the pause, so nothing tells the two balls apart)."""
    out = set()
    prev_end = None
    for i, (name, s, e) in enumerate(truth):
        if inside_gc(stats, s, e) or (prev_end is not None and inside_gc(stats, prev_end, s)):
            out.add(i)
        prev_end = e
    return out


def measured(truth, seen):
    """From the edges as the detector got them: per band, the dark spells' widths and light gaps inside.

    Returns {band: {"dark": [us per drop], "light": [us of each light inside a drop or between burst balls]}}.
    """
    out = {name: {"dark": [], "light": []} for name, *_ in BANDS}
    seen = sorted(seen)
    j = 0
    prev_end = None  # (band, end) of the last burst ball, for the light between burst balls
    for name, s, e in truth:
        dark = 0
        lights = []
        mine = []
        while j < len(seen) and seen[j][0] < s - 1000:
            j += 1
        k = j
        while k < len(seen) and seen[k][0] <= e + 2000:
            mine.append(seen[k])
            k += 1
        j = k
        start = None
        last_clear = None
        for t, lv in mine:
            if lv == 0 and start is None:
                start = t
                if last_clear is not None:
                    lights.append(t - last_clear)
            elif lv == 1 and start is not None:
                dark += t - start
                start = None
                last_clear = t
        out[name]["dark"].append(dark)
        out[name]["light"] += lights
        if name.startswith("burst") and prev_end is not None and mine:
            first_break = next((t for t, lv in mine if lv == 0), None)
            if first_break is not None and s - prev_end[1] < 16000:
                out[name]["light"].append(first_break - prev_end[0])
        last = [t for t, lv in mine if lv == 1]
        prev_end = (last[-1], e) if (name.startswith("burst") and last) else None
    return out
