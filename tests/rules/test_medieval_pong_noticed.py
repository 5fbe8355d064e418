"""Medieval Pong: what the players hear, see lit and are told, exactly (announcements, the
lights' cues, refusals, the scoreboard's counts). Written from the mutation run's survivors
(tests/rules/mutation.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

import sys

from rtest import Illegal, play, prompts, raises, says
from test_medieval_pong import BASE, PONG, ball, go, layout, miss, start, step


def cue_of(fx, name):
    out = [e for e in fx if e["t"] == "cue" and e["cue"] == name]
    assert len(out) == 1, (name, fx)
    return out[0]


def test_the_lights_know_whose_crown_was_taken_where_and_by_whom():
    m = start()
    go(m, ball("blue", "A1"), ball("red", "C3"), {"t": "ask", "by": "red", "character": "king"})
    fx = go(m, ball("blue", "A1"))  # the Princess's crown, left bare in A1
    assert cue_of(fx, "crown.captured") == {"t": "cue", "cue": "crown.captured", "side": "blue", "tower": "A1",
                                            "by": "red"}
    assert cue_of(fx, "game.won") == {"t": "cue", "cue": "game.won", "side": "red"}


def test_a_crown_taken_during_fire_at_will_ends_the_game_with_nothing_left_to_throw():
    m = start()
    go(m, ball("blue", "A1"))  # fire at will; blue's crown lies bare in A1
    go(m, ball("blue", "A1"))
    assert m.over and m.state["winner"] == "red" and m.awaiting() == []
    assert "step" not in m.view()


def test_the_lights_follow_a_slid_roof_a_falling_guard_and_a_sprung_trap():
    m = start()
    go(m, ball("blue", "B1"), {"t": "roof", "by": "blue", "tower": "A1"}, miss("blue"))
    fx = go(m, ball("blue", "A1"))
    assert cue_of(fx, "roof.slid") == {"t": "cue", "cue": "roof.slid", "side": "blue", "tower": "B1", "on": "A1"}
    m = start(blue=layout(C3="guard"))
    go(m, ball("blue", "C3"), {"t": "stack", "by": "blue", "tower": "A1"}, miss("blue"))
    fx = go(m, ball("blue", "C3"))
    assert cue_of(fx, "tower.destroyed") == {"t": "cue", "cue": "tower.destroyed", "side": "blue", "tower": "C3"}
    m = start(blue=layout(C3="hunter"))
    go(m, ball("blue", "C3"), {"t": "trap", "by": "blue", "tower": "C1"}, miss("blue"))
    fx = go(m, ball("blue", "C1"))  # red's ball into blue's trapped Ghost
    assert cue_of(fx, "trap.sprung") == {"t": "cue", "cue": "trap.sprung", "side": "blue", "tower": "C1",
                                         "bitten": "red"}


def test_the_seers_answer_is_lit_for_the_asking_side_and_an_unknown_character_is_refused_by_name():
    m = start(blue=layout(C3="princess", A1="seer"))
    go(m, ball("blue", "A1"))
    e = raises(Illegal, m.apply, {"t": "ask", "by": "blue", "character": "merlin"})
    assert str(e).startswith("the Seer knows no character 'merlin' (archer, architect, blacksmith, ")
    fx = go(m, {"t": "ask", "by": "blue", "character": "king"})
    assert cue_of(fx, "seer.answered") == {"t": "cue", "cue": "seer.answered", "side": "blue"}


def test_what_is_said_when_the_battle_begins_a_throw_misses_and_fire_at_will_starts():
    m = start({"tactical": True})
    assert says(m.effects[-1]) == ["Blue's kingdom is ready.", "Let the battle begin!",
                                   "Red, your turn: throw at Blue's kingdom. Or swap two of your towers instead."]
    turn = "Blue, your turn: throw at Red's kingdom. Or swap two of your towers instead."
    assert says(go(m, miss("red"))) == ["Missed.", turn]
    fx = go(m, ball("red", "A1"))
    assert says(fx)[-1] == "FIRE AT WILL! Red's Princess calls every side to throw at once, as fast as you like."


def test_two_balls_in_ask_the_thrower_to_choose_between_the_towers_they_entered():
    m = start()
    fx = go(m, miss("red"), ball("red", "B2"), ball("blue", "C1"), ball("blue", "C3"))  # red's Blacksmith
    assert says(fx)[-1] == "Both balls are in: Red chooses which tower is destroyed."
    assert prompts(fx)[-1] == {"t": "prompt", "to": "red", "ask": "Choose which tower its two balls destroy.",
                               "choices": ["blue:C1", "blue:C3"]}


def test_a_blind_magician_who_does_not_rebuild_says_so():
    m = start()
    go(m, ball("blue", "B3"), ball("red", "C1"))
    assert says(go(m, {"t": "pass", "by": "blue"}))[0] == "Blue does not rebuild."


def test_the_dragons_throw_gets_no_extra_throw_even_for_a_side_given_them():
    # Balance the Levels gives a second throw when the first misses; a missed Dragon's throw rages
    m = start({"extra_throw": "blue"})
    go(m, ball("blue", "A3"))
    fx = go(m, miss("blue"))
    assert says(fx) == ["Missed! The Dragon is mad with rage: Blue must destroy one of its own towers."]
    assert step(m) == {"k": "destroy", "by": "blue", "why": "rage"}


def test_refusals_name_the_tower_and_its_side_and_what_cannot_be_done_now():
    m = start()
    go(m, ball("blue", "B1"), {"t": "roof", "by": "blue", "tower": "A1"}, miss("blue"))
    e = raises(Illegal, m.apply, ball("blue", "B1"))
    assert str(e) == "a ball cannot enter tower B1 of blue now: it is a roof (upside down)"
    e = raises(Illegal, m.apply, {"t": "place", "by": "red", "tower": "A1", "character": "king"})
    assert str(e) == "placing a character is not possible now (the game is in its play phase)"


def test_two_sets_with_locked_characters_is_refused_naming_them():
    e = raises(Illegal, play, PONG, [], {"sets": 2, "unlocked": "none"})
    assert str(e) == ("team base needs Archer, Catapult, Guard, Hunter, Ninja, Two-Sword Knight, "
                      "still locked by padlocks")


def test_the_scoreboard_counts_the_characters_each_side_picked():
    m = play(PONG, [], {"team": "full-set", "first": "blue"})
    go(m, {"t": "pick", "by": "blue", "character": "ninja"})
    sides = m.view()["sides"]
    assert (sides["blue"]["picked"], sides["red"]["picked"]) == (1, 0)
    go(m, {"t": "pick", "by": "red", "character": "archer"}, {"t": "pick", "by": "blue", "character": "seer"})
    sides = m.view()["sides"]
    assert (sides["blue"]["picked"], sides["red"]["picked"]) == (2, 1)
    # a custom team's picks are secret until both are complete: then each side shows its six
    m = play(PONG, [], {"team": "custom"})
    for s in ("red", "blue"):
        for c in ("seer", "ghost", "gunner", "architect", "blacksmith", "blind-magician"):
            assert "picked" not in m.view()["sides"][s]
            m.apply({"t": "pick", "by": s, "character": c})
    sides = m.view()["sides"]
    assert m.state["phase"] == "place" and (sides["red"]["picked"], sides["blue"]["picked"]) == (6, 6)


def test_a_default_game_never_loads_the_team_rules():
    # a board's heap holds only what the game needs (docs/rules/engine.md): the base team needs no team rules
    name = "shared_rules.medieval_pong.team"
    package = sys.modules["shared_rules.medieval_pong"]
    sys.modules.pop(name, None)
    if hasattr(package, "team"):
        delattr(package, "team")  # else `from ... import team` finds it there without importing
    script = []
    for s in ("red", "blue"):
        for t in sorted(BASE):
            script.append({"t": "place", "by": s, "tower": t, "character": BASE[t]})
        script.append({"t": "ready", "by": s})
    try:
        m = play(PONG, script + [ball("blue", "C1"), miss("blue")])  # not start(): it reads the scenarios
        assert m.awaiting() == ["red"] and name not in sys.modules
    finally:
        __import__(name)
