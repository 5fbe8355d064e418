"""Ringo's computer opponent: legal, deterministic, sees wins and threats, beats the random player.

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Match, Rng, dumps, load, raises, scale
from test_ringo import at

from shared_rules.ringo import opponent as opp

ringo = load("ringo")
A = "attackers"
D = "defenders"


def test_the_suggested_move_is_legal_and_the_state_is_untouched():
    m = Match(ringo, None, 0)
    rng = Rng(5)
    for _ in range(30):
        if m.over:
            break
        before = dumps(m.state)
        for strength in opp.STRENGTHS[:3]:
            inp = opp.best_move(m.state, strength)
            assert inp in m.legal(), inp
        assert dumps(m.state) == before
        m.apply(rng.choice(m.legal()))


def test_the_same_position_gets_the_same_move():
    m = Match(ringo, None, 0)
    assert opp.best_move(m.state, 3) == opp.best_move(m.state, 3)


def test_attackers_take_the_winning_step_into_the_castle():
    m = at(["b1", "g5", "a5"], ["e3"], castle=1)
    for strength in opp.STRENGTHS:
        assert opp.best_move(m.state, strength) == {"t": "move", "by": A, "from": "b1", "to": "castle"}


def test_defenders_capture_the_attacker_in_the_castle_before_a_second_gets_in():
    # b1 would walk in next turn; taking the castle's attacker (c1 over the castle to g1) stops it
    m = at(["b1", "f5", "a5"], ["c1"], castle=1, turn=D)
    assert opp.best_move(m.state, 2) == {"t": "move", "by": D, "from": "c1", "to": "g1"}


def test_defenders_take_the_last_but_one_attacker():
    m = at(["c3", "f5"], ["c4", "a1"], turn=D)
    assert opp.best_move(m.state, 1) == {"t": "move", "by": D, "from": "c4", "to": "c2"}


def test_a_pass_is_suggested_only_when_allowed():
    # the lone defender is boxed in; with the pass variant passing is its only move
    m = at(["a1", "b1", "d1", "e1", "c2", "c3", "g4"], ["c1"], turn=D, options={"defenders_may_pass": True})
    assert opp.best_move(m.state, 2) == {"t": "pass", "by": D}


def test_bad_strength_or_a_finished_game_is_refused_clearly():
    m = Match(ringo, None, 0)
    e = raises(ValueError, opp.best_move, m.state, 9)
    assert "strength must be 1, 2, 3 or 4" in str(e)
    m.state["over"] = True
    e = raises(ValueError, opp.best_move, m.state, 2)
    assert "game is over" in str(e)


def _games_won(side, games, strength, seed):
    won = 0
    for g in range(games):
        m = Match(ringo, None, seed + g, keep_log=False)
        rng = Rng(seed * 31 + g)
        while not m.over:
            if m.state["turn"] == side:
                m.apply(opp.best_move(m.state, strength))
            else:
                m.apply(rng.choice(m.legal()))
        won += m.state["winner"] == side
    return won


def test_strength_2_beats_the_random_player_in_95_percent_of_200_games_from_either_side():
    games = scale(200, 20)
    for side in (A, D):
        won = _games_won(side, games, 2, 1)
        assert won * 100 >= 95 * games, "%s won %d of %d" % (side, won, games)
