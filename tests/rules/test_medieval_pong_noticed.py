"""Medieval Pong: what the players hear, see lit and are told, exactly (announcements, the
lights' cues, refusals, the scoreboard's counts). Written from the mutation run's survivors
(tests/rules/mutation.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

import sys

from rtest import Illegal, play, prompts, raises, says
from test_medieval_pong import BASE, PONG, ball, go, layout, miss, start, step

from shared_rules.medieval_pong.switches import switch_input, switch_of

TWO_SET_NAMES = sorted(PONG.tower_names(2))
TWO_SET_HAND = sorted(PONG.NOBLES + PONG.NOBLES + PONG.BASE + PONG.ALTERNATIVE)
TWO_SETS = {}  # the two-set kingdom laid out in name order
for _t, _c in zip(TWO_SET_NAMES, TWO_SET_HAND):
    TWO_SETS[_t] = _c


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


def place(side, t, c):
    return {"t": "place", "by": side, "tower": t, "character": c}


def begun():
    return play(PONG, [])


def two_balls():
    m = start()
    go(m, ball("blue", "B2"), ball("red", "C1"))
    return m


def roof_step():
    m = start()
    go(m, ball("blue", "B1"))
    return m


def rebuild_step():
    m = start()
    go(m, ball("blue", "C1"), miss("blue"), ball("blue", "B3"), ball("red", "C3"))
    return m


def rage():
    m = start()
    go(m, ball("blue", "A3"), miss("blue"))
    return m


def fire_at_will():
    m = start()
    go(m, ball("blue", "A1"))
    return m


def trap_step():
    m = start(blue=layout(C3="hunter"))
    go(m, ball("blue", "C3"))
    return m


def gunner_throw():
    m = start()
    go(m, ball("blue", "C2"))
    return m


def won():
    m = start()
    go(m, ball("blue", "A1"), ball("blue", "A1"))
    return m


ALL = "architect, blacksmith, blind-magician, dragon, ghost, gunner, king, princess, seer"
# (the game so far, the refused input, the words the players get)
REFUSALS = [
    (begun, {"t": "place", "by": "red", "tower": "A1"}, "input 'place' needs a 'character' field"),
    (begun, place("green", "A1", "king"), "by must be red or blue, got 'green'"),
    (begun, place("red", "D9", "king"), "there is no tower 'D9' in red's kingdom (A1..C3)"),
    (begun, {"t": "fly"}, ("unknown input type 'fly' for medieval-pong (known: ask, ball, choose, destroy, miss, pass, "
                          "pick, place, ready, rebuild, roof, stack, swap, tie, tilt, touch, trap)")),
    (begun, place("red", "A1", "ninja"), "red has no 'ninja' left to place (left: %s)" % ALL),
    (begun, {"t": "ready", "by": "red"}, "red still has to place: %s" % ALL),
    (begun, ball("blue", "A1"), "a ball is not possible now (the game is in its place phase)"),
    (start, miss("blue"), "blue cannot act now: waiting for red"),
    (start, {"t": "ask", "by": "red", "character": "king"},
     "a question to the Seer is not expected now: waiting for Red to throw"),
    (start, {"t": "choose", "by": "red", "side": "blue", "tower": "A1"},
     "choosing a tower is not expected now: waiting for Red to throw"),
    (start, {"t": "swap", "by": "red"},
     "red must throw now: swapping instead of throwing needs the tactical variant, at the start of a normal turn"),
    (start, {"t": "tilt", "side": "blue", "tower": "A1"},
     "tower A1 of blue is not a roof; only a roof tipping over changes the game"),
    (start, {"t": "tie", "side": "blue", "tower": "A1"}, "a tie is not expected now: waiting for Red to throw"),
    (start, {"t": "roof", "by": "red", "tower": "A1"},
     "placing a tower on another is not expected now: waiting for Red to throw"),
    (start, {"t": "trap", "by": "red", "tower": "A1"}, "hiding the trap is not expected now: waiting for Red to throw"),
    (start, {"t": "pass", "by": "red"}, "passing is not expected now: waiting for Red to throw"),
    (start, {"t": "destroy", "by": "red", "tower": "A1"},
     "destroying a tower is not expected now: waiting for Red to throw"),
    (start, {"t": "touch", "by": "red"}, "a Ninja touch is not expected now: waiting for Red to throw"),
    (start, {"t": "pick", "by": "red", "character": "ninja"},
     "picking a character is not possible now (the game is in its play phase)"),
    (start, {"t": "ready", "by": "red"}, "declaring a kingdom ready is not possible now (the game is in its play phase)"),
    (two_balls, ball("red", "C1"), "a ball is already in tower C1 of red in this throw"),
    (roof_step, {"t": "roof", "by": "blue", "tower": "B1"},
     "tower B1 of blue cannot take a tower on top: it is not standing free"),
    (roof_step, miss("blue"),
     "a miss is not expected now: waiting for Blue to put the Architect's tower as a roof on another tower"),
    (rebuild_step, {"t": "rebuild", "by": "blue", "tower": "A1", "character": "ghost"},
     ("blue cannot rebuild tower A1 with the Ghost: the tower must be on its rampart and the character among its "
     "discarded ones")),
    (rebuild_step, {"t": "rebuild", "by": "blue", "tower": "C1", "character": "merlin"},
     ("blue cannot rebuild tower C1 with the merlin: the tower must be on its rampart and the character among its "
     "discarded ones")),
    (rage, {"t": "destroy", "by": "blue", "tower": "A3"},
     "blue cannot destroy tower A3 (choices: A1, A2, B1, B2, B3, C1, C2, C3)"),
    (fire_at_will, {"t": "tie", "side": "blue", "tower": "C1"},
     "in a tie the ball that counts is the one in red's kingdom (blue just lost its Princess)"),
    (fire_at_will, {"t": "touch", "by": "blue"}, ("only blue, whose Ninja was hit, may return balls during this fire "
                                                 "at will")),
    (fire_at_will, {"t": "swap", "by": "red"}, "a swap is not expected now: fire at will is on"),
    (trap_step, {"t": "trap", "by": "blue", "tower": "C3"},
     "the trap goes in a standing tower of blue; tower C3 is not one"),
    (gunner_throw, ball("blue", "C2"), "a ball cannot enter tower C2 of blue now: it is out of the kingdom"),
    (won, miss("red"), "the game is over"),
]


def test_every_refusal_tells_the_players_what_was_wrong_in_words():
    for game_so_far, bad, words in REFUSALS:
        m = game_so_far()
        e = raises(Illegal, m.apply, bad)
        assert str(e) == words, (bad, str(e))
    m = two_balls()
    go(m, ball("red", "C3"))
    e = raises(Illegal, m.apply, {"t": "choose", "by": "blue", "side": "red", "tower": "A1"})
    assert str(e) == "no ball of this throw is in tower A1 of red"


def test_wrong_team_options_and_padlocks_are_refused_in_words():
    e = raises(Illegal, play, PONG, [], {"unlocked": "merlin"})
    assert str(e) == ("option unlocked: 'merlin' is not an alternative character (archer, catapult, guard, hunter, "
                      "ninja, two-sword-knight)")
    e = raises(Illegal, play, PONG, [], {"sets": 2, "team": "custom"})
    assert str(e) == "with 2 sets each side takes the fixed 18-character roster; leave team=base"
    e = raises(Illegal, PONG.unlocks, start().state, None)
    assert str(e) == "padlocks are ticked after a finished game"
    e = raises(Illegal, PONG.unlocks, won().state, None, "king")
    assert str(e) == ("'king' has no padlock (alternative characters: archer, catapult, guard, hunter, ninja, "
                      "two-sword-knight)")
    e = raises(Illegal, PONG.unlocks, won().state, {"ticks": {"ninja": 1}}, "ninja")
    assert str(e) == "the Ninja is already unlocked"


def test_the_architect_and_the_guard_say_where_their_tower_goes():
    m = start()
    fx = go(m, ball("blue", "B1"), {"t": "roof", "by": "blue", "tower": "A1"})
    assert "Blue's Architect turns tower B1 into a roof over tower A1." in says(fx)
    m = start(blue=layout(C3="guard"))
    fx = go(m, ball("blue", "C3"), {"t": "stack", "by": "blue", "tower": "A1"})
    assert "Blue's Guard stacks tower C3 on tower A1." in says(fx)


def test_a_guard_sensed_fallen_off_its_tower_is_lit_as_destroyed():
    m = start(blue=layout(C3="guard"))
    go(m, ball("blue", "C3"), {"t": "stack", "by": "blue", "tower": "A2"}, miss("blue"))
    fx = go(m, ball("blue", "A2"))  # a ball in the King's tower: the Guard's tower on it had fallen
    assert says(fx)[0] == "The Guard's tower C3 had fallen off tower A2 and goes to the rampart."
    assert fx[1] == {"t": "cue", "cue": "tower.destroyed", "side": "blue", "tower": "C3"}


def last_tower(character):
    """Blue with every tower down but the one holding `character`, which red's ball enters."""
    m = start(blue=layout(C3=character))
    for t in ("A1", "A2", "A3", "B1", "B2", "B3", "C1", "C2"):
        m.state["sides"]["blue"]["towers"][t]["st"] = "box"
    return m, go(m, ball("blue", "C3"))


def test_a_hunter_or_guard_with_no_standing_tower_left_says_so_and_play_goes_on():
    m, fx = last_tower("hunter")
    assert says(fx)[1:] == ["No tower left to hide the trap in.", "Blue, your turn: throw at Red's kingdom."]
    m, fx = last_tower("guard")
    assert says(fx)[1] == "No tower to put it on: tower C3 goes to the rampart."
    assert m.state["sides"]["blue"]["towers"]["C3"]["st"] == "box" and step(m)["k"] == "throw"


def test_a_crown_forced_to_be_lost_is_asked_of_its_side_with_the_crowns_on_offer():
    m = start({"sets": 2}, red=TWO_SETS, blue=TWO_SETS)
    go(m, ball("blue", TWO_SET_NAMES[TWO_SET_HAND.index("ninja")]), {"t": "touch", "by": "blue"})
    reds = m.state["sides"]["red"]["towers"]
    for t in TWO_SET_NAMES:  # leave red only its Dragons and bare crowns
        if TWO_SETS[t] in ("princess", "king"):
            reds[t]["ch"] = None
        elif TWO_SETS[t] != "dragon":
            reds[t]["st"] = "box"
    m.state["steps"] = [{"k": "destroy", "by": "red", "why": "ninja"}]
    crowns = [t for t in TWO_SET_NAMES if TWO_SETS[t] in ("princess", "king")]
    fx = []
    PONG._enter(m.state, fx)
    assert prompts(fx) == [{"t": "prompt", "to": "red", "ask": "Choose which of your crowns is lost.",
                            "choices": crowns}]
    assert m.legal() == [{"t": "destroy", "by": "red", "tower": t} for t in crowns]


def test_an_empty_unlocked_option_unlocks_nobody():
    m = play(PONG, [], {"team": "custom", "unlocked": ""})
    picks = sorted({i["character"] for i in m.legal() if i["by"] == "red"})
    assert picks == sorted(PONG.BASE)


def test_a_trap_lost_with_its_tower_is_no_longer_shown_hidden():
    m = start(blue=layout(C3="hunter"))
    go(m, ball("blue", "C3"), {"t": "trap", "by": "blue", "tower": "C1"}, miss("blue"))
    go(m, ball("blue", "A3"), miss("blue"))  # the Dragon's missed throw: blue destroys one of its own towers
    fx = go(m, {"t": "destroy", "by": "blue", "tower": "C1"})
    assert says(fx)[0] == "The trap in tower C1 is lost with it."
    assert m.view(None)["sides"]["blue"]["trap_hidden"] is False and m.view("blue")["sides"]["blue"]["trap"] is None


def test_the_side_falling_into_the_trap_hears_it_is_bitten():
    m = start(blue=layout(C3="hunter"))
    go(m, ball("blue", "C3"), {"t": "trap", "by": "blue", "tower": "C1"}, miss("blue"))
    fx = go(m, ball("blue", "C1"))
    assert ("It was the Hunter's trap! Red is bitten and throws with its non-dominant hand until its next ball in a "
            "tower." in says(fx))


def test_the_architect_is_offered_every_free_standing_tower_for_its_roof():
    m = start()
    fx = go(m, ball("blue", "B1"))
    assert prompts(fx)[-1] == {"t": "prompt", "to": "blue", "ask": "Put the Architect's tower as a roof on another tower.",
                               "choices": ["A1", "A2", "A3", "B2", "B3", "C1", "C2", "C3"]}


def test_a_destroyed_tower_shows_everyone_the_character_it_held():
    m = start()
    go(m, ball("blue", "C1"))
    assert m.view(None)["sides"]["blue"]["towers"]["C1"]["was"] == "ghost"


def test_an_extra_throw_is_announced_as_such_and_cannot_be_swapped_away():
    m = start({"extra_throw": "red", "tactical": True})
    fx = go(m, miss("red"))
    assert says(fx) == ["Missed. Red has an extra throw.", "Red, your extra throw."]
    assert {"t": "swap", "by": "red"} not in m.legal()


def test_a_side_left_only_a_crown_to_destroy_loses_and_the_winner_is_named():
    m = start()
    for t in ("A1", "B1", "B2", "B3", "C1", "C2", "C3"):  # blue is down to its King and its Dragon
        m.state["sides"]["blue"]["towers"][t]["st"] = "box"
    go(m, ball("blue", "A2"), {"t": "swap", "by": "blue"}, miss("blue"), ball("blue", "A3"))
    fx = go(m, miss("blue"))  # the Dragon rages, but only the King's bare crown could go
    assert says(fx)[-2:] == ["Blue has no other choice than to destroy one of its own crowns!", "Red wins!"]
    assert m.over and m.state["winner"] == "red"


def test_fire_at_will_asks_everyone_to_throw():
    m = start()
    fx = go(m, ball("blue", "A1"))
    assert prompts(fx) == [{"t": "prompt", "to": None, "ask": "Fire at will: everyone throws; it stops when a ball "
                            "enters a tower.", "choices": None}]


def test_the_kings_swap_offers_only_the_swap():
    m = start()
    go(m, ball("blue", "A2"))
    assert m.legal() == [{"t": "swap", "by": "blue"}]


def test_reds_architect_is_named_red_when_it_roofs_a_tower():
    m = start()
    fx = go(m, miss("red"), ball("red", "B1"), {"t": "roof", "by": "red", "tower": "A1"})
    assert "Red's Architect turns tower B1 into a roof over tower A1." in says(fx)


def test_a_roof_switch_opening_tips_the_roof_and_the_pages_button_for_a_tip_opens_that_switch():
    m = start()
    go(m, ball("blue", "B1"), {"t": "roof", "by": "blue", "tower": "A1"})
    assert switch_input("blue.B1.roof", True) is None and switch_input("blue.B1.tilt", True) is None  # setting it
    tip = switch_input("blue.B1.roof", False)
    assert tip == {"t": "tilt", "side": "blue", "tower": "B1"} and switch_of(tip) == ("blue.B1.roof", 0)
    assert says(go(m, tip)) == ["Blue's roof has tipped over: tower A1 is open again."]
