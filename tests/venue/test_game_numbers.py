"""What each game counts for a venue (TableAdapter.result): a number for every side, from the public view
alone, that a result message carries; and numbers that agree with how the game ended."""

import pytest
from battlement.table.adapter import adapter_for
from battlement.table.views import sides_of
from battlement.venue import protocol

import shared_rules
from shared_rules.engine import Match, max_steps, playout


def finished(game, seed, options=None):
    mod = shared_rules.load(game)
    m, _steps, over = playout(mod, options or {}, seed, max_steps(mod))
    if not over:
        return None
    done = Match(mod, m.options, seed)
    done.state = m.state
    return done


@pytest.mark.parametrize("game", sorted(shared_rules.GAMES))
def test_every_game_counts_each_side_in_numbers_a_result_can_carry(game):
    mod = shared_rules.load(game)
    checked = 0
    for seed in range(12):
        m = finished(game, seed)
        if m is None:
            continue
        numbers = adapter_for(mod).result(m.view(None), m.options)
        sides = sides_of(m)
        assert sorted(numbers["score"]) == sorted(numbers["tiebreak"]) == sorted(numbers["facts"]) == sides
        named = {s: {"team": "Team %s" % s} for s in sides}
        msg = protocol.result("M1", "t-1", game, 1, named, m.state["winner"], numbers, "over")
        assert protocol.check(msg, "t-1") is None
        checked += 1
    assert checked >= 3


def test_the_numbers_agree_with_how_each_game_ended():
    for seed in range(20):
        m = finished("ringo", seed)
        if m is not None:
            r = adapter_for(m.game).result(m.view(None), m.options)
            lost = {"attackers": m.options["attackers"], "defenders": 4}
            assert r["score"]["attackers"] == lost["defenders"] - r["tiebreak"]["defenders"]
            assert r["score"]["defenders"] == lost["attackers"] - r["tiebreak"]["attackers"]
        m = finished("medieval-pong", seed)
        if m is not None:
            r = adapter_for(m.game).result(m.view(None), m.options)
            winner = m.state["winner"]
            assert r["facts"][winner]["crowns captured"] == m.state["target"]
        m = finished("medieval-madness", seed)
        if m is not None:
            r = adapter_for(m.game).result(m.view(None), m.options)
            assert r["score"] == {p["id"]: p["gold"] for p in m.state["players"]}
