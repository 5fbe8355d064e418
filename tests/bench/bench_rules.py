"""Rules benchmark, for every registered game whose rules import.

Figures, each beside a baseline measured in the same run:
- random playouts per second under CPython (baseline: engine.clone of a mid-game state, and the
  time of one playout step, i.e. what a step costs in clones);
- random playouts per second under MicroPython, the same games, as a ratio to CPython;
- a soak: every choice of every option, BENCH_SOAK_GAMES games each (default 500), all must end;
- the smallest MicroPython heap (-X heapsize, binary search) that plays one whole game, from
  .mpy precompiled with mpy-cross (as a board would load it) and from source, beside the heap
  an empty interpreter needs and the heap the loaded rules occupy.

Run: make bench, or .venv/bin/python tests/bench/run.py rules
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "host"))
sys.path.insert(0, str(ROOT / "tests"))

from battlement.cli.rules import micropython_binary, playout_micropython
from support.heap import compile_games

from shared_rules import GAMES, engine, load, playout_main

SOAK_GAMES = int(os.environ.get("BENCH_SOAK_GAMES", "500"))
TARGET_SECONDS = 1.0


def line(game, what, value, baseline=""):
    print("  %-17s %-44s %s%s" % (game, what, value, ("   [" + baseline + "]") if baseline else ""), flush=True)


def mid_game_state(game, seed=3):
    """The state halfway through one random game."""
    _, steps, _ = engine.playout(game, None, seed, engine.max_steps(game))
    m2 = engine.Match(game, None, seed, keep_log=False)
    rng = engine.Rng(seed + 1)
    for _ in range(steps // 2):
        game.apply(m2.state, rng.choice(game.legal(m2.state)))
    return m2.state


def bench_speed(name, game):
    probe = playout_main.run(name, None, 5, 1)
    per_game = max(probe["seconds"] / 5, 1e-4)
    n = int(min(2000, max(10, TARGET_SECONDS / per_game)))
    cp = playout_main.run(name, None, n, 1)
    rate = cp["games"] / cp["seconds"]
    state = mid_game_state(game)
    reps = 2000
    t0 = time.perf_counter()
    for _ in range(reps):
        engine.clone(state)
    clone_us = (time.perf_counter() - t0) / reps * 1e6
    step_us = cp["seconds"] / max(cp["steps"], 1) * 1e6
    line(name, "CPython random playouts/s", "%.0f" % rate,
         "%d games, %.0f steps/game; one step %.1f us = %.2f x engine.clone of a mid-game state (%.1f us)"
         % (n, cp["steps"] / n, step_us, step_us / clone_us, clone_us))
    mp = playout_micropython(name, {}, n, 1)
    mp_rate = mp["games"] / max(mp["seconds"], 1e-6)
    same = (mp["winners"], mp["steps"]) == (cp["winners"], cp["steps"])
    line(name, "MicroPython random playouts/s", "%.0f" % mp_rate,
         "%.2f x CPython on the same %d games; identical results: %s" % (mp_rate / rate, n, "yes" if same else "NO"))


def option_sets(game):
    sets = []
    for key in sorted(game.OPTIONS):
        spec = game.OPTIONS[key]
        for choice in spec.get("choices") or ():
            if choice != spec["default"]:
                sets.append({key: choice})
    return [{}] + sets


def bench_soak(name, game):
    t0 = time.perf_counter()
    total = finished = 0
    bad = []
    for opts in option_sets(game):
        try:
            out = playout_main.run(name, opts, SOAK_GAMES, 7)
        except engine.Illegal as e:  # an option that needs others (e.g. a locked character)
            bad.append("%s: %s" % (opts, e))
            continue
        total += out["games"]
        finished += out["finished"]
        odd = [w for w in out["winners"] if w in ("step-cap",)]
        if odd:
            bad.append("%s: %s" % (opts, out["winners"]))
    secs = time.perf_counter() - t0
    line(name, "soak: every option choice x %d games" % SOAK_GAMES, "%d/%d finished" % (finished, total),
         "%.1f s, %.0f games/s%s" % (secs, total / secs, ("; " + "; ".join(bad)) if bad else ""))


def compile_mpy(dest):
    compile_games(dest, sorted(p.parent.name for p in (ROOT / "shared_rules").glob("*/rules.py")))


GAME_CODE = ("from shared_rules import engine, load\n"
             "g = load(%r)\n"
             "m, n, done = engine.playout(g, None, 3, engine.max_steps(g))\n"
             "print('OK', n, done)\n")
LIVE_CODE = ("import gc\n"
             "from shared_rules import engine, load\n"
             "g = load(%r)\n"
             "rng = engine.Rng(4)\n"
             "gc.collect()\n"
             "base = gc.mem_alloc()\n"
             "m = engine.Match(g, None, 3, keep_log=False)\n"
             "peak = 0\n"
             "n = 0\n"
             "while not m.state['over'] and n < engine.max_steps(g):\n"
             "    g.apply(m.state, rng.choice(g.legal(m.state)))\n"
             "    n += 1\n"
             "    gc.collect()\n"
             "    peak = max(peak, gc.mem_alloc() - base)\n"
             "print('OK', peak)\n")
IMPORT_CODE = "import gc\nfrom shared_rules import engine, load\ng = load(%r)\ngc.collect()\nprint('OK', gc.mem_alloc())\n"


def runs_in(code, kb, path, cwd):
    env = dict(os.environ, MICROPYPATH=path)
    try:
        p = subprocess.run([micropython_binary(), "-X", "heapsize=%dK" % kb, "-c", code], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        return None
    return p.stdout if p.returncode == 0 and "OK" in p.stdout else None


def smallest_heap(code, path, cwd, hi=8192):
    """The smallest heap in KB (binary search, 1 KB steps) in which code prints OK, or None."""
    if runs_in(code, hi, path, cwd) is None:
        return None
    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        if runs_in(code, mid, path, cwd) is None:
            lo = mid + 1
        else:
            hi = mid
    return hi


def bench_heap(name, mpy_dir, cwd):
    empty = smallest_heap("print('OK')", str(mpy_dir), cwd)
    loaded = runs_in(IMPORT_CODE % name, 4096, str(mpy_dir), cwd)
    code_kb = int(loaded.split()[-1]) / 1024 if loaded else float("nan")
    kb = smallest_heap(GAME_CODE % name, str(mpy_dir), cwd)
    live = runs_in(LIVE_CODE % name, 4096, str(mpy_dir), cwd)
    live_kb = int(live.split()[-1]) / 1024 if live else float("nan")
    src = smallest_heap(GAME_CODE % name, str(ROOT), cwd)
    line(name, "MicroPython heap for one game (.mpy)", "%s KB" % kb,
         "empty interpreter %s KB; rules loaded in RAM %.0f KB, so the game itself needs ~%.0f KB "
         "(frozen in a board's flash the code takes no heap); target 64 KB" % (empty, code_kb, (kb or 0) - code_kb))
    line(name, "MicroPython live game data, peak", "%.1f KB" % live_kb,
         "gc.mem_alloc() after each input, above the loaded rules (the Match and state the game keeps)")
    line(name, "MicroPython heap for one game (source)", "%s KB" % src, "compiling on the board costs the difference")
    if name == "battleground":
        bench_heap_options(name, mpy_dir, cwd, kb)


OPTIONS_CODE = ("from shared_rules import engine, load\n"
                "g = load(%r)\n"
                "for seed in (1, 2, 3):\n"
                "    m, n, done = engine.playout(g, %r, seed, engine.max_steps(g))\n"
                "    m = None\n"
                "print('OK')\n")


def bench_heap_options(name, mpy_dir, cwd, default_kb):
    """The smallest heap over every option set the soak plays (seeds 1-3 each), worst first."""
    sizes = []
    for opts in option_sets(load(name)):
        sizes.append((smallest_heap(OPTIONS_CODE % (name, opts), str(mpy_dir), cwd) or 9999, opts))
    worst = max(sizes, key=lambda s: s[0])
    line(name, "MicroPython heap, worst option set (.mpy)", "%s KB" % worst[0],
         "%s of %d option sets, 3 games each; default options seed 3: %s KB; target 64 KB"
         % (worst[1] or "defaults", len(sizes), default_kb))


def main():
    names = []
    for name in sorted(GAMES):
        try:
            names.append((name, load(name)))
        except ImportError as e:
            print("  %-17s skipped: %s" % (name, e))
    for name, game in names:
        bench_speed(name, game)
    for name, game in names:
        bench_soak(name, game)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="battlement-bench-rules-"))
    try:
        compile_mpy(tmp / "mpy")
        cwd = tmp / "cwd"  # a neutral working directory: '' on sys.path must not find the sources
        cwd.mkdir()
        for name, _ in names:
            bench_heap(name, tmp / "mpy", str(cwd))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
