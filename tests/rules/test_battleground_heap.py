# rules-test: cpython-only
"""One board referees a whole Battleground game in a 64 KB MicroPython heap, whatever the options.

The rules are precompiled with mpy-cross, as a board would load them, into a temporary folder
that comes first on MICROPYPATH (the sources stay out of reach), and seeded random games are
played under `micropython -X heapsize=...`. The measured figures are in
docs/rules/battleground.md; `make bench` prints the smallest heap, worst over the option sets.
"""

import pytest
from support.heap import compiled, games_code, loads_from_mpy, match_games, play_games, run

from shared_rules.battleground import rules as battleground

GAME = "battleground"
# The largest table: every option at its most pieces, Armory Pack on.
LARGEST = {"warriors": 8, "flags": 5, "bricks": 8, "power_disks": 4, "armory": "on"}
# A tilt from a warrior the table does not have: refused, with its reason (battleground/reasons.py).
REFUSE = ({"t": "fell", "piece": "orcs.warrior9"}, ("unknown piece",))


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    return compiled(tmp_path_factory, "battleground-heap", ["battleground"])


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
    loads_from_mpy(board, GAME, "battleground.rules")


def test_default_games_fit_in_a_64k_heap(board):
    play_games(board, "64K", GAME, None, range(1, 41))


def test_every_choice_of_every_option_fits_in_a_64k_heap(board):
    # 18 choices, four games each, each choice on its own seeds.
    for k, options in enumerate(option_choices()):
        play_games(board, "64K", GAME, options, range(100 + 4 * k, 104 + 4 * k))


def test_the_largest_table_fits_in_a_64k_heap(board):
    # Eight warriors, five flags and eight bricks a side, four power disks, the Armory Pack:
    # a shot can knock over twenty pieces and say forty things about them.
    play_games(board, "64K", GAME, LARGEST, range(1, 21))


def test_a_match_copying_the_state_for_each_input_fits_in_a_64k_heap(board):
    for options in (None, {"warriors": 8}, {"flags": 5, "bricks": 8}, LARGEST):
        assert match_games(board, "64K", GAME, options, range(1, 9)) == 0


def test_refused_inputs_get_their_reason_on_a_board_in_a_64k_heap(board):
    # The reasons are loaded on the first refusal (battleground/reasons.py) and stay.
    for options in (None, {"warriors": 8}, {"armory": "on"}):
        assert match_games(board, "64K", GAME, options, range(1, 9), REFUSE) > 0


def test_the_largest_table_refusing_inputs_fits_in_the_heap_measured_for_it(board):
    # With the reasons loaded as well the largest table needs up to 68 KB (see the doc).
    assert match_games(board, "68K", GAME, LARGEST, range(1, 9), REFUSE) > 0


def test_a_game_does_not_fit_in_a_much_smaller_heap(board):
    # The measurements above mean something: the heap limit is really applied.
    code, out = run(board, "32K", games_code(GAME, range(1, 2)))
    assert code != 0 and "MemoryError" in out, out
