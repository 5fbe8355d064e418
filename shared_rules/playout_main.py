"""Random playouts of one game, runnable under CPython and MicroPython.

`battlement playout` calls run() directly under CPython; with
`--interpreter micropython` it runs this file under `micropython`:

    MICROPYPATH=<repo root> micropython shared_rules/playout_main.py GAME OPTIONS_JSON GAMES SEED

which prints one line of canonical JSON (the same fields as run() returns).
"""

import sys
import time

from shared_rules import engine, load

try:
    _ticks = time.ticks_ms  # type: ignore[attr-defined]  # MicroPython

    def _elapsed(t0):
        return time.ticks_diff(time.ticks_ms(), t0) / 1000.0  # type: ignore[attr-defined]

except AttributeError:
    _ticks = time.perf_counter

    def _elapsed(t0):
        return time.perf_counter() - t0


def winner_key(state):
    """How a finished game is counted in `winners`: the winner's id, or "draw"."""
    w = state["winner"]
    if w is None:
        return "draw"
    return w if isinstance(w, str) else engine.dumps(w)


def run(name, options, games, seed):
    """Play `games` random games (game i uses seed+i); a dict of plain data describing the outcome."""
    game = load(name)
    options = engine.complete_options(game, options)
    cap = engine.max_steps(game)
    winners = {}
    finished = 0
    steps = 0
    t0 = _ticks()
    for i in range(games):
        m, n, done = engine.playout(game, options, seed + i, cap)
        steps += n
        key = winner_key(m.state) if done else "step-cap"
        finished += 1 if done else 0
        winners[key] = winners.get(key, 0) + 1
    seconds = _elapsed(t0)
    return {
        "game": name, "options": options, "games": games, "seed": seed, "finished": finished,
        "winners": winners, "steps": steps, "max_steps": cap,
        "seconds": round(seconds, 4), "interpreter": sys.implementation.name,
    }


def main(argv):
    import json

    name, options, games, seed = argv[0], json.loads(argv[1]), int(argv[2]), int(argv[3])
    try:
        out = run(name, options, games, seed)
    except engine.Illegal as e:
        print(engine.dumps({"error": str(e)}))
        sys.exit(2)
    print(engine.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
