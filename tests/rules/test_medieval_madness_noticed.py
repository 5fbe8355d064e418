"""Medieval Madness: the rulebook's price lists title by title, and what the players hear and see
(announcements, lights, the scoreboard) exactly. Written from the mutation run's survivors
(tests/rules/mutation.py). Space numbers are the standard board's (see test_medieval_madness.py).

Runs under CPython (pytest) and MicroPython (tests/rules/test_micropython.py).
"""

from rtest import cues, says
from test_medieval_madness import asked, new, pl, put, roll

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
