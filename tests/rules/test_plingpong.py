"""PlingPong: a scenario test for every rulebook clause (see docs/rules/plingpong.md)."""

from rtest import Illegal, cues, load, play, prompts, raises, says

PP = load("plingpong")
COLOUR = {"p1": "green", "p2": "red", "p3": "yellow", "p4": "blue"}


def ball(cup):
    return {"t": "ball", "cup": cup}


def miss(p):
    return {"t": "miss", "by": p}


def score(p):
    return {"t": "score", "by": p}


def void(p):
    return {"t": "void", "by": p}


def shootoff(winner="p1", players=("p1", "p2", "p3", "p4"), cup=None):
    """One shoot-off pass the `winner` wins with a ball in their own cup 1; the others miss."""
    s = []
    for p in players:
        s.append(ball(cup or COLOUR[p] + ".1") if p == winner else miss(p))
    s.append(score(players[0]))
    return s


def shots(order, landed):
    """One input per shot: order[k] shoots and its ball lands in landed[k] (None = a miss)."""
    return [ball(c) if c else miss(p) for p, c in zip(order, landed)]


FIRST = ["p1", "p2", "p3", "p4", "p1", "p2", "p3", "p4"]


def start(winner="p1", layout=None, options=None):
    """The winner wins the shoot-off; `layout` ({tray: [colour or None] * 6}) is racked before round 1."""
    m = play(PP, shootoff(winner)[:-1], options=options)
    for t in sorted(layout or {}):
        m.state["cups"][t] = list(layout[t])
        m.state["height"][t] = [0 if c is None else 1 for c in layout[t]]
    m.apply(score("p1"))
    return m


def only(colour, n=1):
    """A tray holding the given colour's cups on its n lowest spaces."""
    return [colour] * n + [None] * (6 - n)


NONE = [None] * 6


def cue_of(fx, name, **fields):
    """The first cue called name in fx whose fields match."""
    for e in fx:
        if e["t"] == "cue" and e["cue"] == name and all(e.get(k) == v for k, v in fields.items()):
            return e
    raise AssertionError("no %s cue in %r" % (name, fx))


def cup(m, name):
    tray, n = name.split(".")
    return m.state["cups"][tray][int(n) - 1]


def cups_of(m, side):
    return m.view()["sides"][side]["cups"]


# ---------------------------------------------------------------- the table


def test_four_trays_of_six_cups_round_the_black_cup():
    m = play(PP, [])
    v = m.view()
    assert sorted(v["trays"]) == ["blue", "green", "red", "yellow"]
    for t in v["trays"]:
        assert [c["cup"] for c in v["trays"][t]] == ["%s.%d" % (t, n) for n in range(1, 7)]
        assert [c["colour"] for c in v["trays"][t]] == [t] * 6
    assert v["seats"] == ["p1", "p2", "p3", "p4"]
    assert [v["sides"][p]["colours"] for p in v["seats"]] == [["green"], ["red"], ["yellow"], ["blue"]]
    assert {"t": "ball", "cup": "black"} in m.legal()
    e = raises(Illegal, m.apply, ball("purple.2"))
    assert "'purple.2'" in str(e) and "green, red, yellow, blue" in str(e)
    e = raises(Illegal, m.apply, ball("red.7"))
    assert "'red.7'" in str(e)


def test_the_table_lists_every_cup_a_beam_watches_for_the_sensor_map():
    cups = [c["cup"] for c in PP.table()]
    assert len(cups) == 25 and cups[0] == "green.1" and cups[6] == "red.1" and cups[-1] == "black"
    three = [c["cup"] for c in PP.table({"players": 3, "removed": "red"})]
    assert len(three) == 19 and "red.1" not in three and three[6] == "yellow.1"
    m = play(PP, [])
    assert sorted(inp["cup"] for inp in m.legal() if inp["t"] == "ball") == sorted(cups)


# ---------------------------------------------------------------- getting started


def test_shoot_off_everyone_shoots_into_their_own_colour_and_one_maker_starts():
    m = play(PP, [])
    assert m.view()["phase"] == "shootoff" and m.awaiting() == ["p1"]
    fx = m.apply(miss("p1"))
    assert m.awaiting() == ["p2"] and "shot" in cues(fx)
    m.apply(ball("green.2"))  # red's ball in a green cup: not their own colour
    m.apply(ball("yellow.4"))  # yellow into yellow: made it
    fx = m.apply(miss("p4"))
    assert prompts(fx)[0]["choices"] == [score("p1")]
    fx = m.apply(score("p1"))
    assert "Player 3 (yellow) wins the shoot-off and starts the first round." in says(fx)
    assert m.view()["phase"] == "round" and m.view()["starter"] == "p3"
    assert m.view()["order"] == ["p3", "p4", "p1", "p2", "p3", "p4", "p1", "p2"]
    # Shoot-off balls never count for scoring.
    assert m.view()["trays"]["green"][1]["balls"] == 0


def test_shoot_off_makers_redo_until_exactly_one_makes_it_and_nobody_making_it_means_all_again():
    m = play(PP, [miss("p1"), miss("p2"), miss("p3"), miss("p4")])
    fx = m.apply(score("p1"))
    assert "Nobody made it: shoot again." in says(fx)
    assert m.view()["shootoff"] == ["p1", "p2", "p3", "p4"]
    for inp in [ball("green.1"), miss("p2"), ball("yellow.6"), miss("p4")]:
        m.apply(inp)
    fx = m.apply(score("p1"))
    assert "Player 1 and Player 3 made it: shoot again." in says(fx)
    assert m.view()["shootoff"] == ["p1", "p3"] and m.awaiting() == ["p1"]
    m.apply(ball("green.3"))
    e = raises(Illegal, m.apply, miss("p2"))
    assert "Player 3 (yellow)" in str(e)
    m.apply(ball("yellow.3"))
    m.apply(score("p1"))
    assert m.view()["shootoff"] == ["p1", "p3"]
    m.apply(miss("p1"))
    m.apply(ball("yellow.2"))
    m.apply(score("p1"))
    assert m.view()["starter"] == "p3" and m.view()["round"] == 1


# ---------------------------------------------------------------- a round


def test_first_balls_in_player_order_from_the_starter_then_second_balls_8_in_all():
    m = play(PP, shootoff("p2"))
    assert m.view()["order"] == ["p2", "p3", "p4", "p1", "p2", "p3", "p4", "p1"]
    seen = []
    for k in range(8):
        seen.append(m.awaiting()[0])
        fx = m.apply(miss(seen[-1]))
        if k < 7:
            shot = cue_of(fx, "shot")
            assert shot["player"] == m.awaiting()[0] and shot["ball"] == (k + 1) // 4 + 1 and shot["of"] == 2
    assert seen == ["p2", "p3", "p4", "p1", "p2", "p3", "p4", "p1"]
    assert m.view()["phase"] == "score" and m.awaiting() == ["p2"]
    e = raises(Illegal, m.apply, miss("p3"))
    assert "every ball of the round is in" in str(e)
    e = raises(Illegal, m.apply, ball("red.1"))
    assert "after the last shot" in str(e)


def test_a_shot_out_of_turn_is_refused_and_the_game_unchanged():
    m = play(PP, shootoff("p1"))
    e = raises(Illegal, m.apply, miss("p3"))
    assert "it is Player 1 (green)'s shot, not Player 3 (yellow)'s" == str(e)
    e = raises(Illegal, m.apply, score("p1"))
    assert "the round is not over" in str(e)
    e = raises(Illegal, m.apply, {"t": "miss"})
    assert "'by'" in str(e)
    e = raises(Illegal, m.apply, {"t": "bounce", "by": "p1"})
    assert "unknown input type 'bounce'" in str(e)
    assert m.view()["shot"] == 0 and m.view()["shots"] == []


def test_odd_cups_are_removed_even_and_empty_cups_stay():
    landed = ["red.1", "red.2", "red.02", "yellow.5", "yellow.5", "yellow.5", None, "blue.6"]
    m = play(PP, shootoff("p1") + shots(FIRST, landed))
    assert m.view()["trays"]["yellow"][4]["balls"] == 3
    fx = m.apply(score("p1"))
    assert cup(m, "red.1") is None and cup(m, "yellow.5") is None and cup(m, "blue.6") is None
    assert cup(m, "red.2") == "red" and cup(m, "green.1") == "green"
    assert "Red cup 1 has 1 ball: it comes off." in says(fx)
    assert "Yellow cup 5 has 3 balls: it comes off." in says(fx)
    removed = [e["cup"] for e in fx if e["t"] == "cue" and e["cue"] == "cup.removed"]
    assert removed == ["red.1", "yellow.5", "blue.6"]
    assert [cups_of(m, p) for p in ("p1", "p2", "p3", "p4")] == [6, 5, 5, 5]
    e = raises(Illegal, m.apply, ball("red.1"))
    assert "no cup on red.1" in str(e)
    assert {"t": "ball", "cup": "red.1"} not in m.legal()


def test_the_next_round_starts_with_the_player_on_the_left_of_the_starter():
    m = play(PP, shootoff("p4") + shots(["p4", "p1", "p2", "p3"] * 2, [None] * 8))
    fx = m.apply(score("p4"))
    assert "Round 2. Player 1 (green) starts; 8 balls." in says(fx)
    assert m.view()["order"] == FIRST and "rack" in cues(fx)


def test_players_with_no_cups_do_not_shoot_but_stay_in_the_game():
    m = start("p1", {"red": ["red", None, None, None, None, None]})
    assert m.view()["order"] == FIRST
    fx = m.apply(ball("red.1"))
    for p in FIRST[1:]:
        m.apply(miss(p))
    fx = m.apply(score("p1"))
    assert "Player 2 (red) has no cups left: they do not shoot, but stay in the game." in says(fx)
    assert m.view()["starter"] == "p3"  # left of the starter, skipping red who cannot shoot
    assert m.view()["order"] == ["p3", "p4", "p1", "p3", "p4", "p1"]
    assert not m.over and m.view()["sides"]["p2"]["cups"] == 0


# ---------------------------------------------------------------- the Black Cup


def test_black_cup_odd_the_shooters_lose_a_lowest_cup_and_everyone_else_adds_one():
    m = start("p1", {"yellow": [None, "yellow", "yellow", "yellow", "yellow", "yellow"]})
    landed = ["black", None, None, None, None, "black", "black", None]
    for inp in shots(FIRST, landed):
        m.apply(inp)
    assert m.view()["black"] == 3
    fx = m.apply(score("p1"))
    assert ("The Black Cup has 3 balls, an odd number! Player 1, Player 2 and Player 3 made it and lose a "
            "lowest cup; everyone else adds a cup.") in says(fx)
    assert cup(m, "green.1") is None and cup(m, "red.1") is None
    assert cup(m, "yellow.1") is None and cup(m, "yellow.2") is None  # yellow shot: loses its lowest, no add
    assert cups_of(m, "p4") == 6  # blue's tray is full: no room
    assert "Player 4 has no room for another cup." in says(fx)
    black = cue_of(fx, "black")
    assert black["result"] == "odd" and black["losers"] == ["p1", "p2", "p3"]
    assert {"t": "ball", "cup": "black"} in m.legal()  # the Black Cup always stays


def test_black_cup_brings_a_player_with_no_cups_back_on_the_lowest_available_space():
    m = start("p1", {"blue": NONE, "green": [None, "green", "green", "green", "green", "green"]})
    order = ["p1", "p2", "p3", "p1", "p2", "p3"]
    assert m.view()["order"] == order
    for inp in shots(order, ["black", None, None, None, None, None, None, None]):
        m.apply(inp)
    fx = m.apply(score("p1"))
    assert "Player 4 adds a cup on blue space 1." in says(fx)
    assert "Player 4 (blue) is back in the game." in says(fx)
    add = cue_of(fx, "cup.add", side="p4")
    assert add["cup"] == "blue.1" and add["colour"] == "blue"
    assert cup(m, "green.1") is None and cup(m, "green.2") is None  # green shot it: its lowest cup goes
    assert "p4" in m.view()["order"]


def test_black_cup_even_is_cancelled():
    m = play(PP, shootoff("p1") + shots(FIRST, ["black", "black", None, None, None, None, None, None]))
    fx = m.apply(score("p1"))
    assert "The Black Cup has 2 balls, an even number: its effect is cancelled." in says(fx)
    assert [cups_of(m, p) for p in ("p1", "p2", "p3", "p4")] == [6, 6, 6, 6]


def test_a_second_ball_in_your_own_cup_cancels_and_a_third_spoils():
    m = play(PP, shootoff("p1") + shots(FIRST, ["red.3", "red.3", "red.3", "green.2", None, "green.2", None, None]))
    m.apply(score("p1"))
    assert cup(m, "red.3") is None and cup(m, "green.2") == "green"


# ---------------------------------------------------------------- shots that do not count


def test_the_last_shot_can_be_voided_when_it_did_not_bounce():
    m = play(PP, shootoff("p1") + [ball("red.3")])
    assert {"t": "void", "by": "p1"} in m.legal()
    fx = m.apply(void("p3"))  # any player may call it
    assert ("Player 1's shot into red cup 3 did not bounce in their zone and does not count. "
            "Take the ball out.") in says(fx)
    assert m.view()["trays"]["red"][2]["balls"] == 0 and m.awaiting() == ["p2"]
    e = raises(Illegal, m.apply, void("p1"))
    assert "no shot to void" in str(e)
    m.apply(miss("p2"))
    raises(Illegal, m.apply, void("p2"))  # a miss cannot be voided
    for inp in shots(["p3", "p4", "p1", "p2", "p3", "p4"], [None, None, None, None, None, "black"]):
        m.apply(inp)
    m.apply(void("p4"))  # the round's last shot, before the score
    fx = m.apply(score("p1"))
    assert "black" not in cues(fx) and cup(m, "red.3") == "red"


def test_a_voided_shoot_off_shot_does_not_make_it():
    m = play(PP, [ball("green.1"), void("p2")] + [miss("p2"), ball("yellow.1"), miss("p4"), score("p1")])
    assert m.view()["starter"] == "p3"


# ---------------------------------------------------------------- winning


def test_the_last_player_with_cups_wins():
    m = start("p1", {"red": NONE, "yellow": NONE, "blue": only("blue")})
    assert m.view()["order"] == ["p1", "p4", "p1", "p4"]
    for inp in shots(["p1", "p4", "p1", "p4"], ["blue.1", None, None, None]):
        m.apply(inp)
    fx = m.apply(score("p1"))
    assert m.over and m.state["winner"] == "p1" and m.awaiting() == [] and m.legal() == []
    assert "Player 1 (green) is the last with cups on the board. Player 1 wins!" in says(fx)
    assert "win" in cues(fx)
    assert str(raises(Illegal, m.apply, miss("p1"))) == "the game is over"


def test_everybody_losing_their_last_cups_at_once_is_a_draw():
    m = start("p1", {"green": only("green"), "red": only("red"), "yellow": only("yellow"), "blue": only("blue")})
    for inp in shots(FIRST, ["green.1", "red.1", "yellow.1", "blue.1", None, None, None, None]):
        m.apply(inp)
    fx = m.apply(score("p1"))
    assert m.over and m.state["winner"] is None and "draw" in cues(fx)


# ---------------------------------------------------------------- variations


def test_two_players_two_colours_each_four_balls_two_per_turn():
    m = play(PP, [miss("p1"), ball("blue.4"), score("p1")], options={"players": 2})
    v = m.view()
    assert v["sides"]["p1"]["colours"] == ["green", "red"] and v["sides"]["p2"]["colours"] == ["yellow", "blue"]
    assert v["starter"] == "p2" and v["order"] == ["p2", "p2", "p1", "p1", "p2", "p2", "p1", "p1"]
    assert cups_of(m, "p1") == 12
    for inp in shots(v["order"], ["green.1", "red.1", None, None, None, None, None, "black"]):
        m.apply(inp)
    fx = m.apply(score("p2"))
    # green 1 and red 1 are hit; p1's Black Cup shot then costs green 2 (the lowest left); p2's trays are full.
    assert cups_of(m, "p1") == 9 and cup(m, "green.2") is None and cup(m, "red.2") == "red"
    assert "Player 2 has no room for another cup." in says(fx)
    assert m.view()["order"][:2] == ["p1", "p1"]


def test_two_players_lose_the_lowest_cup_over_both_trays_and_add_on_their_own():
    m = play(PP, [ball("red.2"), miss("p2"), score("p1")], options={"players": 2})
    m.state["cups"]["red"][0] = None
    m.state["height"]["red"][0] = 0
    for inp in shots(["p1", "p1", "p2", "p2"] * 2, [None, None, "black", None, None, None, None, None]):
        m.apply(inp)
    fx = m.apply(score("p1"))
    assert "Player 1 adds a cup on red space 1." in says(fx)
    assert cup(m, "yellow.1") is None and cup(m, "blue.1") == "blue"  # lowest space, left tray first


def test_three_players_one_colour_removed_middle_by_rock_paper_scissors():
    m = play(PP, [], options={"players": 3, "removed": "yellow"})
    assert m.view()["phase"] == "middle" and m.awaiting() == ["p1", "p2", "p3"]
    assert m.legal() == [{"t": "middle", "by": p} for p in ("p1", "p2", "p3")]
    e = raises(Illegal, m.apply, miss("p1"))
    assert "rock, paper, scissors" in str(e) and "green" in str(e)
    fx = m.apply({"t": "middle", "by": "p2"})
    assert ("Player 2 lost rock, paper, scissors and takes the middle colour, green. "
            "Player 1 plays blue, Player 3 plays red.") in says(fx)
    v = m.view()
    assert sorted(v["trays"]) == ["blue", "green", "red"]
    assert v["seats"] == ["p1", "p2", "p3"] and v["sides"]["p2"]["colours"] == ["green"]
    raises(Illegal, m.apply, ball("yellow.1"))
    raises(Illegal, m.apply, {"t": "middle", "by": "p1"})
    for inp in [miss("p1"), miss("p2"), ball("red.6"), score("p1")]:
        m.apply(inp)
    assert m.view()["order"] == ["p3", "p1", "p2", "p3", "p1", "p2"]


def test_eight_players_four_teams_one_ball_each_and_a_team_wins():
    m = play(PP, [], options={"players": 8})
    v = m.view()
    assert v["sides"]["green"]["players"] == ["p1", "p5"] and v["sides"]["blue"]["players"] == ["p4", "p8"]
    for p in ["p1", "p2", "p3", "p4", "p5", "p6", "p7"]:
        m.apply(miss(p))
    m.apply(ball("blue.2"))  # p8 is on the blue team
    m.apply(score("p1"))
    assert m.view()["starter"] == "p8"
    assert m.view()["order"] == ["p8", "p1", "p2", "p3", "p4", "p5", "p6", "p7"]
    for t in ("red", "yellow", "blue"):
        m.state["cups"][t] = NONE if t != "blue" else only("blue")
    for p in m.view()["order"]:
        m.apply(ball("blue.1") if p == "p8" else miss(p))
    fx = m.apply(score("p8"))
    assert m.over and m.state["winner"] == "green"
    assert "Team Green wins!" in says(fx)[-1]


def test_random_rerack_deals_a_pattern_from_the_seed_and_cups_belong_by_colour():
    a = play(PP, [], options={"rerack": True}, seed=5)
    b = play(PP, [], options={"rerack": True}, seed=5)
    c = play(PP, [], options={"rerack": True}, seed=6)
    assert a.state["cups"] == b.state["cups"] and a.state["cups"] != c.state["cups"]
    pattern = [col for t in ("green", "red", "yellow", "blue") for col in a.state["cups"][t]]
    assert sorted(pattern) == sorted(["green", "red", "yellow", "blue"] * 6)
    assert pattern != ["green"] * 6 + ["red"] * 6 + ["yellow"] * 6 + ["blue"] * 6
    # The shoot-off counts a ball in a cup of your colour wherever it stands.
    green_at = [(t, i) for t in ("green", "red", "yellow", "blue") for i in range(6) if a.state["cups"][t][i] == "green"]
    t, i = green_at[-1]
    m = play(PP, [ball("%s.%d" % (t, i + 1)), miss("p2"), miss("p3"), miss("p4"), score("p1")],
             options={"rerack": True}, seed=5)
    assert m.view()["starter"] == "p1"
    rack = cue_of(m.effects[-1], "rack")["cups"]
    assert [c[1] for c in rack] == pattern  # the LEDs light each space in its cup's colour


def test_speed_round_cups_come_off_as_each_shot_lands_and_the_first_to_clear_wins():
    m = play(PP, shootoff("p1"), options={"variant": "speed"})
    fx = m.apply(ball("green.2"))
    assert cup(m, "green.2") is None and "cup.removed" in cues(fx)
    fx = m.apply(ball("black"))
    assert "Player 2 lands in the Black Cup, which does nothing in a speed round." in says(fx)
    fx = m.apply(ball("yellow.1"))
    m.apply(void("p2"))  # the yellow cup goes back
    assert cup(m, "yellow.1") == "yellow"
    for inp in shots(["p4", "p1", "p2", "p3", "p4"], [None, None, None, None, None]):
        m.apply(inp)
    assert m.view()["round"] == 2 and m.view()["phase"] == "round"  # no scoring step in a speed round
    m.state["cups"]["green"] = only("green")
    fx = m.apply(miss("p2"))
    fx = m.apply(ball("green.1"))  # yellow's ball clears green's last cup: green wins
    assert m.over and m.state["winner"] == "p1"
    assert "Player 1 (green) has cleared every cup of their colour first. Player 1 wins!" in says(fx)


def test_high_stack_removed_cups_stack_on_your_lowest_and_a_stack_goes_whole():
    m = play(PP, shootoff("p1"), options={"variant": "high-stack"})
    for inp in shots(FIRST, ["red.1", "red.2", None, None, None, None, None, None]):
        m.apply(inp)
    fx = m.apply(score("p1"))
    assert "cup.stacked" in cues(fx)
    assert m.state["height"]["red"] == [0, 0, 2, 2, 1, 1]  # each removed cup onto the lowest, shortest stack
    assert "Stack it on red cup 3: 2 high." in says(fx)
    landed = [None, "red.3", None, None, None, None, None, None]
    for inp in shots(m.view()["order"], landed):
        m.apply(inp)
    fx = m.apply(score("p2"))
    assert "Red cup 3 has 1 ball: the whole stack of 2 comes off." in says(fx)
    assert m.state["height"]["red"] == [0, 0, 0, 2, 1, 1]


def test_options_are_checked():
    e = raises(Illegal, play, PP, [], {"players": 5})
    assert "players" in str(e)
    e = raises(Illegal, play, PP, [], {"variant": "slow"})
    assert "variant" in str(e)
