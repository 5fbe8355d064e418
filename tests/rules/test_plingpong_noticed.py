"""PlingPong: what the lights are told, exactly (whose cups, which cup, who shoots again).
Written from the mutation run's survivors (tests/rules/mutation.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import play
from test_plingpong import FIRST, NONE, PP, ball, cue_of, miss, score, shootoff, shots, start


def test_a_shoot_off_again_lights_only_the_players_who_made_it():
    m = play(PP, [ball("green.1"), miss("p2"), ball("yellow.6"), miss("p4")])
    fx = m.apply(score("p1"))
    assert cue_of(fx, "shootoff") == {"t": "cue", "cue": "shootoff", "players": ["p1", "p3"]}


def test_a_player_losing_the_last_cup_and_coming_back_is_lit_by_side():
    m = start("p1", {"red": ["red", None, None, None, None, None]})
    m.apply(ball("red.1"))
    for p in FIRST[1:]:
        m.apply(miss(p))
    fx = m.apply(score("p1"))
    assert cue_of(fx, "out") == {"t": "cue", "cue": "out", "side": "p2"}
    m = start("p1", {"blue": NONE, "green": [None, "green", "green", "green", "green", "green"]})
    for inp in shots(["p1", "p2", "p3", "p1", "p2", "p3"], ["black", None, None, None, None, None]):
        m.apply(inp)
    fx = m.apply(score("p1"))
    assert cue_of(fx, "back") == {"t": "cue", "cue": "back", "side": "p4"}


def test_an_even_black_cup_lights_that_nobody_loses_a_cup():
    m = play(PP, shootoff("p1") + shots(FIRST, ["black", "black", None, None, None, None, None, None]))
    fx = m.apply(score("p1"))
    assert cue_of(fx, "black") == {"t": "cue", "cue": "black", "balls": 2, "result": "even", "losers": []}


def test_a_speed_round_lights_the_cup_that_comes_off():
    m = play(PP, shootoff("p1"), options={"variant": "speed"})
    fx = m.apply(ball("green.2"))
    assert cue_of(fx, "cup.removed") == {"t": "cue", "cue": "cup.removed", "cup": "green.2", "colour": "green",
                                         "height": 1, "why": "speed"}
