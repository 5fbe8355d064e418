"""Round robin: the circle method's schedule, and the ranking by wins, tiebreak, difference, head-to-head.

Teams are numbered by seed (0 is the first team given). Pure: the same teams give the same schedule.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from battlement.venue.formats.model import Result


@dataclass(frozen=True)
class Pairing:
    id: str
    round: int
    a: int
    b: int


def schedule(n: int, rounds: int) -> list[Pairing]:
    """Every pair meets `rounds` times; within one pass of n-1 rounds (n for odd n) every pair meets once.

    The circle method: the first team stays put and the others turn one place a round; an odd count
    gets a phantom team, and whoever meets it has the bye. Each later pass swaps every pair's sides so
    that a pair meeting twice plays once from each side.
    """
    m = n + n % 2
    ring = list(range(m))
    one_pass: list[list[tuple[int, int]]] = []
    for r in range(m - 1):
        pairs = []
        for i in range(m // 2):
            a, b = ring[i], ring[m - 1 - i]
            if i == 0 and r % 2:  # the fixed team would otherwise always have the first side
                a, b = b, a
            pairs.append((a, b))
        one_pass.append(pairs)
        ring = [ring[0], ring[-1]] + ring[1:-1]
    out = []
    for p in range(rounds):
        for r, pairs in enumerate(one_pass):
            number = p * (m - 1) + r + 1
            real = [(b, a) if p % 2 else (a, b) for a, b in pairs if a < n and b < n]
            # the top seed's match first, so a round reads down the seeds
            real.sort(key=lambda ab: min(ab))
            out += [Pairing("R%d-M%d" % (number, k + 1), number, a, b) for k, (a, b) in enumerate(real)]
    return out


def rounds_in_pass(n: int) -> int:
    return n - 1 + n % 2


@dataclass
class Record:
    played: int = 0
    wins: int = 0
    losses: int = 0
    tiebreak: float = 0.0
    points_for: float = 0.0
    points_against: float = 0.0


def records(names: Sequence[str], results: Iterable[Result]) -> dict[str, Record]:
    """Each team's record over the results. Sums use fsum, which is exact before it rounds, so the
    same results give the same totals in any order (a plain float sum depends on the order)."""
    parts: dict[str, dict[str, list[float]]] = {t: {"tb": [], "for": [], "against": []} for t in names}
    recs = {t: Record() for t in names}
    for res in results:
        for team in res.scores:
            other = next(t for t in res.scores if t != team)
            rec = recs[team]
            rec.played += 1
            if team == res.winner:
                rec.wins += 1
            else:
                rec.losses += 1
            parts[team]["tb"].append(res.tiebreaks.get(team, 0))
            parts[team]["for"].append(res.scores[team])
            parts[team]["against"].append(res.scores[other])
    for t, rec in recs.items():
        rec.tiebreak = math.fsum(parts[t]["tb"])
        rec.points_for = math.fsum(parts[t]["for"])
        rec.points_against = math.fsum(parts[t]["against"])
    return recs


def ranking(names: Sequence[str], results: Sequence[Result]) -> list[str]:
    """The teams best first: wins, then the game's tiebreak total, then point difference (all higher
    better); teams still level are split by their wins against each other, then by seed.

    Head-to-head is counted inside each level group as a small league of its own, so three teams that
    beat each other in a circle fall back to seed instead of to an order that depends on who is compared.
    """
    recs = records(names, results)
    seed = {t: i for i, t in enumerate(names)}

    def key(t: str) -> tuple[float, float, float]:
        r = recs[t]
        return (-r.wins, -r.tiebreak, -(r.points_for - r.points_against))

    out: list[str] = []
    groups: dict[tuple[float, float, float], list[str]] = {}
    for t in names:
        groups.setdefault(key(t), []).append(t)
    for k in sorted(groups):
        group = groups[k]
        if len(group) > 1:
            inside = set(group)
            h2h = {t: 0 for t in group}
            for res in results:
                if set(res.scores) <= inside:
                    h2h[res.winner] += 1
            group = sorted(group, key=lambda t: (-h2h[t], seed[t]))
        out += group
    return out
