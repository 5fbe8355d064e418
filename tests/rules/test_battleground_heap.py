# rules-test: cpython-only
"""One board referees a whole Battleground game in a 64 KB MicroPython heap, whatever the options.

The rules are precompiled with mpy-cross, as a board would load them, into a temporary folder
that comes first on MICROPYPATH (the sources stay out of reach), and seeded random games are
played under `micropython -X heapsize=...`. The measured figures are in
docs/rules/battleground.md; `make bench` prints the smallest heap, worst over the option sets.
"""

import os
import pathlib
import subprocess

import pytest
from battlement.fwsim import compile_module
from support.procs import MICROPYTHON

from shared_rules import battleground

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The largest table: every option at its most pieces, Armory Pack on.
LARGEST = {"warriors": 8, "flags": 5, "bricks": 8, "power_disks": 4, "armory": "on"}

GAMES = (
    "from shared_rules import engine, load\n"
    "g = load('battleground')\n"
    "for seed in range(%d, %d):\n"
    "    m, n, done = engine.playout(g, %r, seed, engine.max_steps(g))\n"
    "    assert done, 'seed %%d: no winner after %%d inputs' %% (seed, n)\n"
    "    m = None  # a board keeps one game at a time\n"
    "print('OK', %d)\n"
)

# As the bridge (or a board) keeps a game: a Match applies each input to a copy of the state,
# and, if asked, refuses a tilt from a warrior the table does not have every seventh input
# (the first refusal loads the reasons).
MATCH_GAMES = (
    "from shared_rules import engine, load\n"
    "g = load('battleground')\n"
    "refused = 0\n"
    "for seed in range(%d, %d):\n"
    "    m = engine.Match(g, %r, seed, keep_log=False)\n"
    "    rng = engine.Rng(seed + 1)\n"
    "    n = 0\n"
    "    while not m.over:\n"
    "        if %r and n %% 7 == 3:\n"
    "            try:\n"
    "                m.apply({'t': 'fell', 'piece': 'orcs.warrior9'})\n"
    "            except engine.Illegal as e:\n"
    "                assert 'unknown piece' in str(e), str(e)\n"
    "                refused += 1\n"
    "        m.apply(rng.choice(m.legal()))\n"
    "        n += 1\n"
    "    m = None\n"
    "print('OK', %d, refused)\n"
)


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A folder holding the .mpy of the package, the engine and Battleground's modules only,
    and an empty folder to run from (so the sources are out of reach)."""
    root = tmp_path_factory.mktemp("battleground-heap")
    pkg = root / "lib" / "shared_rules"
    pkg.mkdir(parents=True)
    rules = ROOT / "shared_rules"
    for name in ("__init__", "engine", "battleground", "battleground_reasons"):
        compile_module(rules / (name + ".py"), pkg / (name + ".mpy"))
    (root / "cwd").mkdir()
    return root


def run(board, heap, code):
    """(exit code, output) of code under MicroPython with this heap and the .mpy rules.

    The same small environment and a relative path wherever the tests run (alone or under xdist,
    in any temporary folder): where the collector finds free blocks, and so the smallest heap,
    shifts with what the process starts with."""
    env = {"MICROPYPATH": "../lib", "PATH": os.environ.get("PATH", "")}  # from board/cwd, however long board is
    proc = subprocess.run([MICROPYTHON, "-X", "heapsize=" + heap, "-c", code], cwd=str(board / "cwd"), env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def play_games(board, heap, options, seeds, per_process=10):
    """Random games of these seeds (a range), ten (or per_process) to a MicroPython process:
    what a game needs, not how a heap fragments over hundreds of games."""
    for first in range(seeds.start, seeds.stop, per_process):
        some = range(first, min(first + per_process, seeds.stop))
        code, out = run(board, heap, GAMES % (some.start, some.stop, options, len(some)))
        assert code == 0 and "OK %d" % len(some) in out, (heap, options, some, out)


def match_games(board, heap, options, seeds, refuse=False):
    """Games through a Match, all in one process; returns how many inputs were refused."""
    code, out = run(board, heap, MATCH_GAMES % (seeds.start, seeds.stop, options, refuse, len(seeds)))
    assert code == 0 and "OK %d " % len(seeds) in out, (heap, options, seeds, refuse, out)
    return int(out.split("OK %d " % len(seeds))[1].split()[0])


def option_choices():
    """Each choice of each option that is not its default, one at a time (as `make bench` soaks)."""
    out = []
    for key in sorted(battleground.OPTIONS):
        spec = battleground.OPTIONS[key]
        for choice in spec["choices"]:
            if choice != spec["default"]:
                out.append({key: choice})
    return out


def test_the_rules_load_from_mpy_not_from_source(board):
    code, out = run(board, "1M", GAMES % (1, 2, None, 1))
    assert code == 0 and "OK 1" in out, out
    code, out = run(board, "1M", "import shared_rules.battleground as m\nprint(m.__file__)\n")
    assert out.strip().endswith("battleground.mpy"), out


def test_default_games_fit_in_a_64k_heap(board):
    play_games(board, "64K", None, range(1, 41))


def test_every_choice_of_every_option_fits_in_a_64k_heap(board):
    # 18 choices, four games each, each choice on its own seeds.
    for k, options in enumerate(option_choices()):
        play_games(board, "64K", options, range(100 + 4 * k, 104 + 4 * k))


def test_the_largest_table_fits_in_a_64k_heap(board):
    # Eight warriors, five flags and eight bricks a side, four power disks, the Armory Pack:
    # a shot can knock over twenty pieces and say forty things about them.
    play_games(board, "64K", LARGEST, range(1, 21))


def test_a_match_copying_the_state_for_each_input_fits_in_a_64k_heap(board):
    for options in (None, {"warriors": 8}, {"flags": 5, "bricks": 8}, LARGEST):
        assert match_games(board, "64K", options, range(1, 9)) == 0


def test_refused_inputs_get_their_reason_on_a_board_in_a_64k_heap(board):
    # The reasons are loaded on the first refusal (battleground_reasons) and stay.
    for options in (None, {"warriors": 8}, {"armory": "on"}):
        assert match_games(board, "64K", options, range(1, 9), refuse=True) > 0


def test_the_largest_table_refusing_inputs_fits_in_the_heap_measured_for_it(board):
    # With the reasons loaded as well the largest table needs up to 68 KB (see the doc).
    assert match_games(board, "68K", LARGEST, range(1, 9), refuse=True) > 0


def test_a_game_does_not_fit_in_a_much_smaller_heap(board):
    # The measurements above mean something: the heap limit is really applied.
    code, out = run(board, "32K", GAMES % (1, 2, None, 1))
    assert code != 0 and "MemoryError" in out, out
