"""Single elimination: byes to the top seeds, seeding as given, at random or from a round robin."""

from collections import Counter

import pytest
from battlement.venue.formats import NotReady, Result, Tournament
from hypothesis import given, settings
from hypothesis import strategies as st
from support.tournaments import by_favourites, fated, play, result

TEAMS = ["Knights", "Orcs", "Elves", "Dwarves", "Trolls", "Goblins", "Wizards", "Giants"]


def shape(t):
    return [(m.id, m.state, m.teams) for m in t.matches()]


def test_two_teams_play_one_final():
    t = Tournament("single_elimination", ["Knights", "Orcs"])
    assert shape(t) == [("W1-1", "ready", ("Knights", "Orcs"))]
    t.record(result(t.match("W1-1"), "Orcs"))
    assert t.finished and t.champion == "Orcs"
    assert [(s.rank, s.team, s.out) for s in t.standings()] == [(1, "Orcs", False), (2, "Knights", True)]


def test_three_teams_the_top_seed_has_the_bye():
    t = Tournament("single_elimination", TEAMS[:3])
    assert shape(t) == [("W1-1", "bye", ("Knights", None)), ("W1-2", "ready", ("Orcs", "Elves")),
                        ("W2-1", "waiting", ("Knights", None))]
    assert t.match("W2-1").sources == ("winner of W1-1", "winner of W1-2")
    t.record(result(t.match("W1-2"), "Elves"))
    assert [m.teams for m in t.ready()] == [("Knights", "Elves")]


def test_five_teams_seeds_one_to_three_go_straight_to_round_two():
    t = Tournament("single_elimination", TEAMS[:5])
    assert [(m.id, m.teams) for m in t.ready()] == [("W1-2", ("Dwarves", "Trolls")), ("W2-2", ("Orcs", "Elves"))]
    assert [m.id for m in t.matches() if m.state == "bye"] == ["W1-1", "W1-3", "W1-4"]
    play(t, by_favourites(t))
    assert len(t.results) == 4 and t.champion == "Knights"
    assert [(s.rank, s.team) for s in t.standings()] == [
        (1, "Knights"), (2, "Orcs"), (3, "Elves"), (3, "Dwarves"), (5, "Trolls")]


def test_eight_teams_seeds_meet_one_against_eight_and_the_top_two_only_in_the_final():
    t = Tournament("single_elimination", TEAMS)
    assert [m.teams for m in t.ready()] == [("Knights", "Giants"), ("Dwarves", "Trolls"), ("Orcs", "Wizards"),
                                            ("Elves", "Goblins")]
    play(t, by_favourites(t))
    assert [(m.id, m.teams) for m in t.matches()][4:] == [
        ("W2-1", ("Knights", "Dwarves")), ("W2-2", ("Orcs", "Elves")), ("W3-1", ("Knights", "Orcs"))]
    assert [s.rank for s in t.standings()] == [1, 2, 3, 3, 5, 5, 5, 5]


def test_thirty_two_teams_play_thirty_one_matches_in_five_rounds():
    names = ["T%02d" % (i + 1) for i in range(32)]
    t = Tournament("single_elimination", names)
    assert [m.teams for m in t.ready()][:4] == [("T01", "T32"), ("T16", "T17"), ("T08", "T25"), ("T09", "T24")]
    play(t, by_favourites(t))
    assert Counter(m.round for m in t.matches()) == {1: 16, 2: 8, 3: 4, 4: 2, 5: 1}
    assert t.match("W5-1").teams == ("T01", "T02") and t.champion == "T01"


def test_random_seeding_is_the_same_for_the_same_seed():
    a = Tournament("single_elimination", TEAMS, {"seeding": "random"}, seed=7)
    b = Tournament("single_elimination", TEAMS, {"seeding": "random"}, seed=7)
    assert a.seeds == b.seeds and sorted(a.seeds) == sorted(TEAMS)
    # a shuffle that gave the order as given every time would not be random
    assert len({Tournament("single_elimination", TEAMS, {"seeding": "random"}, seed=s).seeds for s in range(6)}) > 1


def test_a_round_robin_seeds_the_bracket_and_its_best_go_on():
    t = Tournament("single_elimination", TEAMS[:5], {"seeding": "round_robin", "advance": 4})
    assert t.seeds is None and {m.state for m in t.matches() if m.bracket == "winners"} == {"waiting"}
    with pytest.raises(NotReady, match="^W1-1: waiting for the round robin's standings to seed the bracket$"):
        t.record(Result("W1-1", "Knights", {"Knights": 3, "Orcs": 1}))
    # the last seed wins everything in the round robin, the first loses everything
    play(t, lambda m: result(m, max(m.teams, key=t.names.index)))
    assert t.seeds == ("Trolls", "Dwarves", "Elves", "Orcs")
    # the semi-final losers share third, by seed; the team left out of the bracket comes last
    assert [(s.rank, s.team) for s in t.standings()] == [
        (1, "Trolls"), (2, "Dwarves"), (3, "Elves"), (3, "Orcs"), (5, "Knights")]
    assert t.standings()[-1].out and t.champion == "Trolls" and len(t.results) == 10 + 3


# ---------------------------------------------------------------- properties over random tournaments

seeds = st.integers(min_value=0, max_value=2**32)


@settings(max_examples=800, deadline=None)
@given(n=st.integers(min_value=2, max_value=32), fate=seeds, order=seeds, random_seeding=st.booleans())
def test_everyone_but_the_champion_loses_exactly_once_in_any_order(n, fate, order, random_seeding):
    names = ["T%d" % i for i in range(n)]
    opts = {"seeding": "random" if random_seeding else "order"}
    t = play(Tournament("single_elimination", names, opts, seed=fate), fated(fate))
    losses = Counter(r.loser() for r in t.results)
    assert len(t.results) == n - 1 and t.finished
    assert set(losses) == set(names) - {t.champion} and set(losses.values()) == {1}
    # byes: exactly the top seeds, one for each place the bracket has over the team count
    size = 1 << (n - 1).bit_length()
    byes = {x for m in t.matches() if m.state == "bye" for x in m.teams if x}
    assert byes == set(t.seeds[: size - n])
    again = play(Tournament("single_elimination", names, opts, seed=fate), fated(fate), order_seed=order)
    assert again.champion == t.champion and again.standings() == t.standings()
