"""Feeding results: refusals with the match id and the reason, corrections, and rebuilding from a journal."""

import json

import pytest
from battlement.errors import UserError
from battlement.venue.formats import (
    AlreadyPlayed,
    BadResult,
    CorrectionRefused,
    NotReady,
    Result,
    ResultRefused,
    SetupError,
    Tournament,
    UnknownMatch,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from support.tournaments import by_favourites, fated, play, result, win

TEAMS = ["Knights", "Orcs", "Elves", "Dwarves"]


def refusal(t, r, kind):
    with pytest.raises(kind) as e:
        t.record(r)
    assert isinstance(e.value, ValueError) and isinstance(e.value, UserError) and e.value.match == r.match
    return str(e.value)


def test_a_result_for_a_match_that_cannot_take_one_is_refused_with_its_id_and_why():
    t = Tournament("double_elimination", TEAMS[:3])
    kw = {"scores": {"Knights": 3, "Orcs": 1}}
    assert refusal(t, Result("W9-1", "Knights", **kw), UnknownMatch) == "W9-1: no such match in this tournament"
    assert refusal(t, Result("W1-1", "Knights", **kw), NotReady) == "W1-1: is a bye: Knights goes on without playing"
    assert refusal(t, Result("W2-1", "Knights", **kw), NotReady) == "W2-1: waiting for the winner of W1-2"
    win(t, "Orcs", "Elves")
    t.record(result(t.match("W2-1"), "Knights"))
    win(t, "Orcs", "Elves")
    win(t, "Knights", "Orcs")
    assert t.finished and t.results[-1].match == "GF-1"
    assert refusal(t, Result("GF-2", "Orcs", **kw), NotReady) == (
        "GF-2: is not needed: Knights won GF-1 from the winners' bracket")


def test_a_round_robin_match_waits_for_the_teams_earlier_rounds():
    t = Tournament("round_robin", TEAMS)
    r = Result("R2-M1", "Knights", {"Knights": 1, "Elves": 0})
    assert t.match("R2-M1").teams == ("Elves", "Knights")
    assert refusal(t, r, NotReady) == "R2-M1: waiting: Elves plays R1-M2 first"


def test_the_same_result_twice_is_a_duplicate_and_another_one_is_not():
    t = Tournament("single_elimination", TEAMS[:2])
    r = win(t, "Knights", "Orcs")
    with pytest.raises(AlreadyPlayed) as e:
        t.record(Result("W1-1", "Knights", dict(r.scores)))  # tiebreaks of 0 left out: the same result
    assert e.value.duplicate and str(e.value) == "W1-1: already has a result (Knights won 3-1)"
    with pytest.raises(AlreadyPlayed) as e:
        t.record(Result("W1-1", "Orcs", {"Knights": 3, "Orcs": 4}))
    assert not e.value.duplicate
    assert t.results == (r,)


@pytest.mark.parametrize("scores, winner, tiebreaks, message", [
    ({"Knights": 3, "Elves": 1}, "Knights", {}, ("scores must name exactly the match's teams, Knights and Orcs; "
                                                "got Elves, Knights")),
    ({"Knights": 3, "Orcs": 1}, "Elves", {}, "the winner 'Elves' is not in the match (Knights against Orcs)"),
    ({"Knights": 3, "Orcs": 1}, "Knights", {"Elves": 2}, "tiebreaks name teams not in the match: Elves"),
    ({"Knights": float("nan"), "Orcs": 1}, "Knights", {}, "Knights's score must be a finite number, not nan"),
    ({"Knights": True, "Orcs": 1}, "Knights", {}, "Knights's score must be a finite number, not True"),
])
def test_a_result_that_does_not_fit_its_match_is_refused(scores, winner, tiebreaks, message):
    t = Tournament("single_elimination", TEAMS[:2])
    with pytest.raises(BadResult) as e:
        t.record(Result("W1-1", winner, scores, tiebreaks))
    assert str(e.value) == "W1-1: " + message and t.results == ()


def test_a_correction_before_the_bracket_moves_on_changes_who_goes_through():
    t = Tournament("single_elimination", TEAMS)
    win(t, "Knights", "Dwarves")
    win(t, "Orcs", "Elves")
    # the correction names the match it changed, so a hub can stop it if a table is already playing it
    assert t.correct(result(t.match("W1-1"), "Dwarves", (2, 3))) == ["W2-1"]
    assert t.match("W2-1").teams == ("Dwarves", "Orcs") and t.results[-1].correction


def test_a_correction_the_bracket_has_moved_past_is_refused_unless_the_winner_stays():
    t = Tournament("single_elimination", TEAMS)
    win(t, "Knights", "Dwarves")
    win(t, "Orcs", "Elves")
    win(t, "Knights", "Orcs")
    with pytest.raises(CorrectionRefused) as e:
        t.correct(result(t.match("W1-1"), "Dwarves"))
    assert str(e.value) == ("W1-1: the tournament has moved past it: W2-1 (Knights won 3-1) was played since "
                            "and would no longer be the same match")
    t.correct(result(t.match("W1-1"), "Knights", (5, 0)))  # the same winner, a new score: nothing moves
    assert t.match("W1-1").result.scores == {"Knights": 5, "Dwarves": 0}
    assert next(s.points_for for s in t.standings()) == 5 + 3
    with pytest.raises(CorrectionRefused, match="^W2-1: has no result to correct"):
        Tournament("single_elimination", TEAMS).correct(Result("W2-1", "Knights", {"Knights": 1, "Orcs": 0}))


def test_the_first_final_corrected_calls_off_the_reset_unless_it_is_played():
    t = Tournament("double_elimination", TEAMS[:2])
    win(t, "Knights", "Orcs")
    win(t, "Orcs", "Knights")
    assert t.correct(result(t.match("GF-1"), "Knights")) == ["GF-2"]
    assert t.finished and t.champion == "Knights" and t.match("GF-2").state == "void"
    # back again: GF-2 is ready once more, a match to queue rather than one to stop
    assert t.correct(result(t.match("GF-1"), "Orcs")) == [] and t.match("GF-2").state == "ready"
    win(t, "Orcs", "Knights")
    with pytest.raises(CorrectionRefused, match="GF-2 .* was played since"):
        t.correct(result(t.match("GF-1"), "Knights"))


def test_a_round_robin_result_is_corrected_while_the_bracket_it_seeds_keeps_its_seeds():
    t = Tournament("single_elimination", TEAMS, {"seeding": "round_robin"})
    play(t, by_favourites(t))
    assert t.seeds == tuple(TEAMS)
    t.correct(result(t.match("R1-M1"), "Knights", (9, 0)))  # a bigger win for the top seed: same seeds
    with pytest.raises(CorrectionRefused, match="^R1-M1: the tournament has moved past it: W1-1"):
        t.correct(result(t.match("R1-M1"), "Dwarves", (9, 0)))


def test_a_round_robin_correction_changes_the_standings():
    t = Tournament("round_robin", TEAMS[:2])
    win(t, "Knights", "Orcs")
    t.record(Result("R1-M1", "Orcs", {"Knights": 0, "Orcs": 2}, correction=True))
    assert t.champion == "Orcs" and [r.correction for r in t.results] == [False, True]


@pytest.mark.parametrize("args, message", [
    (("knockout", TEAMS), ("unknown format 'knockout': the formats are round_robin, single_elimination, "
                          "double_elimination")),
    (("round_robin", ["Knights"]), "a tournament needs at least 2 teams, not 1"),
    (("round_robin", ["Knights", "Knights"]), "teams named twice: Knights"),
    (("round_robin", ["Knights", " "]), "a team needs a name of non-empty text, not ' '"),
    (("single_elimination", ["T%d" % i for i in range(33)]),
     "a bracket holds at most 32 teams, not 33: seed it from a round robin with advance"),
    (("round_robin", TEAMS, {"rounds": 0}), "option rounds must be a whole number from 1 up, not 0"),
    (("round_robin", TEAMS, {"seeding": "random"}), "round_robin has no option seeding (its options: rounds)"),
    (("double_elimination", TEAMS, {"seeding": "best"}), ("unknown seeding 'best': the seedings are order, random, "
                                                         "round_robin")),
    (("double_elimination", TEAMS, {"seeding": "round_robin", "advance": 5}),
     "option advance must be a whole number from 2 to 4, not 5"),
    (("double_elimination", TEAMS, {"advance": 2}), "options rounds and advance are for seeding round_robin only"),
    (("round_robin", TEAMS, {}, "7"), "the seed must be a whole number, not '7'"),
])
def test_a_setup_that_cannot_make_a_tournament_says_why(args, message):
    with pytest.raises(SetupError) as e:
        Tournament(*args)
    assert str(e.value) == message and isinstance(e.value, ValueError)


def test_forty_teams_fill_a_bracket_of_thirty_two_from_a_round_robin():
    names = ["T%d" % i for i in range(40)]
    t = play(Tournament("single_elimination", names, {"seeding": "round_robin", "advance": 32}), fated(1))
    assert len(t.seeds) == 32 and t.finished and sum(s.out for s in t.standings()) == 39


# ---------------------------------------------------------------- the journal: setup and results, replayed

formats = st.sampled_from([("round_robin", {"rounds": 2}), ("single_elimination", {"seeding": "random"}),
                           ("double_elimination", {}), ("double_elimination", {"seeding": "round_robin"})])


@settings(max_examples=250, deadline=None)
@given(fmt=formats, n=st.integers(min_value=2, max_value=12), fate=st.integers(0, 2**32),
       stop=st.floats(0, 1), corrections=st.lists(st.integers(0, 1000), max_size=4))
def test_a_tournament_rebuilt_from_its_journal_is_the_same(fmt, n, fate, stop, corrections):
    """What a hub does after a crash: the setup and the accepted results, through JSON, in order."""
    t = Tournament(fmt[0], ["T%d" % i for i in range(n)], fmt[1], seed=fate)
    decide = fated(fate)
    while t.ready() and len(t.results) < stop * 4 * n * n:
        t.record(decide(t.ready()[-1]))
        for c in corrections:  # now and then the host corrects a played match, when the bracket lets it
            done = [m for m in t.matches() if m.result]
            if done and c % 7 == len(t.results) % 7:
                m = done[c % len(done)]
                try:
                    t.correct(result(m, m.teams[c % 2], (c % 5, c % 3)))
                except CorrectionRefused:
                    pass
    journal = json.loads(json.dumps({"setup": t.setup(), "results": [r.to_dict() for r in t.results]}))
    again = Tournament.replay(journal["setup"], journal["results"])
    assert again.results == t.results and again.matches() == t.matches()
    assert again.standings() == t.standings() and again.champion == t.champion and again.seeds == t.seeds
    for r in t.results:
        if not r.correction:  # every result fed again is refused: none is counted twice
            with pytest.raises(ResultRefused):
                again.record(r)
