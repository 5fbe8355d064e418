"""Playing tournaments out in tests: results made from a rule, fed in an order chosen by a seed."""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable

from battlement.venue.formats import Match, Result, Tournament


def result(m: Match, winner: str, scores: tuple[float, float] = (3, 1),
           tiebreaks: tuple[float, float] = (0, 0)) -> Result:
    """The result of m won by winner: scores and tiebreaks are (winner's, loser's)."""
    loser = m.teams[1] if winner == m.teams[0] else m.teams[0]
    assert winner in m.teams and loser is not None, (m, winner)
    return Result(m.id, winner, {winner: scores[0], loser: scores[1]}, {winner: tiebreaks[0], loser: tiebreaks[1]})


def between(t: Tournament, a: str, b: str) -> Match:
    """The ready match of a against b."""
    found = [m for m in t.ready() if set(m.teams) == {a, b}]
    assert len(found) == 1, "no ready match of %s against %s: %s" % (a, b, t.ready())
    return found[0]


def win(t: Tournament, winner: str, loser: str, scores: tuple[float, float] = (3, 1),
        tiebreaks: tuple[float, float] = (0, 0)) -> Result:
    r = result(between(t, winner, loser), winner, scores, tiebreaks)
    t.record(r)
    return r


def favourites(t: Tournament) -> Callable[[Match], str]:
    """The better seed always wins (the team given first for a round robin)."""
    return lambda m: min(m.teams, key=lambda x: t.names.index(str(x)))  # type: ignore[return-value]


def fated(seed: int) -> Callable[[Match], Result]:
    """A result fixed by the match and its teams alone, whatever the order matches are played in:
    the same two teams in the same match always give the same winner, scores and tiebreaks."""
    def decide(m: Match) -> Result:
        a, b = sorted(str(x) for x in m.teams)
        rng = random.Random(zlib.crc32(("%d|%s|%s|%s" % (seed, m.id, a, b)).encode()))
        w, other = (a, b) if rng.random() < 0.5 else (b, a)
        lose_score = rng.randrange(0, 5)
        return Result(m.id, w, {w: lose_score + rng.randrange(0, 4), other: lose_score},
                      {w: rng.randrange(0, 3), other: rng.randrange(0, 3)})
    return decide


def play(t: Tournament, decide: Callable[[Match], Result], order_seed: int | None = None,
         check: Callable[[Tournament], None] | None = None) -> Tournament:
    """Play t to its end: each time the first ready match, or (order_seed) one picked at random.
    check(t) runs before each result, to hold a property at every step."""
    pick = random.Random(order_seed)
    while True:
        if check:
            check(t)
        ready = t.ready()
        if not ready:
            return t
        t.record(decide(ready[0] if order_seed is None else pick.choice(ready)))


def by_favourites(t: Tournament) -> Callable[[Match], Result]:
    best = favourites(t)
    return lambda m: result(m, best(m))
