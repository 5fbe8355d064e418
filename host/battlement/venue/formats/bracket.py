"""Single and double elimination brackets: their shape, and who plays where given the results so far.

A bracket is a list of nodes in an order where every node comes after the nodes it takes teams from.
A node's two slots each name a source: a seed, or the winner or loser of an earlier node. A bracket
is sized to the next power of two; the seeds past the team count are empty slots, placed against the
top seeds, so the top seeds get the byes. An empty slot is passed on as "nobody": a node with one team
is a bye (the team goes on unplayed), a node with none is void, and a void node's winner and loser are
nobody too, which is how the byes ripple into the losers' bracket.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from battlement.venue.formats.model import Result

Source = tuple[str, int | str]  # ("seed", 0-based seed), ("winner", node id) or ("loser", node id)
NOBODY = ""  # an empty slot (no team name is empty); None is "not known yet"
MAX_TEAMS = 32


@dataclass(frozen=True)
class Node:
    id: str
    bracket: str
    round: int
    sources: tuple[Source, Source]
    reset: bool = False  # the grand final's second game: played only if the losers' side won the first


class Slots(NamedTuple):  # a tuple, not a frozen dataclass: made for every node after every result
    teams: tuple[str | None, str | None]
    state: str
    winner: str | None
    loser: str | None


def size_for(n: int) -> int:
    size = 2
    while size < n:
        size *= 2
    return size


def seed_order(size: int) -> list[int]:
    """0-based seeds in bracket position order: 1 v 8, 4 v 5, 2 v 7, 3 v 6 for 8. Seeds s and size-1-s
    meet first, and the two top seeds can only meet in the final."""
    order = [0]
    while len(order) < size:
        m = 2 * len(order)
        order = [x for s in order for x in (s, m - 1 - s)]
    return order


def _winners(size: int) -> list[list[Node]]:
    order = seed_order(size)
    rounds = [[Node("W1-%d" % (i + 1), "winners", 1, (("seed", order[2 * i]), ("seed", order[2 * i + 1])))
               for i in range(size // 2)]]
    while len(rounds[-1]) > 1:
        prev, r = rounds[-1], len(rounds) + 1
        rounds.append([Node("W%d-%d" % (r, i + 1), "winners", r,
                            (("winner", prev[2 * i].id), ("winner", prev[2 * i + 1].id)))
                       for i in range(len(prev) // 2)])
    return rounds


def single(n: int) -> list[Node]:
    return [node for rnd in _winners(size_for(n)) for node in rnd]


def double(n: int) -> list[Node]:
    """Winners' rounds W1..Wk; losers' rounds L1..L(2k-2); then GF-1 and, if needed, GF-2.

    L1 pairs the losers of W1. Each even losers' round sets the survivors against the losers dropping
    from the next winners' round, in reversed order every other time so that two teams who just met
    are not paired again at once; each odd round after L1 halves the survivors.
    """
    wins = _winners(size_for(n))
    nodes = list(wins[0])
    losers: list[Node] = []
    for j in range(1, len(wins)):
        nodes += wins[j]
        if j == 1:
            w1 = wins[0]
            rnd = [Node("L1-%d" % (i + 1), "losers", 1, (("loser", w1[2 * i].id), ("loser", w1[2 * i + 1].id)))
                   for i in range(len(w1) // 2)]
        else:
            r = 2 * j - 1
            rnd = [Node("L%d-%d" % (r, i + 1), "losers", r,
                        (("winner", losers[2 * i].id), ("winner", losers[2 * i + 1].id)))
                   for i in range(len(losers) // 2)]
        nodes += rnd
        drop = wins[j] if j % 2 == 0 else wins[j][::-1]
        r = 2 * j
        losers = [Node("L%d-%d" % (r, i + 1), "losers", r, (("winner", rnd[i].id), ("loser", drop[i].id)))
                  for i in range(len(rnd))]
        nodes += losers
    champ = wins[-1][0].id
    # with two teams there is no losers' round: the loser of the only winners' match is its champion
    other: Source = ("winner", losers[0].id) if losers else ("loser", champ)
    sources: tuple[Source, Source] = (("winner", champ), other)
    return nodes + [Node("GF-1", "grand_final", 1, sources), Node("GF-2", "grand_final", 2, sources, reset=True)]


def resolve(nodes: Sequence[Node], n: int, seeds: Sequence[str] | None,
            results: Mapping[str, Result]) -> dict[str, Slots]:
    """Each node's teams and state from the seeds (None: not known yet) and the results."""
    out: dict[str, Slots] = {}

    def value(src: Source) -> str | None:
        kind, ref = src
        if kind == "seed":
            assert isinstance(ref, int)
            return NOBODY if ref >= n else (None if seeds is None else seeds[ref])
        s = out[str(ref)]
        return s.winner if kind == "winner" else s.loser

    for node in nodes:
        a, b = value(node.sources[0]), value(node.sources[1])
        teams = (a, b)
        if node.reset:
            first = out["GF-1"]
            if first.winner is None:
                out[node.id] = Slots(teams, "waiting", None, None)
                continue
            if first.winner == a:  # the winners' side won GF-1: it has no loss, the other has two
                out[node.id] = Slots(teams, "void", NOBODY, NOBODY)
                continue
        if a is None or b is None:
            out[node.id] = Slots(teams, "waiting", None, None)
        elif a == NOBODY and b == NOBODY:
            out[node.id] = Slots(teams, "void", NOBODY, NOBODY)
        elif NOBODY in teams:
            out[node.id] = Slots(teams, "bye", a or b, NOBODY)
        elif node.id in results and results[node.id].winner in teams:
            w = results[node.id].winner
            out[node.id] = Slots(teams, "played", w, b if w == a else a)
        else:
            out[node.id] = Slots(teams, "ready", None, None)
    return out


def champion(nodes: Sequence[Node], slots: Mapping[str, Slots]) -> str | None:
    last = nodes[-1]
    if not last.reset:
        return slots[last.id].winner
    first = slots["GF-1"]
    if first.winner is None:
        return None
    return first.winner if first.winner == first.teams[0] else slots[last.id].winner


def describe(src: Source) -> str:
    kind, ref = src
    return "seed %d" % (int(ref) + 1) if kind == "seed" else "%s of %s" % (kind, ref)


def lives(nodes: Sequence[Node]) -> int:
    """How many losses put a team out."""
    return 2 if nodes[-1].reset else 1
