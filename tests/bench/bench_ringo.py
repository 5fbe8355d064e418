"""Ringo: random playouts per second (CPython and MicroPython), heap of one game on MicroPython,
and the computer opponent's time per move at each strength.

Baselines measured in the same run: playouts through `Match` (what `battlement playout` runs)
beside the bare rules calls; the heap of importing the engine alone beside a whole game;
the random player's time per move beside the opponent's.
CPython rates use CPU time (time.process_time), best of 3 interleaved rounds, so other work on the
machine skews them less.
"""

import os
import pathlib
import shutil
import tempfile
import time

import benchutil
from benchutil import MP_ONE_GAME, best_rates, micropython, smallest_heap
from support.heap import compile_games
from support.procs import MICROPYTHON

from shared_rules import engine
from shared_rules.ringo import opponent as opp
from shared_rules.ringo import rules as ringo

GAMES = 2000
TARGET = 1000  # random games/s on CPython
OPTS = engine.complete_options(ringo, {})
POSITIONS = 40  # positions the opponent is timed on, taken from random games


def rules_playout(seed):
    return benchutil.bare_playout(ringo, OPTS, seed, ringo.MAX_STEPS)


def match_playout(seed):
    return engine.playout(ringo, OPTS, seed, ringo.MAX_STEPS)[0]


MP_GAME_BODY = """
from shared_rules.ringo import rules as ringo
engine.playout(ringo, engine.complete_options(ringo, {}), 7, ringo.MAX_STEPS)
"""

MP_OPPONENT = """
import time
from shared_rules import engine
from shared_rules.ringo import opponent as opp, rules as ringo
opts = engine.complete_options(ringo, {})
states = []
for g in range(%d):
    st = ringo.setup(opts, g)
    rng = engine.Rng(g)
    k = 6 + g %% 20
    while not st["over"] and k > 0:
        ringo.apply(st, rng.choice(ringo.legal(st)))
        k -= 1
    if not st["over"]:
        states.append(st)
out = []
rng = engine.Rng(1)
for strength in (0, 1, 2, 3, 4):
    t0 = time.ticks_us()
    for st in states:
        if strength == 0:
            rng.choice(ringo.legal(st))
        else:
            opp.best_move(st, strength)
    out.append(time.ticks_diff(time.ticks_us(), t0) / len(states) / 1000)
print(" ".join("%%.3f" %% x for x in out))
"""


def compiled_rules(where):
    """shared_rules compiled to .mpy under where (as a board would hold them); None without mpy-cross."""
    cross = shutil.which("mpy-cross") or str(pathlib.Path(MICROPYTHON).parent / "mpy-cross")
    if not os.path.exists(cross):
        return None
    compile_games(where, ["ringo"])
    return where


def positions(n):
    """n mid-game positions from random games (6 to 25 moves in)."""
    out = []
    g = 0
    while len(out) < n:
        st = ringo.setup(OPTS, g)
        rng = engine.Rng(g)
        for _ in range(6 + g % 20):
            if st["over"]:
                break
            ringo.apply(st, rng.choice(ringo.legal(st)))
        if not st["over"]:
            out.append(st)
        g += 1
    return out


def per_move(fn, states):
    t0 = time.process_time()
    for st in states:
        fn(st)
    return (time.process_time() - t0) / len(states)


def main():
    rules_playout(0)  # warm up
    ours, via_match = best_rates((rules_playout, match_playout), GAMES // 3)
    benchutil.line("ringo", ours, via_match, "through Match/engine.playout", unit="random games/s (CPython)")
    print("         target >= %s random games/s on CPython (rules calls): %s" % (
        f"{TARGET:,}", "met" if ours >= TARGET else "NOT MET"), flush=True)
    steps = sum(match_playout(i).state["turns"] for i in range(200)) / 200.0
    print("         a random game lasts %.0f moves on average" % steps, flush=True)

    states = positions(POSITIONS)
    rng = engine.Rng(1)
    base = per_move(lambda st: rng.choice(ringo.legal(st)), states)
    for strength in opp.STRENGTHS:
        t = per_move(lambda st, s=strength: opp.best_move(st, s), states)
        nodes = [0]
        for st in states[:10]:
            opp.choose(st["board"], st["castle"], st["turn"], OPTS, st["quiet"], strength, nodes)
        print("opponent strength %d: %8.3f ms/move  (random player %.3f ms/move, ratio %.0f; %d nodes/move)" % (
            strength, t * 1000, base * 1000, t / base, nodes[0] // 10), flush=True)

    if not MICROPYTHON:
        print("micropython: not found, skipped", flush=True)
        return
    benchutil.micropython_playouts("ringo", "ringo", {}, 300, ringo.MAX_STEPS, ours)
    with tempfile.TemporaryDirectory() as tmp:
        for label, path in (("rules from source", None), ("rules as .mpy", compiled_rules(tmp))):
            if label.endswith(".mpy") and path is None:
                print("mpy-cross not found: .mpy heap skipped", flush=True)
                continue
            heap = smallest_heap(MP_ONE_GAME % MP_GAME_BODY, path)
            base_heap = smallest_heap(MP_ONE_GAME % "", path)
            if heap and base_heap:
                print("peak heap of one game (MicroPython, %s): %s bytes  (engine import alone %s, ratio %.1f)" % (
                    label, f"{heap:,}", f"{base_heap:,}", heap / base_heap), flush=True)
    out = micropython(MP_OPPONENT % POSITIONS)
    if out.returncode == 0:
        ms = [float(x) for x in out.stdout.split()]
        for strength in opp.STRENGTHS:
            print("opponent strength %d: %8.3f ms/move on MicroPython  (random player %.3f ms/move, ratio %.0f)" % (
                strength, ms[strength], ms[0], ms[strength] / ms[0]), flush=True)
    else:
        print("micropython opponent timing failed: %s" % (out.stdout + out.stderr)[-500:], flush=True)


if __name__ == "__main__":
    main()
