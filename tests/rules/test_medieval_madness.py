"""Medieval Madness: one scenario per rulebook clause (see docs/rules/medieval-madness.md).

Space numbers are the standard board's (shared_rules/medieval_madness/data/medieval_madness_board.json):
outer wall 0-27 (7 Royal Stipend, 14 Drawbridge, 20 Dungeon), inner wall 28-43
(28 Drawbridge, 31 Royal Stipend, 36 Trial by Combat).
"""

from rtest import Illegal, Match, cues, dumps, load, raises, says

MM = load("medieval-madness")


def new(players=4, girls="", seed=1):
    return Match(MM, {"players": players, "girls": girls}, seed)


def put(m, pid, space, **fields):
    """Set a player up for a scenario: pawn on a space plus any other fields (gold, title...)."""
    p = m.state["players"][int(pid[1:]) - 1]
    p["at"] = space
    for k, v in fields.items():
        p[k] = v
    return p


def pl(m, pid):
    return m.state["players"][int(pid[1:]) - 1]


def turn_to(m, pid):
    m.state["turn"] = pid
    m.state["ask"] = {"who": pid, "what": "roll"}


def roll(m, pid, a, b):
    return m.apply({"t": "roll", "by": pid, "dice": [a, b]})


def die(m, pid, a):
    return m.apply({"t": "roll", "by": pid, "dice": [a]})


def joust(m, rival, mine, theirs):
    """Challenge rival from the Joust space just reached, then both dice."""
    m.apply({"t": "challenge", "by": m.state["ask"]["who"], "player": rival})
    die(m, m.state["ask"]["who"], mine)
    return die(m, m.state["ask"]["who"], theirs)


def asked(m):
    return (m.state["ask"]["who"], m.state["ask"]["what"])


# ---------------------------------------------------------------- set-up and turns


def test_setup_gives_each_player_200_and_the_treasury_500():
    for n in (2, 3, 4):
        m = new(n)
        v = m.view()
        assert [p["gold"] for p in v["players"]] == [200] * n
        assert v["treasury"] == 500
        assert v["cottages_left"] == 8
        assert [p["space_name"] for p in v["players"]] == ["the castle entrance"] * n
        assert v["awaiting"] == ["p1"]


def test_player_count_and_girls_option_are_checked():
    e = raises(Illegal, Match, MM, {"players": 5}, 1)
    assert "players" in str(e)
    e = raises(Illegal, Match, MM, {"players": 2, "girls": "3"}, 1)
    assert "'3'" in str(e) and "player number" in str(e)


def test_first_roll_moves_onto_the_outer_wall_and_turns_pass_to_the_right():
    m = new(3)
    fx = roll(m, "p1", 3, 3)  # entrance -> spaces 0..5: Found a Purse, collect 50
    assert pl(m, "p1")["at"] == 5
    assert pl(m, "p1")["gold"] == 250
    assert m.awaiting() == ["p2"]
    assert "move" in cues(fx) and "turn" in cues(fx)
    move = next(e for e in fx if e["t"] == "cue" and e["cue"] == "move")
    assert move["space"] == 5
    roll(m, "p2", 1, 1)
    roll(m, "p3", 3, 3)
    assert m.awaiting() == ["p1"]


def test_engine_rolls_the_dice_when_none_are_entered():
    a = new(2, seed=5)
    b = new(2, seed=5)
    fa = a.apply({"t": "roll", "by": "p1"})
    fb = b.apply({"t": "roll", "by": "p1"})
    assert dumps(a.state) == dumps(b.state) and fa == fb
    d = a.state["dice"]
    assert 1 <= d[0] <= 6 and 1 <= d[1] <= 6
    assert pl(a, "p1")["at"] == d[0] + d[1] - 1


def test_wrong_player_wrong_input_and_bad_dice_are_refused_with_the_state_unchanged():
    m = new(2)
    before = dumps(m.state)
    assert "Player 1" in str(raises(Illegal, m.apply, {"t": "roll", "by": "p2"}))
    assert "roll" in str(raises(Illegal, m.apply, {"t": "hire", "by": "p1", "yes": True}))
    assert "1 to 6" in str(raises(Illegal, roll, m, "p1", 7, 1))
    assert "2 die values" in str(raises(Illegal, m.apply, {"t": "roll", "by": "p1", "dice": [3]}))
    assert dumps(m.state) == before


# ---------------------------------------------------------------- money


def test_collect_comes_from_the_bank_and_pay_goes_to_the_treasury():
    m = new(2)
    roll(m, "p1", 3, 3)  # collect 50
    assert m.state["treasury"] == 500 and pl(m, "p1")["gold"] == 250
    fx = m.apply({"t": "roll", "by": "p2", "dice": [1, 1]})  # space 1: pay the miller 50
    assert pl(m, "p2")["gold"] == 150
    assert m.state["treasury"] == 550
    assert "Player 2 pays 50 gold nobles to the Royal Treasury." in says(fx)


def test_royal_stipend_pays_on_landing_and_on_passing():
    m = new(2)
    put(m, "p1", 5)
    roll(m, "p1", 1, 1)  # lands on 7
    assert pl(m, "p1")["gold"] == 400
    put(m, "p2", 5)
    fx = roll(m, "p2", 1, 2)  # passes 7, lands on 8 (pay 100)
    assert pl(m, "p2")["gold"] == 200 + 200 - 100
    assert "Player 2 collects 200 gold nobles passing the Royal Stipend." in says(fx)
    turn_to(m, "p1")
    put(m, "p1", 30, title=3)
    roll(m, "p1", 1, 2)  # inner wall: passes 31 (500), lands on 33 (tournament)
    assert pl(m, "p1")["gold"] == 400 + 500


def test_titles_follow_wealth_with_boys_and_girls_names_and_are_kept_when_wealth_falls():
    m = new(2, girls="2")
    put(m, "p1", 12, gold=950)
    fx = roll(m, "p1", 1, 5)  # 18: market day +100
    assert pl(m, "p1")["title"] == 1
    assert "Player 1 becomes a Squire." in says(fx)
    assert "title" in cues(fx)
    put(m, "p2", 12, gold=2950)
    fx = roll(m, "p2", 1, 5)
    assert m.view()["players"][1]["title"] == "Duchess"
    assert "Player 2 becomes a Duchess." in says(fx)  # one announcement for the highest title reached
    put(m, "p1", 19, gold=1050)
    roll(m, "p1", 1, 1)  # 21: toll road, pay 150
    assert pl(m, "p1")["gold"] == 900 and m.view()["players"][0]["title"] == "Squire"


def test_king_title_is_not_given_for_wealth_alone():
    m = new(2)
    put(m, "p1", 12, gold=5950)
    roll(m, "p1", 1, 5)
    assert m.view()["players"][0]["title"] == "Prince" and not m.over


# ---------------------------------------------------------------- walls and drawbridge


def test_a_duke_may_cross_the_drawbridge_and_pays_100():
    m = new(2)
    put(m, "p1", 12, gold=3000, title=3)
    roll(m, "p1", 1, 2)  # 13, then the bridge at 14 with one step left
    assert asked(m) == ("p1", "route")
    fx = m.apply({"t": "route", "by": "p1", "wall": "inner"})
    assert pl(m, "p1")["at"] == 29  # bridge (28) then one step: Royal Banquet, collect 300
    assert pl(m, "p1")["gold"] == 3000 - 100 + 300
    assert m.state["treasury"] == 600
    assert "drawbridge" in cues(fx)


def test_a_duke_may_stay_on_the_outer_wall_without_paying():
    m = new(2)
    put(m, "p1", 12, gold=3000, title=3)
    roll(m, "p1", 1, 2)
    m.apply({"t": "route", "by": "p1", "wall": "outer"})
    assert pl(m, "p1")["at"] == 15 and pl(m, "p1")["gold"] == 3000 - 50


def test_lower_titles_pass_the_drawbridge_without_a_choice():
    m = new(2)
    put(m, "p1", 12, gold=2500, title=2)
    roll(m, "p1", 1, 2)
    assert pl(m, "p1")["at"] == 15 and m.awaiting() == ["p2"]


def test_a_lower_title_on_the_inner_wall_must_cross_back_and_pay_at_the_drawbridge():
    m = new(2)
    put(m, "p1", 43, gold=500)  # called there earlier for a joust
    fx = roll(m, "p1", 1, 1)  # 28 is the inner bridge: forced across to 14, one more step to 15
    assert pl(m, "p1")["at"] == 15
    assert pl(m, "p1")["gold"] == 500 - 100 - 50
    assert "Player 1 crosses the drawbridge to the outer wall." in says(fx)


def test_a_lower_title_landing_exactly_on_the_inner_drawbridge_crosses_back_and_pays():
    # The rulebook: a lower title called inside "may stay there only until they reach the
    # drawbridge where they must return to the outer castle wall"; landing on it is reaching it.
    m = Match(MM, {"players": 2}, 11)
    put(m, "p1", 42, gold=2000, title=2)  # a Lord, called inside for a joust earlier
    fx = roll(m, "p1", 1, 1)  # 43, then 28: the inner bridge, with no step left
    p = pl(m, "p1")
    assert p["at"] == 14 and p["gold"] == 2000 - 100
    assert m.state["treasury"] == 500 + 100
    assert "Player 1 crosses the drawbridge to the outer wall." in says(fx)
    assert m.view()["players"][0]["wall"] == "outer"
    turn_to(m, "p1")
    roll(m, "p1", 1, 1)  # from the outer bridge: no second fee, no route question
    assert pl(m, "p1")["at"] == 16 and pl(m, "p1")["gold"] == 2000 - 100 and pl(m, "p1")["pass"]


def test_a_duke_landing_on_the_inner_drawbridge_may_stay_inside():
    m = new(2)
    put(m, "p1", 42, gold=3000, title=3)
    roll(m, "p1", 1, 1)
    assert pl(m, "p1")["at"] == 28 and pl(m, "p1")["gold"] == 3000


def test_a_duke_on_the_inner_wall_chooses_at_the_drawbridge():
    m = new(2)
    put(m, "p1", 43, gold=3000, title=3)
    roll(m, "p1", 1, 1)
    assert asked(m) == ("p1", "route")
    m.apply({"t": "route", "by": "p1", "wall": "inner"})
    assert pl(m, "p1")["at"] == 29 and pl(m, "p1")["gold"] == 3300


def test_landing_on_the_drawbridge_costs_nothing_until_crossing():
    m = new(2)
    put(m, "p1", 12, gold=3000, title=3)
    roll(m, "p1", 1, 1)
    assert pl(m, "p1")["at"] == 14 and pl(m, "p1")["gold"] == 3000
    turn_to(m, "p1")
    roll(m, "p1", 1, 1)  # starts on the bridge: may cross now
    assert asked(m) == ("p1", "route")


# ---------------------------------------------------------------- simple spaces


def test_lose_a_turn_skips_the_next_turn():
    m = new(2)
    put(m, "p1", 4)
    roll(m, "p1", 1, 1)  # 6: lame horse
    assert pl(m, "p1")["skip"] == 1
    fx = roll(m, "p2", 3, 3)
    assert "Player 1 loses this turn." in says(fx)
    assert m.awaiting() == ["p2"]
    roll(m, "p2", 3, 3)
    assert m.awaiting() == ["p1"]


def test_move_ahead_moves_on_and_follows_the_new_space():
    m = new(2)
    put(m, "p1", 23)
    roll(m, "p1", 1, 1)  # 25: move ahead 2 -> 27, feed the hounds, pay 100
    assert pl(m, "p1")["at"] == 27 and pl(m, "p1")["gold"] == 100


def test_inherit_cottage_gives_a_cottage_and_another_turn_even_when_none_are_left():
    m = new(2)
    fx = roll(m, "p1", 1, 2)  # 2: inherit cottage
    assert pl(m, "p1")["cottages"] == 1 and m.state["cottages_left"] == 7
    assert m.awaiting() == ["p1"] and "Player 1 takes another turn." in says(fx)
    m.state["cottages_left"] = 0
    put(m, "p1", 0)
    fx = roll(m, "p1", 1, 1)
    assert pl(m, "p1")["cottages"] == 1 and "No cottages are left to inherit." in says(fx)
    assert m.awaiting() == ["p1"]


def test_cottage_repairs_cost_50_per_cottage():
    m = new(2)
    put(m, "p1", 8, cottages=3, gold=400)
    roll(m, "p1", 1, 1)
    assert pl(m, "p1")["gold"] == 250 and m.state["treasury"] == 650


def test_sell_cottage_for_1500_one_at_a_time_back_to_the_pool():
    m = new(2)
    put(m, "p1", 15, cottages=2, gold=100)
    m.state["cottages_left"] = 6
    roll(m, "p1", 1, 1)  # 17: sell cottage
    assert asked(m) == ("p1", "sell-cottage")
    m.apply({"t": "sell-cottage", "by": "p1", "yes": True})
    assert pl(m, "p1")["cottages"] == 1 and pl(m, "p1")["gold"] == 1600
    assert m.state["cottages_left"] == 7 and m.awaiting() == ["p2"]


def test_sell_cottage_is_skipped_without_a_cottage():
    m = new(2)
    put(m, "p1", 15)
    fx = roll(m, "p1", 1, 1)
    assert "Player 1 has no cottage to sell." in says(fx) and m.awaiting() == ["p2"]


def test_hire_a_champion_by_title_and_pay_wages_when_you_have_one():
    m = new(2)
    put(m, "p1", 7, gold=2100, title=2)
    roll(m, "p1", 1, 1)  # 9: hire a champion
    assert asked(m) == ("p1", "hire")
    m.apply({"t": "hire", "by": "p1", "yes": True})
    assert pl(m, "p1")["champion"] and pl(m, "p1")["gold"] == 2100 - 150
    turn_to(m, "p1")
    put(m, "p1", 7, gold=3100, title=3)
    roll(m, "p1", 1, 1)  # wages for a Duke
    assert pl(m, "p1")["gold"] == 3100 - 150 and m.awaiting() == ["p2"]


def test_buy_a_dungeon_pass_by_title_and_hold_only_one():
    m = new(2)
    put(m, "p1", 1, gold=4100, title=4)
    roll(m, "p1", 1, 1)  # 3: buy a dungeon pass
    m.apply({"t": "buy-pass", "by": "p1", "yes": True})
    assert pl(m, "p1")["pass"] and pl(m, "p1")["gold"] == 3900
    turn_to(m, "p1")
    put(m, "p1", 1)
    fx = roll(m, "p1", 1, 1)
    assert "Player 1 already holds a dungeon pass." in says(fx) and m.awaiting() == ["p2"]


def test_kings_favor_gives_a_free_pass_only_to_a_player_without_one():
    m = new(2)
    put(m, "p1", 14)
    roll(m, "p1", 1, 1)
    assert pl(m, "p1")["pass"] and pl(m, "p1")["gold"] == 200


def test_collect_taxes_from_each_lower_title_at_its_rate():
    m = new(4)
    put(m, "p1", 24, title=3, gold=3000)
    put(m, "p2", 0, title=1, gold=1000)
    put(m, "p3", 0, title=2, gold=2000)
    put(m, "p4", 0, title=0, gold=300)
    roll(m, "p1", 1, 1)  # 26: collect taxes
    assert [p["gold"] for p in m.state["players"]] == [3150, 950, 1900, 300]
    assert m.state["treasury"] == 500


def test_caught_plotting_pay_the_fine_or_go_to_the_dungeon_even_with_a_pass():
    m = new(2)
    put(m, "p1", 20, gold=1500)
    roll(m, "p1", 1, 1)
    assert asked(m) == ("p1", "pay-fine")
    m.apply({"t": "pay-fine", "by": "p1", "yes": True})
    assert pl(m, "p1")["gold"] == 500 and not pl(m, "p1")["dungeon"] and m.state["treasury"] == 1500
    put(m, "p2", 20, gold=300, **{"pass": True})
    fx = roll(m, "p2", 1, 1)  # cannot afford the fine: straight to the dungeon, pass kept
    assert pl(m, "p2")["dungeon"] and pl(m, "p2")["at"] == 20 and pl(m, "p2")["pass"]
    assert "dungeon" in cues(fx)


# ---------------------------------------------------------------- the dungeon


def test_dungeon_holds_until_3_5_7_or_9():
    m = new(2)
    put(m, "p1", 18)
    roll(m, "p1", 1, 1)  # lands on the dungeon
    assert pl(m, "p1")["dungeon"]
    roll(m, "p2", 3, 3)
    fx = roll(m, "p1", 2, 2)
    assert pl(m, "p1")["at"] == 20 and "Player 1 stays in the dungeon." in says(fx)
    roll(m, "p2", 3, 3)
    roll(m, "p1", 1, 2)  # 3 gets out and moves 3: 23, inherit a cottage
    assert not pl(m, "p1")["dungeon"] and pl(m, "p1")["at"] == 23


def test_dungeon_pass_after_a_failed_roll_moves_that_roll_and_is_returned():
    m = new(2)
    put(m, "p1", 20, dungeon=True, **{"pass": True})
    roll(m, "p1", 2, 2)
    assert asked(m) == ("p1", "use-pass")
    m.apply({"t": "use-pass", "by": "p1", "yes": True})
    assert pl(m, "p1")["at"] == 24 and not pl(m, "p1")["pass"] and not pl(m, "p1")["dungeon"]


def test_dungeon_pass_can_be_kept_or_used_before_rolling():
    m = new(2)
    put(m, "p1", 20, dungeon=True, **{"pass": True})
    roll(m, "p1", 2, 2)
    m.apply({"t": "use-pass", "by": "p1", "yes": False})
    assert pl(m, "p1")["dungeon"] and pl(m, "p1")["pass"] and m.awaiting() == ["p2"]
    roll(m, "p2", 3, 3)
    assert {"t": "use-pass", "by": "p1", "yes": True} in m.legal()
    m.apply({"t": "use-pass", "by": "p1", "yes": True})
    assert not pl(m, "p1")["dungeon"] and asked(m) == ("p1", "roll")
    roll(m, "p1", 2, 2)  # a normal move now
    assert pl(m, "p1")["at"] == 24


# ---------------------------------------------------------------- joust


def test_joust_must_challenge_and_the_rival_walks_round_collecting_the_stipend():
    m = new(3)
    put(m, "p1", 17)
    put(m, "p2", 5)
    roll(m, "p1", 1, 1)  # 19: joust
    assert asked(m) == ("p1", "challenge")
    assert [i["player"] for i in m.legal()] == ["p2", "p3"]
    assert raises(Illegal, m.apply, {"t": "challenge", "by": "p1", "player": None})
    m.apply({"t": "challenge", "by": "p1", "player": "p2"})
    assert pl(m, "p2")["at"] == 19 and pl(m, "p2")["gold"] == 400  # passed the stipend at 7
    die(m, "p1", 4)
    fx = die(m, "p2", 4)  # tie: the challenger wins
    assert pl(m, "p1")["gold"] == 300 and pl(m, "p2")["gold"] == 300
    assert m.state["treasury"] == 500
    assert "Player 1 wins the joust on a tie, 4 against 4." in says(fx)
    assert m.awaiting() == ["p2"]


def test_joust_called_across_walls_goes_directly_without_fees_or_stipends():
    m = new(2)
    put(m, "p1", 17)
    put(m, "p2", 43, gold=400)
    roll(m, "p1", 1, 1)
    m.apply({"t": "challenge", "by": "p1", "player": "p2"})
    assert pl(m, "p2")["at"] == 19 and pl(m, "p2")["gold"] == 400
    die(m, "p1", 2)
    fx = die(m, "p2", 5)
    assert "Player 2 wins the joust, 5 against 2." in says(fx)
    assert pl(m, "p2")["gold"] == 500 and pl(m, "p1")["gold"] == 100


def test_a_rival_in_the_dungeon_jousts_from_the_dungeon():
    m = new(2)
    put(m, "p1", 17)
    put(m, "p2", 20, dungeon=True)
    roll(m, "p1", 1, 1)
    m.apply({"t": "challenge", "by": "p1", "player": "p2"})
    assert pl(m, "p2")["at"] == 20 and pl(m, "p2")["dungeon"]


def test_champions_add_one_are_sent_instead_of_the_pawn_and_are_lost_by_the_loser():
    m = new(2)
    put(m, "p1", 17, champion=True)
    put(m, "p2", 5, champion=True)
    roll(m, "p1", 1, 1)
    m.apply({"t": "challenge", "by": "p1", "player": "p2"})
    assert asked(m) == ("p1", "champion")
    m.apply({"t": "champion", "by": "p1", "yes": True})
    assert asked(m) == ("p2", "champion")
    m.apply({"t": "champion", "by": "p2", "yes": True})
    assert pl(m, "p2")["at"] == 5 and pl(m, "p2")["gold"] == 200  # the champion went, not the pawn
    die(m, "p1", 3)
    fx = die(m, "p2", 3)  # 4 against 4: the challenger wins the tie
    assert not pl(m, "p2")["champion"] and pl(m, "p1")["champion"]
    assert "champion.lost" in cues(fx)


# ---------------------------------------------------------------- King's Tournament


def test_tournament_is_optional():
    m = new(2)
    put(m, "p1", 10)
    roll(m, "p1", 1, 1)  # 12
    assert asked(m) == ("p1", "tournament")
    m.apply({"t": "tournament", "by": "p1", "player": None})
    assert m.awaiting() == ["p2"] and m.state["treasury"] == 500


def test_tournament_winner_takes_half_the_treasury_and_ties_win_nothing():
    m = new(2)
    m.state["treasury"] = 901
    put(m, "p1", 10)
    roll(m, "p1", 1, 1)
    m.apply({"t": "tournament", "by": "p1", "player": "p2"})
    assert pl(m, "p2")["at"] == 12  # called from the entrance, off the walls: straight there
    die(m, "p1", 3)
    fx = die(m, "p2", 3)
    assert "A tie, 3 against 3: nobody wins." in says(fx) and m.state["treasury"] == 901
    turn_to(m, "p1")
    put(m, "p1", 10)
    roll(m, "p1", 1, 1)
    m.apply({"t": "tournament", "by": "p1", "player": "p2"})
    die(m, "p1", 2)
    fx = die(m, "p2", 6)
    assert "Player 2 wins the tournament, 6 against 2." in says(fx)
    assert pl(m, "p2")["gold"] == 200 + 450 and m.state["treasury"] == 451


# ---------------------------------------------------------------- Trial by Combat


def test_trial_space_gives_another_turn_below_prince_or_below_6000():
    m = new(2)
    put(m, "p1", 34, gold=3000, title=3)
    roll(m, "p1", 1, 1)  # 36
    assert m.awaiting() == ["p1"]
    turn_to(m, "p1")
    put(m, "p1", 34, gold=5000, title=4)
    roll(m, "p1", 1, 1)
    assert m.awaiting() == ["p1"] and asked(m) == ("p1", "roll")


def trial(players, dice, champion=False):
    m = new(players)
    put(m, "p1", 34, gold=6000, title=4, champion=champion)
    m.state["treasury"] = 1234
    roll(m, "p1", 1, 1)
    assert asked(m) == ("p1", "trial")
    m.apply({"t": "trial", "by": "p1", "yes": True})
    for mine, theirs in dice:
        if m.state["ask"]["what"] == "champion":
            m.apply({"t": "champion", "by": "p1", "yes": True})
        who = m.state["ask"]["who"]
        die(m, who, mine)
        who = m.state["ask"]["who"]
        die(m, who, theirs)
    return m


def test_trial_in_four_players_needs_two_of_three_and_wins_the_treasury_and_crown():
    m = trial(4, [(6, 1), (1, 6), (5, 2)])
    log = m.view()["log"]
    assert "Player 1 beats Player 2, 6 against 1." in log and "Player 3 beats Player 1, 6 against 1." in log
    assert m.over and m.state["winner"] == "p1"
    assert pl(m, "p1")["gold"] == 6000 + 1234 and m.state["treasury"] == 0
    v = m.view()
    assert v["players"][0]["title"] == "King" and v["winner"] == "p1"
    assert "Long live King Player 1! Player 1 wins the crown and the game." in v["log"]


def test_trial_lost_keeps_playing_and_a_lost_champion_is_gone_for_the_rest():
    m = trial(4, [(1, 6), (5, 2), (4, 4)], champion=True)
    assert not m.over and not pl(m, "p1")["champion"]
    assert pl(m, "p1")["gold"] == 6000 and m.awaiting() == ["p2"]


def test_trial_in_three_players_must_beat_both():
    assert not trial(3, [(6, 1), (2, 3)]).over
    assert trial(3, [(6, 1), (4, 3)]).over


def test_trial_in_two_players_must_beat_the_other():
    assert trial(2, [(5, 4)]).over
    assert not trial(2, [(4, 4)]).over  # a tie beats nobody


def test_trial_may_be_declined():
    m = new(2)
    put(m, "p1", 34, gold=6000, title=4)
    roll(m, "p1", 1, 1)
    m.apply({"t": "trial", "by": "p1", "yes": False})
    assert not m.over and m.awaiting() == ["p2"]


# ---------------------------------------------------------------- bankruptcy


def test_bankruptcy_loses_everything_goes_to_the_dungeon_with_200_from_the_bank():
    m = new(3)
    put(m, "p1", 19, gold=120, title=2, cottages=3, champion=True, **{"pass": True})
    m.state["cottages_left"] = 5
    fx = roll(m, "p1", 1, 1)  # 21: toll road, pay 150
    p = pl(m, "p1")
    assert p["gold"] == 200 and p["title"] == 0 and p["cottages"] == 0
    assert not p["champion"] and not p["pass"] and p["dungeon"] and p["at"] == 20
    assert m.state["cottages_left"] == 8 and m.state["treasury"] == 620
    assert "bankrupt" in cues(fx) and m.awaiting() == ["p2"]


def test_a_joust_loser_who_cannot_pay_goes_bankrupt_and_the_winner_gets_what_there_was():
    m = new(2)
    put(m, "p1", 17)
    put(m, "p2", 18, gold=60)
    roll(m, "p1", 1, 1)
    joust(m, "p2", 6, 1)
    assert pl(m, "p1")["gold"] == 260 and pl(m, "p2")["dungeon"] and pl(m, "p2")["gold"] == 200


# ---------------------------------------------------------------- pawn sensors


def test_pawn_sensor_confirms_or_says_where_the_pawn_belongs():
    m = new(2)
    roll(m, "p1", 3, 3)
    before = dumps(m.state)
    fx = m.apply({"t": "pawn", "player": "p1", "space": 5})
    assert cues(fx) == ["pawn.ok"]
    fx = m.apply({"t": "pawn", "player": "p1", "space": 6})
    assert says(fx, "p1") == ["Player 1, your pawn belongs on space 5, Found a Purse."]
    assert says(fx, None) == []
    assert dumps(m.state) == before
    assert "no space 99" in str(raises(Illegal, m.apply, {"t": "pawn", "player": "p1", "space": 99}))
    assert "no player" in str(raises(Illegal, m.apply, {"t": "pawn", "player": "p3", "space": 1}))


def test_a_presence_sensor_that_cannot_tell_pawns_apart_checks_some_pawn_belongs_there():
    m = new(2)
    roll(m, "p1", 3, 3)
    assert cues(m.apply({"t": "pawn", "space": 5})) == ["pawn.ok"]
    fx = m.apply({"t": "pawn", "space": 9})
    assert says(fx, None) == ["No pawn belongs on space 9, Hire a Champion."]
    assert "pawn.misplaced" in cues(fx)


# ---------------------------------------------------------------- cottages between players


def test_players_may_sell_cottages_to_each_other_at_an_agreed_price_at_any_time():
    m = new(3)
    put(m, "p2", 0, cottages=2, gold=950)
    put(m, "p3", 0, gold=800)
    fx = m.apply({"t": "trade", "by": "p2", "to": "p3", "price": 600})
    assert pl(m, "p2")["cottages"] == 1 and pl(m, "p3")["cottages"] == 1
    assert pl(m, "p2")["gold"] == 1550 and pl(m, "p3")["gold"] == 200
    assert "Player 2 becomes a Squire." in says(fx)
    assert m.awaiting() == ["p1"]  # not anybody's turn: the game goes on as before
    assert "Player 1 owns no cottage" in str(raises(Illegal, m.apply, {"t": "trade", "by": "p1", "to": "p3", "price": 1}))
    assert "not enough" in str(raises(Illegal, m.apply, {"t": "trade", "by": "p2", "to": "p3", "price": 200}))
    assert "'price'" in str(raises(Illegal, m.apply, {"t": "trade", "by": "p2", "to": "p3", "price": -5}))


# ---------------------------------------------------------------- prompts and views


def test_each_question_is_prompted_to_the_player_with_the_allowed_answers():
    m = new(3)
    put(m, "p1", 17)
    fx = roll(m, "p1", 1, 1)
    ps = [e for e in fx if e["t"] == "prompt"]
    assert ps[-1]["to"] == "p1" and ps[-1]["ask"] == "Player 1, choose a player to joust."
    assert ps[-1]["choices"] == m.legal()
    assert m.view()["question"] == {"who": "p1", "what": "challenge", "text": "choose a player to joust"}


def test_nothing_is_hidden_every_viewer_sees_the_same_table():
    m = new(4)
    roll(m, "p1", 3, 3)
    assert dumps(m.view(None)["players"]) == dumps(m.view("p2")["players"])
    assert MM.view(m.state, None) == MM.view(m.state, "p3")


# ---------------------------------------------------------------- more corners


def test_a_tournament_tie_costs_nobody_the_champion():
    m = new(2)
    put(m, "p1", 10, champion=True)
    put(m, "p2", 0, champion=True)
    roll(m, "p1", 1, 1)
    m.apply({"t": "tournament", "by": "p1", "player": "p2"})
    m.apply({"t": "champion", "by": "p1", "yes": True})
    m.apply({"t": "champion", "by": "p2", "yes": True})
    die(m, "p1", 4)
    die(m, "p2", 4)
    assert pl(m, "p1")["champion"] and pl(m, "p2")["champion"] and m.state["treasury"] == 500


def test_a_drawbridge_fee_that_bankrupts_ends_the_move_in_the_dungeon():
    m = new(2)
    put(m, "p1", 42, gold=100)  # a lower title on the inner wall, forced back across
    fx = roll(m, "p1", 2, 2)
    p = pl(m, "p1")
    assert p["dungeon"] and p["at"] == 20 and p["gold"] == 200
    assert "bankrupt" in cues(fx) and m.awaiting() == ["p2"]


def test_trial_defenders_who_play_and_lose_their_champion_lose_it():
    m = new(3)
    put(m, "p1", 34, gold=6000, title=4)
    put(m, "p2", 0, champion=True)
    put(m, "p3", 0, champion=True)
    roll(m, "p1", 1, 1)
    m.apply({"t": "trial", "by": "p1", "yes": True})
    m.apply({"t": "champion", "by": "p2", "yes": True})
    die(m, "p1", 6)
    die(m, "p2", 1)
    m.apply({"t": "champion", "by": "p3", "yes": False})
    die(m, "p1", 2)
    die(m, "p3", 5)
    assert not pl(m, "p2")["champion"] and pl(m, "p3")["champion"]
    assert pl(m, "p2")["at"] == 0 and pl(m, "p3")["at"] == 0  # nobody moves for a trial
    assert not m.over
