"""One game's rules on a board's heap: the rules precompiled with mpy-cross, as a board loads
them, into a folder that comes first on MICROPYPATH (the sources stay out of reach), and
seeded games played under `micropython -X heapsize=...`.

    board = compiled(tmp_path_factory, "pong-heap", ["medieval_pong"])
    code, out = run(board, "64K", games_code("medieval-pong", range(1, 11), options))
    refused = match_games(board, "64K", "battleground", options, range(1, 9), refuse=(bad_input, words))
"""

import os
import pathlib
import shutil
import subprocess

from battlement.sim.firmware import compile_module

from support.procs import MICROPYTHON

RULES = pathlib.Path(__file__).resolve().parents[2] / "shared_rules"
HOST_ONLY = ("table.py",)  # a game's table adapter runs on the host, never on a board

# Random games, one after the other in one process; a board keeps one game at a time.
_GAMES = (
    "from shared_rules import engine, load\n"
    "g = load(%r)\n"
    "for seed in range(%d, %d):\n"
    "    m, n, done = engine.playout(g, %r, seed, engine.max_steps(g))\n"
    "    assert done, 'seed %%d: no winner after %%d inputs' %% (seed, n)\n"
    "    m = None\n"
    "print('OK', %d)\n"
)

# As the bridge (or a board) keeps a game: a Match applies each input to a copy of the state and,
# when asked, refuses a bad input every seventh one (the first refusal loads the game's reasons).
_MATCH_GAMES = (
    "from shared_rules import engine, load\n"
    "g = load(%r)\n"
    "refused = 0\n"
    "for seed in range(%d, %d):\n"
    "    m = engine.Match(g, %r, seed, keep_log=False)\n"
    "    rng = engine.Rng(seed + 1)\n"
    "    n = 0\n"
    "    while not m.over:\n"
    "        if %r and n %% 7 == 3:\n"
    "            try:\n"
    "                m.apply(%r)\n"
    "            except engine.Illegal as e:\n"
    "                assert any(w in str(e) for w in %r), str(e)\n"
    "                refused += 1\n"
    "        m.apply(rng.choice(m.legal()))\n"
    "        n += 1\n"
    "    m = None\n"
    "print('OK', %d, refused)\n"
)


def compile_games(lib, folders):
    """These games' folders compiled with mpy-cross into lib/shared_rules as a board holds them:
    the package, engine.py, and each game's modules and data files; not its table adapter
    (table.py, host only). Returns the shared_rules folder."""
    pkg = pathlib.Path(lib) / "shared_rules"
    pkg.mkdir(parents=True, exist_ok=True)
    for name in ("__init__", "engine"):
        compile_module(RULES / (name + ".py"), pkg / (name + ".mpy"))
    for folder in folders:
        (pkg / folder).mkdir(exist_ok=True)
        for src in sorted((RULES / folder).glob("*.py")):
            if src.name not in HOST_ONLY:
                compile_module(src, pkg / folder / (src.stem + ".mpy"))
        if (RULES / folder / "data").is_dir():
            shutil.copytree(RULES / folder / "data", pkg / folder / "data", dirs_exist_ok=True)
    return pkg


def compiled(tmp_path_factory, name, folders):
    """A folder holding the .mpy of these games' rules only, and an empty folder to run from."""
    root = tmp_path_factory.mktemp(name)
    compile_games(root / "lib", folders)
    (root / "cwd").mkdir()
    return root


def run(board, heap, code):
    """(exit code, output) of code under MicroPython with this heap and the .mpy rules.

    The same small environment and a relative path wherever the tests run (alone or under xdist,
    in any temporary folder): where the collector finds free blocks, and so the smallest heap,
    shifts with what the process starts with."""
    env = {"MICROPYPATH": "../lib", "PATH": os.environ.get("PATH", "")}
    proc = subprocess.run([MICROPYTHON, "-X", "heapsize=" + heap, "-c", code], cwd=str(board / "cwd"), env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def loads_from_mpy(board, game, module):
    """The board really runs the compiled rules: a game plays, and the module comes from its .mpy."""
    code, out = run(board, "1M", games_code(game, range(1, 2)))
    assert code == 0 and "OK 1" in out, out
    code, out = run(board, "1M", "import shared_rules.%s as m\nprint(m.__file__)\n" % module)
    assert out.strip().endswith(module.replace(".", "/") + ".mpy"), out


def games_code(game, seeds, options=None):
    return _GAMES % (game, seeds.start, seeds.stop, options, len(seeds))


def play_games(board, heap, game, options, seeds, per_process=10):
    """Random games of these seeds (a range), ten (or per_process) to a MicroPython process:
    what a game needs, not how a heap fragments over hundreds of games."""
    for first in range(seeds.start, seeds.stop, per_process):
        some = range(first, min(first + per_process, seeds.stop))
        code, out = run(board, heap, games_code(game, some, options))
        assert code == 0 and "OK %d" % len(some) in out, (heap, options, some, out)


def match_games(board, heap, game, options, seeds, refuse=None):
    """Games through a Match, all in one process; refuse: (bad input, words one of which its reason
    holds) to offer every seventh input. Returns how many inputs were refused."""
    bad, words = refuse or (None, ())
    code, out = run(board, heap, _MATCH_GAMES % (game, seeds.start, seeds.stop, options, refuse is not None, bad,
                                                 tuple(words), len(seeds)))
    assert code == 0 and "OK %d " % len(seeds) in out, (heap, options, seeds, refuse, out)
    return int(out.split("OK %d " % len(seeds))[1].split()[0])
