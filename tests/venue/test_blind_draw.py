"""Blind draw: players drawn into teams by the seed, one from each skill pool, then played as any format."""

import pytest
from battlement.venue.formats import FORMATS, SetupError, Team, Tournament, blind_draw
from hypothesis import given, settings
from hypothesis import strategies as st
from support.tournaments import fated, play

STRONG = ["Ann", "Bo", "Cy", "Di"]
WEAK = ["Ed", "Flo", "Gus", "Hal"]


def test_each_team_gets_one_player_from_each_pool():
    teams = blind_draw([STRONG, WEAK], seed=3)
    assert len(teams) == 4
    assert sorted(t.players[0] for t in teams) == STRONG and sorted(t.players[1] for t in teams) == WEAK
    assert all(t.name == " & ".join(t.players) for t in teams)


def test_the_same_seed_draws_the_same_teams_and_other_seeds_draw_others():
    assert blind_draw([STRONG, WEAK], seed=3) == blind_draw([STRONG, WEAK], seed=3)
    draws = {tuple(t.players for t in blind_draw([STRONG, WEAK], seed=s)) for s in range(10)}
    assert len(draws) > 1


def test_one_pool_is_drawn_into_teams_of_the_size_asked():
    teams = blind_draw([STRONG + WEAK], seed=1, team_size=4, names=["Knights", "Orcs"])
    assert [t.name for t in teams] == ["Knights", "Orcs"] and all(len(t.players) == 4 for t in teams)
    assert sorted(p for t in teams for p in t.players) == sorted(STRONG + WEAK)


@pytest.mark.parametrize("pools, kw, message", [
    ([STRONG, WEAK[:3]], {}, ("the pools differ in size (pool 1: 4, pool 2: 3): each team takes one player "
                             "from each pool")),
    ([STRONG[:3]], {}, "3 players do not split into teams of 2: add 1 or remove 1"),
    ([STRONG, ["Ann", "Ed", "Flo", "Gus"]], {}, "players named twice in the draw: Ann"),
    ([["Ann"], ["Bo"]], {}, "a blind draw of 2 players makes 1 team; a tournament needs at least 2"),
    ([STRONG, WEAK], {"team_size": 3}, "with 2 pools each team has 2 players (one a pool), not team_size 3"),
    ([STRONG, WEAK], {"names": ["Knights"]}, "1 team names for 4 teams"),
    (["Ann", "Bo"], {}, "a blind draw needs a list of pools, each a list of player names"),
])
def test_a_draw_that_cannot_be_made_says_why(pools, kw, message):
    with pytest.raises(SetupError) as e:
        blind_draw(pools, seed=0, **kw)
    assert str(e.value) == message


@pytest.mark.parametrize("fmt", FORMATS)
def test_drawn_teams_play_any_format_and_the_setup_keeps_who_is_in_which(fmt):
    teams = blind_draw([STRONG, WEAK], seed=5)
    opts = {} if fmt == "round_robin" else {"seeding": "random"}
    t = play(Tournament(fmt, teams, opts, seed=5), fated(5))
    assert t.finished and t.champion in {x.name for x in teams}
    again = Tournament.from_setup(t.setup())
    assert again.teams == tuple(teams) and again.seeds == t.seeds
    assert again.setup()["teams"][0] == {"name": teams[0].name, "players": list(teams[0].players)}


@settings(max_examples=300, deadline=None)
@given(pools=st.integers(min_value=1, max_value=4), per_pool=st.integers(min_value=2, max_value=16),
       seed=st.integers(min_value=0, max_value=2**32))
def test_every_player_is_in_exactly_one_team_with_one_from_each_pool(pools, per_pool, seed):
    players = [["P%d-%d" % (p, i) for i in range(per_pool)] for p in range(pools)]
    teams = blind_draw(players, seed, team_size=None if pools > 1 else 1)
    assert sorted(x for t in teams for x in t.players) == sorted(x for pool in players for x in pool)
    if pools > 1:
        assert all([x.split("-")[0] for x in t.players] == ["P%d" % p for p in range(pools)] for t in teams)
    assert blind_draw(players, seed, team_size=None if pools > 1 else 1) == teams
    assert all(isinstance(t, Team) for t in teams)
