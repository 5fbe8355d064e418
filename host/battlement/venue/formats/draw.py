"""Seeded shuffles, and the blind draw: players drawn into teams, one from each skill pool.

The shuffles use shared_rules' generator, not Python's random: its numbers are fixed by its own code,
so a tournament journalled today rebuilds the same draw and seeding under any later Python.
"""

from __future__ import annotations

from collections.abc import Sequence

from battlement.venue.formats.model import SetupError, Team
from shared_rules import engine

# Each use of the seed gets its own stream, so the draw and the seeding are not the same shuffle.
SEEDING = 1
POOL = 1000


def shuffled(items: Sequence[str], seed: int, stream: int) -> list[str]:
    return engine.shuffle({"rng": engine.seed_rng(seed + stream)}, list(items))


def blind_draw(pools: Sequence[Sequence[str]], seed: int, team_size: int | None = None,
               names: Sequence[str] | None = None) -> list[Team]:
    """Teams drawn at random (by the seed) from the players.

    With several pools (by skill, best first), every team gets one player from each pool, so the
    pools must be the same size. With one pool, the players are drawn into teams of team_size.
    Teams are named by their players ("Ann & Bo") unless names are given, one a team in draw order.
    """
    if not pools or any(isinstance(p, str) for p in pools):
        raise SetupError("a blind draw needs a list of pools, each a list of player names")
    players = [p for pool in pools for p in pool]
    bad = [p for p in players if not isinstance(p, str) or not p.strip()]
    if bad:
        raise SetupError("player names must be non-empty text, not %r" % (bad[0],))
    twice = sorted({p for p in players if players.count(p) > 1})
    if twice:
        raise SetupError("players named twice in the draw: %s" % ", ".join(twice))
    if len(pools) == 1:
        size = 2 if team_size is None else team_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise SetupError("team_size must be a whole number of players, at least 1, not %r" % (size,))
        if len(players) % size:
            raise SetupError("%d players do not split into teams of %d: add %d or remove %d" % (
                len(players), size, size - len(players) % size, len(players) % size))
        drawn = shuffled(players, seed, POOL)
        teams = [tuple(drawn[i:i + size]) for i in range(0, len(drawn), size)]
    else:
        if team_size is not None and team_size != len(pools):
            raise SetupError("with %d pools each team has %d players (one a pool), not team_size %d" % (
                len(pools), len(pools), team_size))
        sizes = [len(p) for p in pools]
        if len(set(sizes)) > 1:
            raise SetupError("the pools differ in size (%s): each team takes one player from each pool" % (
                ", ".join("pool %d: %d" % (i + 1, s) for i, s in enumerate(sizes))))
        columns = [shuffled(pool, seed, POOL + i) for i, pool in enumerate(pools)]
        teams = list(zip(*columns, strict=True))
    if len(teams) < 2:
        raise SetupError("a blind draw of %d players makes %d team; a tournament needs at least 2" % (
            len(players), len(teams)))
    if names is not None and len(names) != len(teams):
        raise SetupError("%d team names for %d teams" % (len(names), len(teams)))
    return [Team(names[i] if names is not None else " & ".join(t), tuple(t)) for i, t in enumerate(teams)]
