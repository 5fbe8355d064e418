"""PlingPong: what the lights are told and the players hear, exactly (whose cups, which cup, who
shoots again, why an input is refused).
Written from the mutation run's survivors (tests/rules/mutation.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Illegal, play, raises
from test_plingpong import FIRST, NONE, PP, ball, cue_of, miss, only, score, shootoff, shots, start, void


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


def shoot_off():
    return play(PP, [])


def rock_paper_scissors():
    return play(PP, [], options={"players": 3, "removed": "yellow"})


def shoot_off_done():
    return play(PP, [miss("p1"), miss("p2"), miss("p3"), miss("p4")])


def red_down_to_one_cup():
    return start("p1", {"red": ["red", None, None, None, None, None]})


def won():
    m = start("p1", {"red": only("red"), "yellow": NONE, "blue": NONE})
    m.apply(ball("red.1"))
    for p in FIRST[1:]:
        if p in m.awaiting():
            m.apply(miss(p))
    m.apply(score("p1"))
    return m


CUPS = "cups are named black, or TRAY.1 to TRAY.6 with TRAY one of green, red, yellow, blue"
# (the game so far, the refused input, the words the players get)
REFUSALS = [
    (shoot_off, {"t": "fly"}, "unknown input type 'fly' for PlingPong (ball, miss, void, score, middle)"),
    (shoot_off, {"t": "miss", "by": "p9"}, "miss needs 'by', one of the players p1, p2, p3, p4; got 'p9'"),
    (shoot_off, ball("green.9"), "there is no cup 'green.9' on this table: " + CUPS),
    (shoot_off, ball("purple.1"), "there is no cup 'purple.1' on this table: " + CUPS),
    (shoot_off, void("p1"), "there is no shot to void: only the last shot, if it landed in a cup, can be voided"),
    (shoot_off, {"t": "middle", "by": "p1"},
     "the colours are already chosen; rock, paper, scissors is only played before the shoot-off"),
    (shoot_off, score("p1"), "the shoot-off is not over: waiting for Player 1 (green) to shoot"),
    (shoot_off, miss("p2"), "it is Player 1 (green)'s shot, not Player 2 (red)'s"),
    (rock_paper_scissors, miss("p1"), "first play rock, paper, scissors: the loser takes the middle colour, green"),
    (rock_paper_scissors, ball("red.1"), "a ball in red.1 before rock, paper, scissors: nobody is shooting yet"),
    (shoot_off_done, miss("p1"), "every ball of the shoot-off is in: waiting for Player 1 (green) to score it"),
    (shoot_off_done, score("p2"), "Player 1 (green) counts the cups, not Player 2 (red)"),
    (shoot_off_done, ball("green.1"), "a ball in green.1 after the last shot of the shoot-off: take it out, then score"),
    (red_down_to_one_cup, ball("red.2"), "there is no cup on red.2 (it was removed), so no ball can land there"),
    (won, miss("p1"), "the game is over"),
]


def test_every_refusal_tells_the_players_what_was_wrong_in_words():
    for game_so_far, bad, words in REFUSALS:
        m = game_so_far()
        e = raises(Illegal, m.apply, bad)
        assert str(e) == words, (bad, str(e))


def test_each_cup_stacked_in_high_stack_is_lit_with_the_stack_it_goes_on_and_its_height():
    m = play(PP, shootoff("p1"), options={"variant": "high-stack"})
    for inp in shots(FIRST, ["red.1", "red.2", None, None, None, None, None, None]):
        m.apply(inp)
    fx = m.apply(score("p1"))
    assert [e for e in fx if e["t"] == "cue" and e["cue"] == "cup.stacked"] == [
        {"t": "cue", "cue": "cup.stacked", "cup": "red.1", "onto": "red.3", "height": 2},
        {"t": "cue", "cue": "cup.stacked", "cup": "red.2", "onto": "red.4", "height": 2},
    ]


def test_the_black_cup_shows_no_ball_until_one_lands_in_it():
    m = start("p1")
    assert m.view()["black"] == 0
    m.apply(ball("black"))
    assert m.view()["black"] == 1
