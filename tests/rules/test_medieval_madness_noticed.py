"""Medieval Madness: the rulebook's price lists title by title, and what the players hear and see
(announcements, lights, the scoreboard) exactly. Written from the mutation run's survivors
(tests/rules/mutation.py). Space numbers are the standard board's (see test_medieval_madness.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import Illegal, Match, cues, prompts, raises, says
from test_medieval_madness import MM, asked, new, pl, put, roll

HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."  # MicroPython gives a bare name from the cwd
# rank: 0 untitled, 1 Squire/Maid, 2 Lord/Lady, 3 Duke/Duchess, 4 Prince/Princess.
# The rulebook prices no untitled player: they pay the Squire's price (docs/rules/medieval-madness.md).
RANKS = (0, 1, 2, 3, 4)


def test_champion_wages_follow_the_rulebook_title_by_title():
    for rank, wage in zip(RANKS, (50, 50, 100, 150, 200)):
        m = new(2)
        put(m, "p1", 7, gold=900, title=rank, champion=True)
        fx = roll(m, "p1", 1, 1)  # 9: Hire a Champion, with one already
        assert "Player 1 pays %d gold nobles to the Royal Treasury in wages to the champion." % wage in says(fx)
        assert pl(m, "p1")["gold"] == 900 - wage and m.state["treasury"] == 500 + wage
        assert pl(m, "p1")["champion"] and m.awaiting() == ["p2"]


def test_hiring_a_champion_costs_the_rulebook_price_title_by_title():
    for rank, price in zip(RANKS, (100, 100, 150, 200, 300)):
        m = new(2)
        put(m, "p1", 7, gold=900, title=rank)
        roll(m, "p1", 1, 1)
        assert asked(m) == ("p1", "hire")
        fx = m.apply({"t": "hire", "by": "p1", "yes": True})
        assert "Player 1 pays %d gold nobles to the Royal Treasury to hire a champion." % price in says(fx)
        assert pl(m, "p1")["gold"] == 900 - price and pl(m, "p1")["champion"]


def test_a_dungeon_pass_costs_the_rulebook_price_title_by_title():
    for rank, price in zip(RANKS, (50, 50, 100, 150, 200)):
        m = new(2)
        put(m, "p1", 1, gold=900, title=rank)
        roll(m, "p1", 1, 1)  # 3: Buy a Dungeon Pass
        assert asked(m) == ("p1", "buy-pass")
        fx = m.apply({"t": "buy-pass", "by": "p1", "yes": True})
        assert "Player 1 pays %d gold nobles to the Royal Treasury for a dungeon pass." % price in says(fx)
        assert pl(m, "p1")["gold"] == 900 - price and pl(m, "p1")["pass"]


def test_a_prince_taxes_a_duke_150_a_lord_100_and_a_squire_50():
    m = new(4)
    put(m, "p1", 24, title=4, gold=4000)
    put(m, "p2", 0, title=3, gold=3000)
    put(m, "p3", 0, title=2, gold=2000)
    put(m, "p4", 0, title=1, gold=1000)
    fx = roll(m, "p1", 1, 1)  # 26: Collect Taxes
    assert [p["gold"] for p in m.state["players"]] == [4300, 2850, 1900, 950]
    assert "Player 2 pays 150 gold nobles to Player 1 in taxes." in says(fx)


def test_a_rival_called_round_the_wall_is_told_of_the_stipend_collected_on_the_way():
    m = new(3)
    put(m, "p1", 17)
    put(m, "p2", 5)
    roll(m, "p1", 1, 1)  # 19: Joust
    fx = m.apply({"t": "challenge", "by": "p1", "player": "p2"})
    assert says(fx)[:3] == [
        "Player 1 calls Player 2 to the joust.",
        "Player 2 collects 200 gold nobles passing the Royal Stipend.",
        "Player 2 moves to Joust.",
    ]


def test_declining_the_trial_is_announced():
    m = new(2)
    put(m, "p1", 34, gold=6000, title=4)
    roll(m, "p1", 1, 1)  # 36: Trial by Combat
    fx = m.apply({"t": "trial", "by": "p1", "yes": False})
    assert says(fx)[0] == "Player 1 does not challenge for the crown."


def test_pawn_sensors_light_the_right_space_and_send_a_pawn_still_at_the_entrance_back():
    m = new(2)
    roll(m, "p1", 3, 3)  # p1 on 5; p2 has not rolled yet
    fx = m.apply({"t": "pawn", "space": 5})
    assert fx == [{"t": "cue", "cue": "pawn.ok", "player": "p1", "space": 5}]
    fx = m.apply({"t": "pawn", "player": "p2", "space": 0})
    assert says(fx, "p2") == ["Player 2, your pawn belongs on the castle entrance."]
    assert cues(fx) == ["pawn.misplaced"]


def test_the_scoreboard_shows_every_players_standing_and_the_last_dice():
    m = new(2)
    put(m, "p2", 31, title=3, gold=3200, champion=True, cottages=2, skip=1, **{"pass": True})
    roll(m, "p1", 3, 3)  # p1: Found a Purse, 50
    v = m.view()
    assert v["board"] == "standard" and v["dice"] == [3, 3] and v["treasury"] == 500
    assert v["players"][1] == {
        "id": "p2", "name": "Player 2", "gold": 3200, "title": "Duke", "rank": 3, "space": 31,
        "space_name": "Royal Stipend", "wall": "inner", "dungeon": False, "cottages": 2,
        "champion": True, "pass": True, "lose_turns": 0,
    }
    assert v["players"][0]["gold"] == 250 and v["players"][0]["space_name"] == "Found a Purse"
    put(m, "p2", 31, skip=2)
    assert m.view()["players"][1]["lose_turns"] == 2


def test_a_title_comes_at_exactly_its_wealth_and_its_light_names_it():
    # "When you collect 1,000 gold nobles, you become a Maid (girls) or a Squire (boys)"
    m = new(2, girls="1")
    put(m, "p1", 3, gold=950)
    fx = roll(m, "p1", 1, 1)  # 5: Found a Purse, 50
    assert pl(m, "p1")["gold"] == 1000 and "Player 1 becomes a Maid." in says(fx)
    titles = [e for e in fx if e["t"] == "cue" and e["cue"] == "title"]
    assert titles == [{"t": "cue", "cue": "title", "player": "p1", "title": "Maid", "rank": 1}]


def test_spaces_that_give_nothing_say_why():
    m = new(2)
    put(m, "p1", 8)
    assert "Player 1 owns no cottage to repair." in says(roll(m, "p1", 1, 1))  # 10: Cottage Repairs
    m = new(2)
    put(m, "p1", 14)
    assert "Player 1 wins the King's favor and a free dungeon pass." in says(roll(m, "p1", 1, 1))  # 16
    m = new(3)
    put(m, "p1", 24, title=1, gold=1000)
    put(m, "p2", 0, title=1, gold=1000)
    fx = roll(m, "p1", 1, 1)  # 26: Collect Taxes, from nobody below a Squire
    assert "Player 1 has nobody of lower title to tax." in says(fx) and pl(m, "p2")["gold"] == 1000
    m = new(3)
    put(m, "p1", 24, title=2, gold=2000)
    put(m, "p2", 0, title=1, gold=1000)
    fx = roll(m, "p1", 1, 1)
    assert "Player 2 pays 50 gold nobles to Player 1 in taxes." in says(fx)
    assert "Player 1 has nobody of lower title to tax." not in says(fx)


def test_a_wrong_girls_option_is_refused_in_words():
    e = raises(Illegal, Match, MM, {"players": 2, "girls": "13"}, 1)
    assert str(e) == "option girls='13': '3' is not a player number (1 to 2)"
    e = raises(Illegal, Match, MM, {"players": 2, "girls": 2}, 1)
    assert str(e) == "option girls=2 must be text listing player numbers, e.g. '24'"


def test_an_owners_board_file_with_a_mistake_is_refused_naming_the_file_and_the_mistake():
    path = HERE + "/boards/three-space-outer-wall.json"
    e = raises(Illegal, Match, MM, {"players": 2, "board": path}, 1)
    assert str(e) == "board %s: 'outer' must be a list of at least 4 spaces" % path


def fresh():
    return new(2)


def in_the_dungeon_with_a_pass():
    m = new(2)
    put(m, "p1", 20, dungeon=True, **{"pass": True})
    return m


def at_the_drawbridge():
    m = new(2)
    put(m, "p1", 12, title=3, gold=3000)
    roll(m, "p1", 1, 2)  # passes the drawbridge (14) with a step to go: stay outside or cross?
    return m


def at_a_joust():
    m = new(2)
    put(m, "p1", 17)
    roll(m, "p1", 1, 1)
    return m


def crowned():
    m = new(2)
    put(m, "p1", 34, gold=6000, title=4)
    roll(m, "p1", 1, 1)
    m.apply({"t": "trial", "by": "p1", "yes": True})
    m.apply({"t": "roll", "by": "p1", "dice": [6]})
    m.apply({"t": "roll", "by": "p2", "dice": [1]})
    return m


# (the game so far, the refused input, the words the players get)
REFUSALS = [
    (fresh, {"t": "roll", "by": "p1", "dice": [1]}, "'dice' must list 2 die values, got [1]"),
    (fresh, {"t": "roll", "by": "p1", "dice": [0, 7]}, "a die shows 1 to 6, got 0"),
    (fresh, {"t": "roll", "by": "p2", "dice": [1, 1]}, "waiting for Player 1 to roll the dice; this input is from 'p2'"),
    (fresh, {"t": "hire", "by": "p1", "yes": True}, "Player 1 must roll the dice (input 'roll'), not send 'hire'"),
    (fresh, {"t": "pawn", "player": "p3", "space": 1}, "pawn: no player 'p3' in this game (p1, p2)"),
    (fresh, {"t": "pawn", "player": "p1", "space": 99}, "pawn: no space 99 on this board (0 to 43)"),
    (fresh, {"t": "trade", "by": "p1", "to": "p1", "price": 5},
     "trade: 'by' (seller) and 'to' (buyer) must be two players of p1, p2, got 'p1' and 'p1'"),
    (fresh, {"t": "trade", "by": "p1", "to": "p2", "price": -5},
     "trade: 'price' must be a whole number of gold nobles, got -5"),
    (fresh, {"t": "trade", "by": "p1", "to": "p2", "price": 5}, "trade: Player 1 owns no cottage to sell"),
    (in_the_dungeon_with_a_pass, {"t": "use-pass", "by": "p1", "yes": False},
     "use-pass before rolling must be yes; just roll to stay and try"),
    (in_the_dungeon_with_a_pass, {"t": "use-pass", "by": "p1"}, "'use-pass' needs 'yes': true or false"),
    (at_the_drawbridge, {"t": "route", "by": "p1", "wall": "moat"},
     "route needs 'wall': 'inner' or 'outer', got 'moat'"),
    (at_a_joust, {"t": "challenge", "by": "p1", "player": "p1"},
     "challenge: 'player' must be another player (p2), got 'p1'"),
    (crowned, {"t": "roll", "by": "p2", "dice": [1, 1]}, "the game is over"),
    (crowned, {"t": "trade", "by": "p1", "to": "p2", "price": 5}, "the game is over"),
]


def test_every_refusal_tells_the_players_what_was_wrong_in_words():
    for game_so_far, bad, words in REFUSALS:
        m = game_so_far()
        e = raises(Illegal, m.apply, bad)
        assert str(e) == words, (bad, str(e))
    m = new(2)
    put(m, "p1", 17, cottages=1)
    put(m, "p2", 5, gold=100)
    e = raises(Illegal, m.apply, {"t": "trade", "by": "p1", "to": "p2", "price": 100})
    assert str(e) == "trade: Player 2 has 100 gold nobles, not enough to pay 100 and keep some"


def test_a_cottage_sold_between_players_lights_the_buyer():
    m = new(2)
    put(m, "p1", 17, cottages=1)
    fx = m.apply({"t": "trade", "by": "p1", "to": "p2", "price": 150})
    assert says(fx) == ["Player 1 sells a cottage to Player 2 for 150 gold nobles."]
    assert cues(fx) == ["cottage"] and fx[1] == {"t": "cue", "cue": "cottage", "player": "p2", "cottages": 1}
    assert [pl(m, p)["gold"] for p in ("p1", "p2")] == [350, 50]


def test_a_board_file_without_a_name_is_shown_by_its_file():
    path = HERE + "/boards/no-name.json"
    m = Match(MM, {"players": 2, "board": path}, 1)
    assert m.view()["board"] == "board " + path
    fx = roll(m, "p1", 1, 2)  # entrance, then spaces 0, 1 and 2: the stipend passed, the drawbridge reached
    assert says(fx)[:3] == ["Player 1 rolls 1 and 2.", "Player 1 collects 200 gold nobles passing the Royal Stipend.",
                            "Player 1 moves to Drawbridge."]


def test_a_board_file_without_a_trial_by_combat_is_refused_saying_nobody_could_win():
    path = HERE + "/boards/no-trial.json"
    e = raises(Illegal, Match, MM, {"players": 2, "board": path}, 1)
    assert str(e) == "board %s: no trial-by-combat space, so nobody could ever win" % path


def test_a_duke_leaving_the_dungeon_by_pass_is_asked_at_the_drawbridge_on_the_way():
    # "if you roll to get out but fail ..., you may use the dungeon pass to get out on whatever you did roll"
    path = HERE + "/boards/dungeon-by-the-drawbridge.json"
    m = Match(MM, {"players": 2, "board": path}, 1)
    put(m, "p1", 2, dungeon=True, title=3, gold=3000, **{"pass": True})
    roll(m, "p1", 1, 3)  # 4: not a way out
    assert asked(m) == ("p1", "use-pass")
    fx = m.apply({"t": "use-pass", "by": "p1", "yes": True})
    assert says(fx) == ["Player 1 uses the dungeon pass and leaves the dungeon."]
    assert asked(m) == ("p1", "route") and pl(m, "p1")["at"] == 4  # on the drawbridge, two steps to go
    assert prompts(fx)[-1]["ask"] == "Player 1, stay on this wall or cross the drawbridge."


def test_a_pawn_going_round_the_corner_of_the_wall_lands_on_its_first_space():
    m = new(2)
    put(m, "p1", 26)
    fx = roll(m, "p1", 1, 1)  # 27, then space 0
    assert "Player 1 moves to Harvest Fair." in says(fx)
    assert m.view()["players"][0]["space_name"] == "Harvest Fair"


def test_the_crowned_king_leaves_no_question_on_the_scoreboard():
    m = crowned()
    assert m.view()["question"] is None and m.awaiting() == []


def test_what_players_hear_when_they_cannot_afford_decline_pay_the_fine_or_roll_in_a_joust():
    m = new(2)
    put(m, "p1", 1, gold=50)
    assert "Player 1 cannot afford a dungeon pass." in says(roll(m, "p1", 1, 1))  # 3: Buy a Dungeon Pass, 50
    m = new(2)
    put(m, "p1", 7, gold=900)
    roll(m, "p1", 1, 1)  # 9: Hire a Champion
    assert says(m.apply({"t": "hire", "by": "p1", "yes": False}))[0] == "Player 1 declines."
    m = new(2)
    put(m, "p1", 20, gold=2000)
    roll(m, "p1", 1, 1)  # 22: Caught Plotting
    fx = m.apply({"t": "pay-fine", "by": "p1", "yes": True})
    assert says(fx)[0] == "Player 1 pays 1000 gold nobles to the Royal Treasury to escape the dungeon."
    m = at_a_joust()
    m.apply({"t": "challenge", "by": "p1", "player": "p2"})
    assert says(m.apply({"t": "roll", "by": "p1", "dice": [4]})) == ["Player 1 rolls 4."]


def test_the_tournament_winner_is_told_the_half_of_the_treasury_taken():
    m = new(2)
    put(m, "p1", 10)
    roll(m, "p1", 1, 1)  # 12: King's Tournament
    m.apply({"t": "tournament", "by": "p1", "player": "p2"})
    m.apply({"t": "roll", "by": "p1", "dice": [6]})
    fx = m.apply({"t": "roll", "by": "p2", "dice": [1]})
    assert "Player 1 takes 250 gold nobles from the Royal Treasury, half of it, for winning the tournament." in says(fx)
