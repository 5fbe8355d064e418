"""Double elimination: winners' and losers' brackets, byes, and the grand final with its reset."""

from collections import Counter

from battlement.venue.formats import Tournament
from hypothesis import given, settings
from hypothesis import strategies as st
from support.tournaments import by_favourites, fated, play, result

TEAMS = ["Knights", "Orcs", "Elves", "Dwarves", "Trolls", "Goblins", "Wizards", "Giants"]


def played(t):
    return [(m.id, m.teams, m.result.winner) for m in t.matches() if m.result]


def test_two_teams_the_first_loser_gets_a_second_chance_and_a_reset():
    t = Tournament("double_elimination", ["Knights", "Orcs"])
    t.record(result(t.match("W1-1"), "Knights"))
    assert [(m.id, m.teams) for m in t.ready()] == [("GF-1", ("Knights", "Orcs"))]
    t.record(result(t.match("GF-1"), "Orcs"))
    # one loss each now: the bracket resets, and the same two play again
    assert not t.finished and [(m.id, m.teams) for m in t.ready()] == [("GF-2", ("Knights", "Orcs"))]
    t.record(result(t.match("GF-2"), "Orcs"))
    assert t.champion == "Orcs" and len(t.results) == 3
    assert [(s.rank, s.team, s.losses) for s in t.standings()] == [(1, "Orcs", 1), (2, "Knights", 2)]


def test_when_the_winners_side_takes_the_first_final_there_is_no_reset():
    t = Tournament("double_elimination", ["Knights", "Orcs"])
    play(t, by_favourites(t))
    assert t.champion == "Knights" and len(t.results) == 2 and t.match("GF-2").state == "void"


def test_three_teams_by_hand():
    t = Tournament("double_elimination", TEAMS[:3])
    assert [(m.id, m.state) for m in t.matches()] == [
        ("W1-1", "bye"), ("W1-2", "ready"), ("W2-1", "waiting"), ("L1-1", "waiting"), ("L2-1", "waiting"),
        ("GF-1", "waiting"), ("GF-2", "waiting")]
    t.record(result(t.match("W1-2"), "Orcs"))
    assert t.match("L1-1").state == "bye"  # nobody drops from the top seed's bye: Elves go on unplayed
    play(t, by_favourites(t))
    assert played(t) == [("W1-2", ("Orcs", "Elves"), "Orcs"), ("W2-1", ("Knights", "Orcs"), "Knights"),
                         ("L2-1", ("Elves", "Orcs"), "Orcs"), ("GF-1", ("Knights", "Orcs"), "Knights")]


def test_five_teams_byes_ripple_into_the_losers_bracket():
    t = Tournament("double_elimination", TEAMS[:5])
    assert [m.id for m in t.matches() if m.state == "void"] == ["L1-2"]  # the losers of three byes: nobody
    play(t, by_favourites(t))
    assert [m for m, _, _ in played(t)] == ["W1-2", "W2-1", "W2-2", "L2-1", "W3-1", "L3-1", "L4-1", "GF-1"]
    assert t.match("L2-2").state == "bye" and t.match("L2-2").teams == (None, "Dwarves")
    assert [(s.rank, s.team) for s in t.standings()] == [
        (1, "Knights"), (2, "Orcs"), (3, "Elves"), (4, "Dwarves"), (5, "Trolls")]


def test_eight_teams_by_hand():
    t = Tournament("double_elimination", TEAMS)
    play(t, by_favourites(t))
    assert played(t)[4:] == [
        ("W2-1", ("Knights", "Dwarves"), "Knights"), ("W2-2", ("Orcs", "Elves"), "Orcs"),
        ("L1-1", ("Giants", "Trolls"), "Trolls"), ("L1-2", ("Wizards", "Goblins"), "Goblins"),
        # the losers of W2 drop in crossed over, so Trolls do not meet Dwarves, who beat them in W1
        ("L2-1", ("Trolls", "Elves"), "Elves"), ("L2-2", ("Goblins", "Dwarves"), "Dwarves"),
        ("W3-1", ("Knights", "Orcs"), "Knights"), ("L3-1", ("Elves", "Dwarves"), "Elves"),
        ("L4-1", ("Elves", "Orcs"), "Orcs"), ("GF-1", ("Knights", "Orcs"), "Knights")]
    assert [(s.rank, s.team) for s in t.standings()] == [
        (1, "Knights"), (2, "Orcs"), (3, "Elves"), (4, "Dwarves"), (5, "Trolls"), (5, "Goblins"),
        (7, "Wizards"), (7, "Giants")]


def test_thirty_two_teams_with_and_without_the_reset():
    names = ["T%02d" % (i + 1) for i in range(32)]
    t = play(Tournament("double_elimination", names), by_favourites(Tournament("double_elimination", names)))
    assert len(t.results) == 62 and t.champion == "T01"
    assert Counter(m.bracket for m in t.matches()) == {"winners": 31, "losers": 30, "grand_final": 2}
    # the losers' bracket champion wins the first final: the reset makes it 63
    t = Tournament("double_elimination", names)
    best = by_favourites(t)
    play(t, lambda m: result(m, m.teams[1]) if m.id == "GF-1" else best(m))
    assert len(t.results) == 63 and t.champion == "T01" and t.match("GF-2").state == "played"


# ---------------------------------------------------------------- properties over random tournaments

seeds = st.integers(min_value=0, max_value=2**32)


def out_after_two_losses(t):
    """At every step: a team with two losses never plays again, one with fewer is still in."""
    losses = Counter(r.loser() for r in t.results)
    ahead = {x for m in t.matches() if m.state in ("ready", "waiting") for x in m.teams if x}
    for team in t.names:
        if losses[team] >= 2:
            assert losses[team] == 2 and team not in ahead
        elif not t.finished:
            assert team in ahead or t.next_match(team) is not None
    busy = [x for m in t.ready() for x in m.teams]
    assert len(busy) == len(set(busy))


@settings(max_examples=700, deadline=None)
@given(n=st.integers(min_value=2, max_value=32), fate=seeds, order=seeds)
def test_a_team_is_out_after_two_losses_and_one_team_ends_with_at_most_one(n, fate, order):
    names = ["T%d" % i for i in range(n)]
    t = play(Tournament("double_elimination", names), fated(fate), check=out_after_two_losses)
    losses = Counter(r.loser() for r in t.results)
    assert [x for x in names if losses[x] <= 1] == [t.champion]
    assert all(losses[x] == 2 for x in names if x != t.champion)
    reset = t.match("GF-2").state == "played"
    assert len(t.results) == (2 * n - 1 if reset else 2 * n - 2)
    assert [s.rank for s in t.standings()][:2] == [1, 2] and t.standings()[0].team == t.champion
    again = play(Tournament("double_elimination", names), fated(fate), order_seed=order)
    assert again.champion == t.champion and again.standings() == t.standings()
