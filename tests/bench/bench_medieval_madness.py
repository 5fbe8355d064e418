"""Medieval Madness: random playouts per second (CPython and MicroPython), how many finish under
the step cap, and the heap one game needs under MicroPython (from source and precompiled).

Baselines measured in the same run: playouts through `Match` (what `battlement playout` runs)
beside the bare rules calls; the heap of importing the engine alone beside a whole game, and a
game from .mpy files beside the same game from source.
CPython rates use CPU time (time.process_time) so other work on the machine does not skew them.
"""

import shutil
import tempfile

import benchutil
from benchutil import MP_ONE_GAME, rate, smallest_heap
from support.heap import compile_games
from support.procs import MICROPYTHON

from shared_rules import engine
from shared_rules.medieval_madness import rules as mm

GAMES = 300
MP_GAMES = 60


def rules_playout(opts, seed):
    return benchutil.bare_playout(mm, opts, seed, mm.MAX_STEPS)


MP_GAME_BODY = """
from shared_rules.medieval_madness import rules as mm
engine.playout(mm, engine.complete_options(mm, {"players": 4}), 3, mm.MAX_STEPS)
"""

def mpy_tree():
    """A folder holding the rules as .mpy files plus the board data, laid out as on a board."""
    top = tempfile.mkdtemp(prefix="battlement-mm-mpy-")
    compile_games(top, ["medieval_madness"])
    return top


def from_tree(tree, code):
    """code with the rules imported from tree (put first on sys.path) instead of the checkout."""
    return "import sys\nsys.path.insert(0, %r)\n%s" % (tree, code)


def main():
    for players in (2, 3, 4):
        opts = engine.complete_options(mm, {"players": players})
        rules_playout(opts, 0)  # warm up
        ours = rate(lambda i, o=opts: rules_playout(o, i), GAMES)
        via_match = rate(lambda i, o=opts: engine.playout(mm, o, i, mm.MAX_STEPS), GAMES)
        benchutil.line("mm-%dp" % players, ours, via_match, "through Match/engine.playout",
                       unit="random games/s (CPython)")
        done = steps = 0
        for i in range(GAMES):
            _, n, finished = engine.playout(mm, opts, 1000 + i, mm.MAX_STEPS)
            done += finished
            steps += n
        print("         %d of %d random %d-player games finish within the %s-input cap; %.0f inputs per game"
              % (done, GAMES, players, f"{mm.MAX_STEPS:,}", steps / GAMES), flush=True)

    if not MICROPYTHON:
        print("micropython: not found, skipped", flush=True)
        return
    cp = rate(lambda i: rules_playout(engine.complete_options(mm, {"players": 4}), i), MP_GAMES)
    benchutil.micropython_playouts("mm-4p", "medieval-madness", {"players": 4}, MP_GAMES, mm.MAX_STEPS, cp)

    heap = smallest_heap(MP_ONE_GAME % MP_GAME_BODY)
    base_heap = smallest_heap(MP_ONE_GAME % "")
    if heap and base_heap:
        print("peak heap of one 4-player game (MicroPython, rules from source): %s bytes  (engine import alone %s, "
              "ratio %.1f)" % (f"{heap:,}", f"{base_heap:,}", heap / base_heap), flush=True)
    tree = mpy_tree()
    try:
        mpy_heap = smallest_heap(from_tree(tree, MP_ONE_GAME % MP_GAME_BODY))
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    if mpy_heap and heap:
        print("peak heap of one 4-player game (MicroPython, rules as .mpy): %s bytes  (from source %s, ratio %.2f)"
              % (f"{mpy_heap:,}", f"{heap:,}", mpy_heap / heap), flush=True)


if __name__ == "__main__":
    main()
