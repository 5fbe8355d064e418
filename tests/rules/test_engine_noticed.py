"""The rules contract: what the command line, the journal and every game's state rely on, exactly.
Written from the mutation run's survivors (tests/rules/mutation.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Illegal, Match, dumps, engine, load, play, raises
from test_engine import Nim

from shared_rules import GAMES


def test_every_games_state_names_its_game_and_holds_what_the_contract_lists():
    for name in sorted(GAMES):
        state = Match(load(name), None, 1).state
        assert state["game"] == name, name
        assert state["over"] is False and state["winner"] is None and "options" in state and "rng" in state


def test_an_unknown_game_is_refused_naming_the_known_ones():
    e = raises(KeyError, load, "chess")
    assert e.args[0] == "unknown game 'chess' (known: battleground, medieval-madness, medieval-pong, plingpong, ringo)"


def test_random_playouts_stop_at_the_games_step_cap_and_count_their_steps():
    # `battlement playout` reports the steps and calls a game at its cap unfinished
    assert engine.max_steps(load("ringo")) == 3000 and engine.max_steps(load("medieval-madness")) == 10000
    assert engine.max_steps(Nim) == engine.DEFAULT_MAX_STEPS == 5000
    m, steps, done = engine.playout(load("medieval-pong"), None, 1, 3)
    assert (steps, done) == (3, False) and not m.state["over"]
    m, steps, done = engine.playout(Nim, None, 1, 100)
    assert done and 4 <= steps <= 7 and m.state["stones"] == 0


def test_canonical_json_spells_a_character_beyond_the_first_plane_as_its_surrogate_pair():
    # what JSON itself writes (json.dumps(ensure_ascii=True)), so a journal line reads back the same
    assert dumps("Crown \U0001F451") == '"Crown \\ud83d\\udc51"'
    assert dumps({"k": "\U0001F3F0 \u00e9"}) == '{"k":"\\ud83c\\udff0 \\u00e9"}'


def test_a_saved_match_names_its_game_and_restores_to_the_same_game():
    m = play(Nim, [{"t": "take", "by": "red", "n": 2}], {"stones": 5}, seed=4)
    data = m.to_data()
    assert data == {"game": "nim", "options": {"stones": 5}, "seed": 4, "inputs": [{"t": "take", "by": "red", "n": 2}]}
    again = Match.restore(Nim, data)
    assert dumps(again.state) == dumps(m.state) and again.view()["game"] == "nim"


def test_bad_options_and_inputs_are_refused_in_words():
    e = raises(Illegal, Match, Nim, {"colour": "red"}, 1)
    assert str(e) == "unknown option 'colour' for nim (known: stones)"
    e = raises(Illegal, Match, Nim, {"stones": 6}, 1)
    assert str(e) == "option stones=6 is not one of [5, 7, 9]"
    m = Match(Nim, None, 1)
    for bad in ("take", None, {"n": 1}):
        e = raises(Illegal, m.apply, bad)
        assert str(e) == "an input is an object with a 't' field, got %r" % (bad,)
    take = {"t": "take", "by": "red", "n": 2}
    m = play(Nim, [take, {"t": "take", "by": "blue", "n": 2}, take, {"t": "take", "by": "blue", "n": 1}])
    assert m.over
    assert str(raises(Illegal, m.apply, {"t": "take", "by": "red", "n": 1})) == "the game is over"


class Rows:
    """A toy game whose board is rows of cells (lists in a list): a move marks its cells one by one and
    is refused at the first cell already marked, half done."""

    NAME = "rows"
    TITLE = "Toy Rows"
    OPTIONS = {}  # noqa: RUF012
    SENSED = ()

    @staticmethod
    def setup(options, seed):
        return {"game": "rows", "options": options, "rng": engine.seed_rng(seed), "over": False, "winner": None,
                "rows": [[None, None], [None, None]]}

    @staticmethod
    def awaiting(state):
        return ["x"]

    @staticmethod
    def legal(state):
        return []

    @staticmethod
    def apply(state, inp):
        for r, c in inp["cells"]:
            if state["rows"][r][c] is not None:
                raise Illegal("cell %d,%d is already marked" % (r, c))
            state["rows"][r][c] = "x"
        return []

    @staticmethod
    def view(state, viewer):
        return {"rows": state["rows"]}


def test_a_move_refused_half_way_leaves_every_row_of_the_board_as_it_was():
    m = play(Rows, [{"t": "mark", "cells": [[0, 0]]}])
    e = raises(Illegal, m.apply, {"t": "mark", "cells": [[1, 0], [0, 1], [0, 0]]})
    assert str(e) == "cell 0,0 is already marked"
    assert m.view()["rows"] == [["x", None], [None, None]] and len(m.inputs) == 1
