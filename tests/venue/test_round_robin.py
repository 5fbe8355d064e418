"""Round robin: the circle method's schedule, byes for odd counts, and the ranking with its tiebreaks."""

import itertools
from collections import Counter

from battlement.venue.formats import Tournament
from hypothesis import given, settings
from hypothesis import strategies as st
from support.tournaments import by_favourites, fated, play, result, win

TEAMS = ["Knights", "Orcs", "Elves", "Dwarves", "Trolls", "Goblins", "Wizards", "Giants"]


def winners_by_pair(wins):
    """Every match won 1-0 by the team named first in its pair."""
    winner = {frozenset(p): p[0] for p in wins}
    return lambda m: result(m, winner[frozenset(m.teams)], (1, 0))


def pairs(t):
    return [(m.round, m.teams) for m in t.matches()]


def test_two_teams_meet_once_a_round_and_swap_sides_each_time():
    t = Tournament("round_robin", ["Knights", "Orcs"], {"rounds": 3})
    assert [(m.id, m.teams) for m in t.matches()] == [
        ("R1-M1", ("Knights", "Orcs")), ("R2-M1", ("Orcs", "Knights")), ("R3-M1", ("Knights", "Orcs"))]
    assert [m.id for m in t.ready()] == ["R1-M1"]  # a team plays its rounds in order


def test_three_teams_each_sit_out_one_round():
    t = Tournament("round_robin", TEAMS[:3])
    assert pairs(t) == [(1, ("Orcs", "Elves")), (2, ("Elves", "Knights")), (3, ("Knights", "Orcs"))]
    assert t.next_match("Knights").id == "R2-M1"  # Knights have the bye in round 1


def test_five_teams_play_five_rounds_of_two_matches_with_one_bye_each():
    t = Tournament("round_robin", TEAMS[:5])
    assert [m.id for m in t.matches()][:4] == ["R1-M1", "R1-M2", "R2-M1", "R2-M2"]
    assert Counter(m.round for m in t.matches()) == {r: 2 for r in range(1, 6)}
    sitting = [set(TEAMS[:5]) - {x for m in t.matches() if m.round == r for x in m.teams} for r in range(1, 6)]
    assert sorted(x for s in sitting for x in s) == sorted(TEAMS[:5])
    play(t, by_favourites(t))
    assert [(s.team, s.wins, s.losses) for s in t.standings()] == [
        ("Knights", 4, 0), ("Orcs", 3, 1), ("Elves", 2, 2), ("Dwarves", 1, 3), ("Trolls", 0, 4)]
    assert t.champion == "Knights" and t.finished


def test_eight_teams_turn_round_the_first_one():
    t = Tournament("round_robin", TEAMS)
    by_round = [[m.teams for m in t.matches() if m.round == r] for r in (1, 2)]
    assert by_round == [
        [("Knights", "Giants"), ("Orcs", "Wizards"), ("Elves", "Goblins"), ("Dwarves", "Trolls")],
        [("Wizards", "Knights"), ("Orcs", "Trolls"), ("Elves", "Dwarves"), ("Giants", "Goblins")]]
    assert len(t.matches()) == 28 and max(m.round for m in t.matches()) == 7


def test_thirty_two_teams_play_thirty_one_rounds():
    t = Tournament("round_robin", ["T%02d" % (i + 1) for i in range(32)])
    play(t, by_favourites(t))
    assert len(t.results) == 496 and max(m.round for m in t.matches()) == 31
    assert [s.wins for s in t.standings()] == list(range(31, -1, -1)) and t.champion == "T01"


def test_a_team_plays_its_rounds_in_order_and_is_never_ready_twice():
    t = Tournament("round_robin", TEAMS[:4])
    assert [m.teams for m in t.ready()] == [("Knights", "Dwarves"), ("Orcs", "Elves")]
    win(t, "Knights", "Dwarves")
    # Knights' round 2 match waits for its opponent's round 1 match
    assert [m.teams for m in t.ready()] == [("Orcs", "Elves")]
    assert t.match(t.next_match("Knights").id).state == "waiting"


def test_wins_rank_first_then_the_games_tiebreak_then_point_difference():
    t = Tournament("round_robin", ["Knights", "Orcs", "Elves"])
    # each wins one: the circle leaves the tiebreak (towers left) to decide, then the point difference
    win(t, "Elves", "Orcs", (5, 0), (1, 0))
    win(t, "Knights", "Elves", (2, 1), (3, 0))
    win(t, "Orcs", "Knights", (2, 1), (1, 0))
    assert [(s.rank, s.team, s.wins, s.tiebreak, s.diff) for s in t.standings()] == [
        (1, "Knights", 1, 3, 0), (2, "Elves", 1, 1, 4), (3, "Orcs", 1, 1, -4)]


def test_teams_level_on_everything_are_split_by_their_own_match_then_by_seed():
    t = Tournament("round_robin", ["Knights", "Orcs", "Elves", "Dwarves"])
    play(t, winners_by_pair([("Orcs", "Knights"), ("Knights", "Elves"), ("Knights", "Dwarves"),
                             ("Orcs", "Dwarves"), ("Elves", "Orcs"), ("Dwarves", "Elves")]))
    # Knights and Orcs 2-1, Elves and Dwarves 1-2, all at +1 / -1: Orcs beat Knights, Dwarves beat Elves
    assert [s.team for s in t.standings()] == ["Orcs", "Knights", "Dwarves", "Elves"]


def test_three_teams_who_beat_each_other_in_a_circle_fall_back_to_seed():
    t = Tournament("round_robin", ["Knights", "Orcs", "Elves", "Dwarves"])
    play(t, winners_by_pair([("Orcs", "Knights"), ("Knights", "Elves"), ("Knights", "Dwarves"),
                             ("Orcs", "Dwarves"), ("Elves", "Orcs"), ("Elves", "Dwarves")]))
    assert [(s.team, s.wins) for s in t.standings()] == [("Knights", 2), ("Orcs", 2), ("Elves", 2), ("Dwarves", 0)]


def test_standings_before_any_result_are_the_seeds():
    t = Tournament("round_robin", TEAMS[:4], {"rounds": 2})
    assert [(s.rank, s.team, s.played) for s in t.standings()] == [(i + 1, x, 0) for i, x in enumerate(TEAMS[:4])]
    assert t.champion is None and not t.finished


# ---------------------------------------------------------------- properties over random tournaments

sizes = st.integers(min_value=2, max_value=12)
legs = st.integers(min_value=1, max_value=3)
seeds = st.integers(min_value=0, max_value=2**32)


@settings(max_examples=300, deadline=None)
@given(n=sizes, rounds=legs)
def test_every_pair_meets_once_a_pass_and_no_team_twice_a_round(n, rounds):
    t = Tournament("round_robin", ["T%d" % i for i in range(n)], {"rounds": rounds})
    per_pass = n - 1 + n % 2
    for p in range(rounds):
        met = [frozenset(m.teams) for m in t.matches() if p * per_pass < m.round <= (p + 1) * per_pass]
        # a pass holds every pair exactly once: no pair meets again while another pairing is left
        assert sorted(met, key=sorted) == sorted(map(frozenset, itertools.combinations(t.names, 2)), key=sorted)
    for r in range(1, rounds * per_pass + 1):
        playing = [x for m in t.matches() if m.round == r for x in m.teams]
        assert len(playing) == len(set(playing)) == n - n % 2  # odd: exactly one sits out


@settings(max_examples=400, deadline=None)
@given(n=sizes, rounds=legs, fate=seeds, order=seeds)
def test_every_team_plays_rounds_times_n_minus_one_and_the_order_does_not_change_the_standings(n, rounds, fate, order):
    names = ["T%d" % i for i in range(n)]

    def never_ready_twice(t):
        busy = [x for m in t.ready() for x in m.teams]
        assert len(busy) == len(set(busy))

    first = play(Tournament("round_robin", names, {"rounds": rounds}), fated(fate), check=never_ready_twice)
    other = play(Tournament("round_robin", names, {"rounds": rounds}), fated(fate), order_seed=order)
    assert [s.played for s in first.standings()] == [rounds * (n - 1)] * n
    assert sum(s.wins for s in first.standings()) == len(first.matches()) == rounds * n * (n - 1) // 2
    assert other.standings() == first.standings() and other.champion == first.champion == first.standings()[0].team
