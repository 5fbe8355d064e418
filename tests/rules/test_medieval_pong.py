"""Medieval Pong, clause by clause (docs/rules/medieval-pong.md maps each clause to these tests)."""

from rtest import Illegal, cues, dumps, load, play, prompts, raises, says

PONG = load("medieval-pong")

BASE = {"A1": "princess", "A2": "king", "A3": "dragon", "B1": "architect", "B2": "blacksmith",
        "B3": "blind-magician", "C1": "ghost", "C2": "gunner", "C3": "seer"}


def layout(**swap):
    """BASE with some towers given other characters, e.g. layout(C3="ninja")."""
    out = dict(BASE)
    out.update(swap)
    return out


def start(options=None, red=BASE, blue=BASE, seed=0):
    """A game past setup with these layouts; alternative characters are picked as a custom team."""
    options = dict(options or {})
    script = []
    base = PONG.SCENARIOS["base"]
    if "team" not in options and options.get("sets", 1) == 1 and [c for c in list(red.values()) + list(blue.values()) if c not in base]:
        options["team"] = "custom"
        for side, lay in (("red", red), ("blue", blue)):
            for c in sorted(lay.values()):
                if c not in PONG.NOBLES:
                    script.append({"t": "pick", "by": side, "character": c})
    for side, lay in (("red", red), ("blue", blue)):
        for t in sorted(lay):
            script.append({"t": "place", "by": side, "tower": t, "character": lay[t]})
        script.append({"t": "ready", "by": side})
    return play(PONG, script, options, seed)


def ball(side, tower):
    return {"t": "ball", "side": side, "tower": tower}


def miss(by):
    return {"t": "miss", "by": by}


def go(m, *inputs):
    fx = []
    for inp in inputs:
        fx.extend(m.apply(inp))
    return fx


def tower(m, side, t):
    return m.state["sides"][side]["towers"][t]


def step(m):
    return m.state["steps"][0]


# ---------------------------------------------------------------- setup


def test_setup_is_secret_and_crowns_go_under_princess_and_king():
    m = play(PONG, [{"t": "place", "by": "red", "tower": "B2", "character": "princess"}])
    assert m.awaiting() == ["blue", "red"]
    assert tower(m, "red", "B2")["crown"] and tower(m, "red", "B2")["ch"] == "princess"
    pub = dumps(m.view(None))
    assert "princess" not in pub and '"crown":true' not in pub
    assert m.view("red")["sides"]["red"]["towers"]["B2"]["character"] == "princess"
    assert "character" not in m.view("blue")["sides"]["red"]["towers"]["B2"]
    # Placing announces only to the placing side.
    assert says(m.effects, to=None) == [] and says(m.effects, to="red") == ["The Princess is in tower B2 with a crown."]
    e = raises(Illegal, m.apply, {"t": "ready", "by": "red"})
    assert "still has to place" in str(e)
    e = raises(Illegal, m.apply, {"t": "place", "by": "red", "tower": "B2", "character": "king"})
    assert "already holds" in str(e)
    e = raises(Illegal, m.apply, {"t": "place", "by": "red", "tower": "D9", "character": "king"})
    assert "no tower 'D9'" in str(e)
    e = raises(Illegal, m.apply, {"t": "place", "by": "red", "tower": "A1", "character": "ninja"})
    assert "no 'ninja' left" in str(e)
    raises(Illegal, m.apply, ball("blue", "A1"))


def test_first_turn_goes_to_the_first_side_after_both_are_ready():
    m = start()
    assert m.awaiting() == ["red"] and m.state["phase"] == "play"
    assert "Red, your turn: throw at Blue's kingdom." in says(m.effects[-1])
    assert start({"first": "blue"}).awaiting() == ["blue"]


# ---------------------------------------------------------------- turns


def test_a_miss_ends_the_turn():
    m = start()
    fx = go(m, miss("red"))
    assert m.awaiting() == ["blue"] and "miss" in cues(fx)
    e = raises(Illegal, m.apply, miss("red"))
    assert "red cannot act now" in str(e)


def test_a_ball_destroys_the_tower_and_the_defender_applies_the_power_then_plays():
    m = start()
    fx = go(m, ball("blue", "C1"))  # the Ghost
    assert tower(m, "blue", "C1")["st"] == "box"
    assert "Blue's tower C1 held the Ghost." in says(fx, to=None)
    assert {"t": "cue", "cue": "tower.destroyed", "side": "blue", "tower": "C1", "character": "ghost"} in fx
    assert m.awaiting() == ["blue"] and step(m)["mode"] == "ghost"
    assert "blow the ball off the hollow of your hand" in says(fx, to=None)[-1]
    assert m.view(None)["sides"]["blue"]["discarded"] == ["ghost"]


def test_illegal_ball_leaves_state_unchanged():
    m = start()
    go(m, ball("blue", "C1"), miss("blue"))
    before = dumps(m.state)
    e = raises(Illegal, m.apply, ball("blue", "C1"))
    assert "on the rampart" in str(e)
    raises(Illegal, m.apply, {"t": "ball", "side": "green", "tower": "A1"})
    raises(Illegal, m.apply, {"t": "fly"})
    assert dumps(m.state) == before


# ---------------------------------------------------------------- crowns and the end


def test_princess_fire_at_will_then_crown_capture_ends_the_game():
    m = start()
    fx = go(m, ball("blue", "A1"))
    assert "crown.exposed" in cues(fx) and "fire.start" in cues(fx)
    assert tower(m, "blue", "A1")["st"] == "up" and tower(m, "blue", "A1")["crown"]
    assert m.awaiting() == ["blue", "red"]
    raises(Illegal, m.apply, miss("red"))  # no misses in fire at will
    fx = go(m, ball("red", "C3"))  # fire ends: red's Seer is hit, red applies it, then plays
    assert "fire.end" in cues(fx) and m.awaiting() == ["red"] and step(m)["k"] == "ask"
    go(m, {"t": "ask", "by": "red", "character": "king"})
    assert m.awaiting() == ["red"] and step(m)["k"] == "throw"
    fx = go(m, ball("blue", "A1"))
    assert m.over and m.state["winner"] == "red"
    assert "Red captures Blue's crown in tower A1. Red wins!" in says(fx)
    assert "game.won" in cues(fx)
    raises(Illegal, m.apply, miss("blue"))


def test_princess_tie_goes_to_the_side_that_lost_the_princess():
    m = start()
    go(m, ball("blue", "A1"))
    e = raises(Illegal, m.apply, {"t": "tie", "side": "blue", "tower": "C1"})
    assert "in red's kingdom" in str(e)
    fx = go(m, {"t": "tie", "side": "red", "tower": "C1"})
    assert "Blue, who just lost its Princess, wins the fire at will" in says(fx)[0]
    assert tower(m, "red", "C1")["st"] == "box" and tower(m, "blue", "C1")["st"] == "up"
    assert m.awaiting() == ["red"] and step(m)["mode"] == "ghost"


def test_autokill_destroys_own_tower_and_applies_its_power():
    m = start()
    fx = go(m, ball("red", "C1"))  # red's own Ghost
    assert "Autoki" in says(fx)[0] and tower(m, "red", "C1")["st"] == "box"
    assert m.awaiting() == ["red"] and step(m)["mode"] == "ghost"


def test_autokill_of_an_own_bare_crown_loses():
    m = start()
    go(m, ball("blue", "C1"), ball("red", "A2"))  # blue's Ghost throw hits red's King
    assert m.awaiting() == ["red"] and step(m)["k"] == "swap"
    go(m, {"t": "swap", "by": "red"}, ball("red", "A2"))
    assert m.over and m.state["winner"] == "blue"


# ---------------------------------------------------------------- base characters


def test_king_lets_the_defender_swap_in_secret_then_play():
    m = start()
    fx = go(m, ball("blue", "A2"))
    assert "crown.exposed" in cues(fx) and m.awaiting() == ["blue"] and step(m)["k"] == "swap"
    fx = go(m, {"t": "swap", "by": "blue"})
    assert "Blue has swapped two towers, or not." in says(fx)
    assert m.awaiting() == ["blue"] and step(m)["k"] == "throw"


def test_dragon_is_immortal_and_gives_a_throw():
    m = start()
    fx = go(m, ball("blue", "A3"))
    assert "dragon.awake" in cues(fx) and tower(m, "blue", "A3")["st"] == "up"
    assert m.view(None)["sides"]["blue"]["towers"]["A3"]["character"] == "dragon"
    assert step(m)["mode"] == "dragon" and m.awaiting() == ["blue"]
    go(m, ball("red", "C1"))  # the Dragon's throw hits: red applies the Ghost
    assert m.awaiting() == ["red"] and step(m)["mode"] == "ghost"


def test_dragon_rage_on_a_miss_destroys_an_own_tower_without_power():
    m = start()
    go(m, ball("blue", "A3"))
    fx = go(m, miss("blue"))
    assert "dragon.rage" in cues(fx) and step(m) == {"k": "destroy", "by": "blue", "why": "rage"}
    choices = [i["tower"] for i in m.legal() if i["t"] == "destroy"]
    assert "A3" not in choices and "A2" in choices  # never the Dragon, but the King may go
    fx = go(m, {"t": "destroy", "by": "blue", "tower": "C3"})  # the Seer: no question asked
    assert tower(m, "blue", "C3")["st"] == "box" and m.awaiting() == ["red"] and step(m)["k"] == "throw"
    go(m, miss("red"), ball("blue", "A3"), miss("blue"))
    fx = go(m, {"t": "destroy", "by": "blue", "tower": "A2"})  # the King: crown left undefended
    assert tower(m, "blue", "A2")["st"] == "up" and tower(m, "blue", "A2")["crown"]
    assert "crown.exposed" in cues(fx) and m.awaiting() == ["red"]


def test_dragon_rage_with_no_other_choice_than_an_own_crown_loses():
    # Reach the position directly: Princess and King gone (crowns bare), the others on the rampart.
    m = start()
    m.state["sides"]["blue"]["towers"]["A1"]["ch"] = None  # Princess gone, crown bare
    m.state["sides"]["blue"]["towers"]["A2"]["ch"] = None  # King gone, crown bare
    for t in ("B1", "B2", "B3", "C1", "C2", "C3"):
        m.state["sides"]["blue"]["towers"][t]["st"] = "box"
    go(m, ball("blue", "A3"))
    fx = go(m, miss("blue"))
    assert "Blue has no other choice than to destroy one of its own crowns!" in says(fx)
    assert m.over and m.state["winner"] == "red"


def test_architect_roof_protects_until_it_tips_over():
    m = start()
    fx = go(m, ball("blue", "B1"))
    assert step(m)["k"] == "roof" and m.awaiting() == ["blue"]
    assert {"t": "roof", "by": "blue", "tower": "B1"} not in m.legal()
    fx = go(m, {"t": "roof", "by": "blue", "tower": "A1"})
    assert "roof.placed" in cues(fx) and tower(m, "blue", "B1")["st"] == "roof"
    assert m.awaiting() == ["blue"]
    go(m, miss("blue"))
    assert ball("blue", "A1") not in m.legal() and ball("blue", "B1") not in m.legal()
    e = raises(Illegal, m.apply, ball("blue", "B1"))
    assert "a roof (upside down)" in str(e)
    fx = go(m, {"t": "tilt", "side": "blue", "tower": "B1"})
    assert "roof.fell" in cues(fx) and tower(m, "blue", "B1")["st"] == "box"
    assert ball("blue", "A1") in m.legal()
    e = raises(Illegal, m.apply, {"t": "tilt", "side": "blue", "tower": "C1"})
    assert "not a roof" in str(e)


def test_seer_answer_is_truthful_and_private():
    m = start(blue=layout(C3="princess", A1="seer"))
    go(m, ball("blue", "A1"))
    fx = go(m, {"t": "ask", "by": "blue", "character": "princess"})
    assert says(fx, to="blue") == ["The Seer says: Red's Princess is in tower A1."]
    assert "Princess" not in " ".join(says(fx, to=None))
    m2 = start(blue=layout(A1="seer", C3="princess"))
    go(m2, ball("blue", "A1"))
    fx = go(m2, {"t": "ask", "by": "blue", "character": "ninja"})
    assert says(fx, to="blue") == ["The Seer says: Red has no Ninja in its kingdom."]


def test_special_throws_are_announced_and_the_gunner_tower_goes_to_the_rampart_after():
    for t, mode, words in (("C1", "ghost", "blow"), ("C2", "gunner", "Gunner's tower"),
                           ("B3", "blind-magician", "eyes closed")):
        m = start()
        fx = go(m, ball("blue", t))
        assert step(m)["mode"] == mode and words in prompts(fx)[-1]["ask"], (t, prompts(fx))
    m = start()
    go(m, ball("blue", "C2"))
    assert tower(m, "blue", "C2")["st"] == "hand"  # in the thrower's hand
    go(m, miss("blue"))
    assert tower(m, "blue", "C2")["st"] == "box"


def test_blind_magician_success_rebuilds_a_tower():
    m = start()
    go(m, ball("blue", "C1"), miss("blue"), ball("blue", "B3"))  # blue loses Ghost then Blind Magician
    assert step(m)["mode"] == "blind-magician"
    fx = go(m, ball("red", "C3"))
    assert step(m)["k"] == "rebuild" and m.awaiting() == ["blue"]
    assert {"t": "rebuild", "by": "blue", "tower": "C1", "character": "ghost"} in m.legal()
    e = raises(Illegal, m.apply, {"t": "rebuild", "by": "blue", "tower": "A1", "character": "ghost"})
    assert "rampart" in str(e)
    fx = go(m, {"t": "rebuild", "by": "blue", "tower": "C1", "character": "ghost"})
    assert tower(m, "blue", "C1")["st"] == "up" and tower(m, "blue", "C1")["ch"] == "ghost"
    assert "tower.rebuilt" in cues(fx) and m.awaiting() == ["red"] and step(m)["k"] == "ask"


def test_blind_magician_may_pass_and_a_miss_rebuilds_nothing():
    m = start()
    go(m, ball("blue", "B3"), ball("red", "C1"), {"t": "pass", "by": "blue"})
    assert m.awaiting() == ["red"] and step(m)["mode"] == "ghost"
    m = start()
    go(m, ball("blue", "B3"), miss("blue"))
    assert m.awaiting() == ["red"] and step(m)["k"] == "throw"


def test_blacksmith_two_balls_owner_chooses():
    m = start()
    fx = go(m, ball("blue", "B2"))
    assert step(m)["balls"] == 2 and "two balls in one hand" in says(fx)[-1]
    fx = go(m, ball("red", "C1"))
    assert step(m)["k"] == "throw" and says(fx) == ["First ball in Red's tower C1."]
    raises(Illegal, m.apply, ball("red", "C1"))
    go(m, ball("red", "C3"))
    assert step(m)["k"] == "choose" and m.awaiting() == ["blue"]
    go(m, {"t": "choose", "by": "blue", "side": "red", "tower": "C3"})
    assert tower(m, "red", "C3")["st"] == "box" and tower(m, "red", "C1")["st"] == "up"
    assert step(m) == {"k": "ask", "by": "red"}


def test_two_sword_knight_one_ball_in_then_done():
    m = start(blue=layout(B2="two-sword-knight"))
    fx = go(m, ball("blue", "B2"))
    assert "one ball in each hand" in says(fx)[-1]
    go(m, ball("red", "C1"), miss("blue"))  # second ball missed
    assert tower(m, "red", "C1")["st"] == "box" and step(m)["mode"] == "ghost"


# ---------------------------------------------------------------- alternative characters


def test_ninja_fire_at_will_and_a_returned_ball_touching_the_opponent():
    m = start(blue=layout(C3="ninja"))
    fx = go(m, ball("blue", "C3"))
    assert step(m)["k"] == "fire" and step(m)["kind"] == "ninja" and m.awaiting() == ["blue", "red"]
    assert {"t": "touch", "by": "blue"} in m.legal() and {"t": "touch", "by": "red"} not in m.legal()
    raises(Illegal, m.apply, {"t": "touch", "by": "red"})
    fx = go(m, {"t": "touch", "by": "blue"})
    assert "ninja.touch" in cues(fx) and step(m)["k"] == "destroy" and m.awaiting() == ["red"]
    fx = go(m, {"t": "destroy", "by": "red", "tower": "C1"})  # red picks its Ghost: power applies
    assert tower(m, "red", "C1")["st"] == "box" and step(m)["mode"] == "ghost" and m.awaiting() == ["red"]


def test_archer_second_destruction_and_its_defeat_note():
    m = start(blue=layout(C3="archer"))
    go(m, ball("blue", "C3"))
    assert step(m)["mode"] == "archer"
    go(m, ball("red", "C1"))
    assert step(m) == {"k": "destroy", "by": "red", "why": "archer"}
    go(m, {"t": "destroy", "by": "red", "tower": "C2"})  # the Gunner, no power
    assert tower(m, "red", "C2")["st"] == "box" and step(m)["mode"] == "ghost"
    # Only the Dragon and the two bare crowns left: the side hit is defeated.
    m = start(blue=layout(C3="archer"))
    reds = m.state["sides"]["red"]["towers"]
    reds["A1"]["ch"] = None
    reds["A2"]["ch"] = None
    for t in ("B1", "B2", "B3", "C2", "C3"):
        reds[t]["st"] = "box"
    go(m, ball("blue", "C3"), ball("red", "C1"))
    assert m.over and m.state["winner"] == "blue"


def test_autokill_ignores_the_archer():
    m = start(red=layout(C3="archer"))
    fx = go(m, ball("red", "C3"))
    assert "The Archer's power is ignored." in says(fx)
    assert step(m)["mode"] == "normal"


def test_guard_stacks_and_takes_the_ball_instead():
    m = start(blue=layout(C3="guard"))
    go(m, ball("blue", "C3"), {"t": "stack", "by": "blue", "tower": "A1"})
    assert tower(m, "blue", "C3")["st"] == "guard" and tower(m, "blue", "C3")["on"] == "A1"
    go(m, miss("blue"))
    assert ball("blue", "A1") not in m.legal() and ball("blue", "C3") in m.legal()
    fx = go(m, ball("blue", "C3"))
    assert "The Guard's tower C3 falls; tower A1 below is safe." in says(fx)
    assert tower(m, "blue", "A1")["ch"] == "princess" and m.awaiting() == ["blue"]


def test_hunter_trap_bites_until_the_next_ball_in():
    m = start(blue=layout(C3="hunter"))
    go(m, ball("blue", "C3"))
    fx = go(m, {"t": "trap", "by": "blue", "tower": "C1"})
    assert says(fx, to="blue") == ["Your trap is in tower C1."]
    assert "C1" not in " ".join(says(fx, to=None)) and "trap.set" in cues(fx)
    assert m.view(None)["sides"]["blue"]["trap_hidden"] and "trap" not in m.view(None)["sides"]["blue"]
    assert m.view("blue")["sides"]["blue"]["trap"] == "C1"
    go(m, miss("blue"))
    fx = go(m, ball("blue", "C1"))  # red falls into the trap; blue applies the Ghost
    assert m.state["sides"]["red"]["bitten"] and "trap.sprung" in cues(fx)
    fx = go(m, miss("blue"))
    assert "non-dominant hand" in prompts(fx)[-1]["ask"] and step(m)["side"] == "red"
    fx = go(m, ball("blue", "C2"))  # red's next ball in: healed
    assert not m.state["sides"]["red"]["bitten"] and "hand.healed" in cues(fx)


def test_bitten_side_is_told_every_throw():
    m = start(blue=layout(C3="hunter"))
    go(m, ball("blue", "C3"), {"t": "trap", "by": "blue", "tower": "C1"}, miss("blue"), ball("blue", "C1"))
    fx = go(m, miss("blue"))
    assert "non-dominant hand" in says(fx)[-1] and {"t": "cue", "cue": "turn", "side": "red", "mode": "normal",
                                                   "balls": 1, "bitten": True} in fx


def test_autokill_ignores_the_trap():
    m = start(blue=layout(C3="hunter"))
    go(m, ball("blue", "C3"), {"t": "trap", "by": "blue", "tower": "C1"})
    fx = go(m, ball("blue", "C1"))  # blue's own ball into its trapped tower
    assert "The Hunter's trap in it is ignored." in says(fx) and not m.state["sides"]["blue"]["bitten"]


def test_catapult_flick():
    m = start(blue=layout(C3="catapult"))
    fx = go(m, ball("blue", "C3"))
    assert step(m)["mode"] == "catapult" and "flick the ball from a tower on your rampart" in says(fx)[-1]


# ---------------------------------------------------------------- variants


def test_tactical_variant_throw_or_swap_and_the_king_free_swap():
    m = start({"tactical": True})
    assert {"t": "swap", "by": "red"} in m.legal()
    fx = go(m, {"t": "swap", "by": "red"})
    assert m.awaiting() == ["blue"] and "swap" in cues(fx)
    go(m, ball("red", "A2"))  # blue hits red's King: free swap, then red may still throw or swap
    assert step(m)["k"] == "swap"
    go(m, {"t": "swap", "by": "red"})
    assert step(m)["k"] == "throw" and {"t": "swap", "by": "red"} in m.legal()
    assert {"t": "swap", "by": "red"} not in start().legal()  # not in the classic game
    m = start({"tactical": True})
    go(m, ball("blue", "C1"))
    e = raises(Illegal, m.apply, {"t": "swap", "by": "blue"})  # a Ghost throw must be thrown
    assert "must throw" in str(e)


def test_balance_levels_extra_throw_for_chosen_side():
    m = start({"extra_throw": "red"})
    fx = go(m, miss("red"))
    assert m.awaiting() == ["red"] and "Missed. Red has an extra throw." in says(fx)
    go(m, miss("red"))
    assert m.awaiting() == ["blue"]
    go(m, miss("blue"))
    assert m.awaiting() == ["red"]
    m = start({"extra_throw": "both"})
    go(m, ball("blue", "C3"))  # a hit ends the turn: no extra throw
    assert m.awaiting() == ["blue"] and step(m)["k"] == "ask"


def test_build_your_team_scenarios():
    for team, absent in (("single-target", "princess"), ("vanished-dragon", "dragon")):
        m = play(PONG, [], {"team": team})
        assert absent not in m.state["sides"]["red"]["hand"] and len(m.state["sides"]["red"]["hand"]) == 9
    m = play(PONG, [], {"team": "ultimate-defense"})
    assert m.state["sides"]["blue"]["hand"] == sorted(PONG.SCENARIOS["ultimate-defense"])
    e = raises(Illegal, play, PONG, [], {"team": "elite-marksmen", "unlocked": "none"})
    assert "Archer" in str(e) and "locked" in str(e)


def test_single_target_has_one_crown():
    red = {"A1": "king", "A2": "dragon", "A3": "seer", "B1": "blind-magician", "B2": "ninja", "B3": "hunter",
           "C1": "guard", "C2": "two-sword-knight", "C3": "archer"}
    m = start({"team": "single-target"}, red=red, blue=red)
    towers = m.state["sides"]["red"]["towers"]
    crowns = [t for t in sorted(towers) if towers[t]["crown"]]
    assert crowns == ["A1"]


def test_custom_team_picks_six_of_the_unlocked():
    m = play(PONG, [], {"team": "custom", "unlocked": "ninja"})
    assert m.state["phase"] == "team" and m.awaiting() == ["blue", "red"]
    picks = sorted({i["character"] for i in m.legal() if i["by"] == "red"})
    assert "ninja" in picks and "archer" not in picks and "princess" not in picks
    for c in ("ninja", "seer", "ghost", "gunner", "architect", "blacksmith"):
        m.apply({"t": "pick", "by": "red", "character": c})
    raises(Illegal, m.apply, {"t": "pick", "by": "red", "character": "blind-magician"})
    assert m.awaiting() == ["blue"]
    for c in ("seer", "ghost", "gunner", "architect", "blacksmith", "blind-magician"):
        m.apply({"t": "pick", "by": "blue", "character": c})
    assert m.state["phase"] == "place" and "ninja" in m.state["sides"]["red"]["hand"]
    assert "ninja" not in dumps(m.view(None)) and "ninja" in dumps(m.view("red"))


def test_full_set_draft_alternates_from_one_shared_pool():
    m = play(PONG, [], {"team": "full-set", "first": "blue"})
    assert m.awaiting() == ["blue"] and len(m.state["pool"]) == 12
    fx = go(m, {"t": "pick", "by": "blue", "character": "ninja"})
    assert "Blue drafts the Ninja." in says(fx) and m.awaiting() == ["red"]
    e = raises(Illegal, m.apply, {"t": "pick", "by": "red", "character": "ninja"})
    assert "cannot pick 'ninja'" in str(e)
    for _ in range(11):
        i = m.legal()[0]
        m.apply(i)
    assert m.state["phase"] == "place" and len(m.state["sides"]["red"]["hand"]) == 9
    e = raises(Illegal, play, PONG, [], {"team": "full-set", "unlocked": "ninja"})
    assert "locked" in str(e)


def test_two_sets_eighteen_towers_two_crowns_to_win():
    m = play(PONG, [], {"sets": 2})
    names = sorted(m.state["sides"]["red"]["towers"])
    assert len(names) == 18 and "A5" in names and "F1" in names and "F2" not in names
    hand = m.state["sides"]["red"]["hand"]
    assert hand.count("princess") == 2 and hand.count("king") == 2 and hand.count("dragon") == 2
    assert "ninja" in hand and len(hand) == 18
    raises(Illegal, play, PONG, [], {"sets": 2, "team": "custom"})
    lay = {}
    for t, c in zip(names, sorted(hand)):
        lay[t] = c
    m = start({"sets": 2}, red=lay, blue=lay)
    kings = [t for t in names if lay[t] == "king"]
    go(m, ball("blue", kings[0]), {"t": "swap", "by": "blue"}, miss("blue"))
    fx = go(m, ball("blue", kings[0]))
    assert not m.over and "Blue's crown in tower %s: 1 of 2." % kings[0] in " ".join(says(fx))
    assert m.awaiting() == ["blue"]
    go(m, ball("blue", kings[1]), {"t": "swap", "by": "blue"}, miss("blue"))
    go(m, ball("blue", kings[1]))
    assert m.over and m.state["winner"] == "red"


def test_padlocks_tick_one_per_game_and_unlock():
    m = start()
    go(m, ball("blue", "A2"), {"t": "swap", "by": "blue"}, ball("blue", "A2"))
    assert m.over
    p = PONG.unlocks(m.state, None)
    assert p["ticks"] == {"ninja": 1} and p["unlocked"] == ["ninja"]  # the closest to unlocking first
    p = PONG.unlocks(m.state, p, "archer")
    assert p["ticks"]["archer"] == 1 and p["unlocked"] == ["ninja"]
    p = PONG.unlocks(m.state, p, "archer")
    assert p["unlocked"] == ["archer", "ninja"]
    e = raises(Illegal, PONG.unlocks, m.state, p, "archer")
    assert "already unlocked" in str(e)
    raises(Illegal, PONG.unlocks, start().state, p)
    opts = ",".join(p["unlocked"])
    assert play(PONG, [], {"team": "custom", "unlocked": opts}).state["unlocked"] == ["archer", "ninja"]
    e = raises(Illegal, play, PONG, [], {"unlocked": "wizard"})
    assert "'wizard'" in str(e)


def test_a_roof_tipping_while_it_was_the_last_thing_to_destroy_leaves_only_crowns():
    m = start()
    go(m, ball("blue", "B1"), {"t": "roof", "by": "blue", "tower": "A1"}, miss("blue"))
    blues = m.state["sides"]["blue"]["towers"]
    blues["A1"]["ch"] = None  # the Princess is gone: a bare crown under the roof
    blues["A2"]["ch"] = None
    for t in ("B2", "B3", "C1", "C2", "C3"):
        blues[t]["st"] = "box"
    go(m, ball("blue", "A3"), miss("blue"))
    assert [i["tower"] for i in m.legal() if i["t"] == "destroy"] == ["B1"]
    fx = go(m, {"t": "tilt", "side": "blue", "tower": "B1"})
    assert "Blue has no other choice than to destroy one of its own crowns!" in says(fx)
    assert m.over and m.state["winner"] == "red"


def test_two_sets_a_forced_crown_loss_counts_one_crown_and_play_goes_on():
    names = sorted(PONG.tower_names(2))
    hand = sorted(PONG.NOBLES + PONG.NOBLES + PONG.BASE + PONG.ALTERNATIVE)
    lay = {}
    for t, c in zip(names, hand):
        lay[t] = c
    m = start({"sets": 2}, red=lay, blue=lay)
    ninja = names[hand.index("ninja")]
    go(m, ball("blue", ninja), {"t": "touch", "by": "blue"})
    assert step(m)["k"] == "destroy" and m.awaiting() == ["red"]
    reds = m.state["sides"]["red"]["towers"]
    for t in names:  # leave red only its Dragons and bare crowns
        if lay[t] in ("princess", "king"):
            reds[t]["ch"] = None
        elif lay[t] != "dragon":
            reds[t]["st"] = "box"
    m.state["steps"] = [{"k": "destroy", "by": "red", "why": "ninja"}]
    crowns = [t for t in names if lay[t] in ("princess", "king")]
    # Entering the step again (as the engine does) finds only crowns: red must give one up.
    fx = []
    PONG._enter(m.state, fx)
    assert m.state["steps"][0].get("forced") and prompts(fx)[0]["choices"] == crowns
    fx = go(m, {"t": "destroy", "by": "red", "tower": crowns[0]})
    assert not m.over and m.state["captured"]["blue"] == 1 and m.awaiting() == ["red"]
    assert step(m)["k"] == "throw"


def test_a_ball_sensed_in_a_covered_tower_means_its_cover_moved():
    m = start()
    go(m, ball("blue", "B1"), {"t": "roof", "by": "blue", "tower": "A1"}, miss("blue"))
    fx = go(m, ball("blue", "A1"))  # the roof slid onto the table: the sensor is right
    assert "The roof over Blue's tower A1 had slid off; it stays in play." in says(fx)
    assert tower(m, "blue", "B1")["st"] == "roof" and tower(m, "blue", "B1")["on"] is None
    assert step(m)["k"] == "fire" and {"t": "tilt", "side": "blue", "tower": "B1"} in m.legal()
    m = start(blue=layout(C3="guard"))
    go(m, ball("blue", "C3"), {"t": "stack", "by": "blue", "tower": "A2"}, miss("blue"))
    fx = go(m, ball("blue", "A2"))
    assert tower(m, "blue", "C3")["st"] == "box" and "crown.exposed" in cues(fx)


def test_a_princess_rebuilt_by_the_blind_magician_wears_no_crown():
    """Her crown stayed in her first tower (A1); the rebuilt tower C1 falls like any other, and a ball
    in it afterwards captures nothing: nobody wins on a crown that was never there."""
    m = start()
    go(m, ball("blue", "C1"), miss("blue"))  # blue's Ghost: C1 goes to the rampart
    go(m, ball("blue", "A1"))  # blue's Princess: her crown in A1 is exposed, fire at will
    go(m, ball("blue", "B3"))  # fire at will ends in blue's Blind Magician
    go(m, ball("red", "C3"))  # the eyes-closed throw succeeds
    fx = go(m, {"t": "rebuild", "by": "blue", "tower": "C1", "character": "princess"})
    assert says(fx) == ["Blue rebuilds tower C1 with its Princess."]
    go(m, {"t": "ask", "by": "red", "character": "archer"})  # red's Seer question
    fx = go(m, ball("blue", "C1"))
    assert "Blue's tower C1 held the Princess." in says(fx) and "crown.exposed" not in cues(fx)
    assert tower(m, "blue", "C1")["st"] == "box"  # no crown to keep it standing
    assert {"t": "ball", "side": "blue", "tower": "C1"} not in m.legal()
    assert m.state["captured"] == {"red": 0, "blue": 0} and not m.state["over"]
