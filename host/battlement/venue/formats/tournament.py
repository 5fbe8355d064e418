"""Tournament: one format's whole state, a pure function of its setup and the results in order.

Like a chess board fed moves: built from (format, teams, options, seed), fed results, and asked which
matches are ready, the standings, and the champion. No I/O, no clock; the seed is the only chance.
A hub journals setup() and every accepted result (results), and replay() rebuilds the same tournament.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from battlement.venue.formats import bracket, draw, roundrobin
from battlement.venue.formats.model import (
    AlreadyPlayed,
    BadResult,
    CorrectionRefused,
    Match,
    NotReady,
    Result,
    SetupError,
    Standing,
    Team,
    UnknownMatch,
    VenueError,
)

FORMATS = ("round_robin", "single_elimination", "double_elimination")
# How a bracket is seeded: the teams in the order given, shuffled by the seed, or a round robin first.
SEEDINGS = ("order", "random", "round_robin")


@dataclass
class _State:
    matches: dict[str, Match]  # in playing order: the round robin, then the bracket
    seeds: tuple[str, ...] | None
    champion: str | None


def _team(t: Any) -> Team:
    if isinstance(t, Team):
        team = t
    elif isinstance(t, str):
        team = Team(t)
    elif isinstance(t, Mapping) and set(t) <= {"name", "players"}:
        team = Team(t.get("name", ""), tuple(t.get("players", ())))
    else:
        raise SetupError("a team is a name, or {name, players}, not %r" % (t,))
    if not isinstance(team.name, str) or not team.name.strip():
        raise SetupError("a team needs a name of non-empty text, not %r" % (team.name,))
    if any(not isinstance(p, str) or not p.strip() for p in team.players):
        raise SetupError("team %s: player names must be non-empty text" % team.name)
    return team


def _whole(options: Mapping[str, Any], key: str, low: int, high: int | None = None) -> int:
    v = options[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
        raise SetupError("option %s must be a whole number from %d%s, not %r" % (
            key, low, " to %d" % high if high is not None else " up", v))
    return v


class Tournament:
    """A tournament of one format. Formats and their options:

    round_robin            rounds: how many times every pair meets (1)
    single_elimination,    seeding: "order" (the teams as given are seeds 1, 2, ...), "random" (shuffled
    double_elimination       by the seed) or "round_robin" (a round robin first, its standings seed);
                           rounds: the round robin's, with seeding round_robin (1);
                           advance: how many of the round robin's best go to the bracket (all)
    """

    def __init__(self, format: str, teams: Sequence[str | Team | Mapping[str, Any]],
                 options: Mapping[str, Any] | None = None, seed: int = 0) -> None:
        if format not in FORMATS:
            raise SetupError("unknown format %r: the formats are %s" % (format, ", ".join(FORMATS)))
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise SetupError("the seed must be a whole number, not %r" % (seed,))
        if isinstance(teams, str | Mapping):
            raise SetupError("teams must be a list of teams")
        self.format, self.seed = format, seed
        self.teams: tuple[Team, ...] = tuple(_team(t) for t in teams)
        self.names = tuple(t.name for t in self.teams)
        twice = sorted({n for n in self.names if self.names.count(n) > 1})
        if twice:
            raise SetupError("teams named twice: %s" % ", ".join(twice))
        if len(self.teams) < 2:
            raise SetupError("a tournament needs at least 2 teams, not %d" % len(self.teams))
        self.options = self._options(dict(options or {}))
        n = len(self.teams)
        rr = format == "round_robin" or self.options.get("seeding") == "round_robin"
        self._rr = roundrobin.schedule(n, self.options["rounds"]) if rr else []
        self._nodes: list[bracket.Node] = []
        self._fixed: tuple[str, ...] | None = None
        if format != "round_robin":
            self._bracket_n = self.options.get("advance", n)
            self._nodes = (bracket.single if format == "single_elimination" else bracket.double)(self._bracket_n)
            if self.options["seeding"] == "order":
                self._fixed = self.names
            elif self.options["seeding"] == "random":
                self._fixed = tuple(draw.shuffled(self.names, seed, draw.SEEDING))
        self._sources = {node.id: (bracket.describe(node.sources[0]), bracket.describe(node.sources[1]))
                         for node in self._nodes}
        self._results: dict[str, Result] = {}
        self._log: list[Result] = []
        self._cache: _State | None = None
        self._prev: _State | None = None  # the state before the last result, to reuse its unchanged matches

    def _options(self, o: dict[str, Any]) -> dict[str, Any]:
        known = {"rounds"} if self.format == "round_robin" else {"seeding", "rounds", "advance"}
        unknown = set(o) - known
        if unknown:
            raise SetupError("%s has no option %s (its options: %s)" % (
                self.format, ", ".join(sorted(unknown)), ", ".join(sorted(known))))
        o.setdefault("rounds", 1)
        _whole(o, "rounds", 1)
        if self.format == "round_robin":
            return o
        o.setdefault("seeding", "order")
        if o["seeding"] not in SEEDINGS:
            raise SetupError("unknown seeding %r: the seedings are %s" % (o["seeding"], ", ".join(SEEDINGS)))
        n = len(self.teams)
        if o["seeding"] == "round_robin":
            o.setdefault("advance", n)
            _whole(o, "advance", 2, n)
        elif "advance" in o or o["rounds"] != 1:
            raise SetupError("options rounds and advance are for seeding round_robin only")
        if o.get("advance", n) > bracket.MAX_TEAMS:
            raise SetupError("a bracket holds at most %d teams, not %d%s" % (
                bracket.MAX_TEAMS, o.get("advance", n),
                "" if o["seeding"] == "round_robin" else ": seed it from a round robin with advance"))
        return o

    # ------------------------------------------------------------ setup and journal

    def setup(self) -> dict[str, Any]:
        """Everything the tournament was built from, as plain data (what a hub journals first)."""
        return {"format": self.format, "teams": [t.to_dict() for t in self.teams], "options": dict(self.options),
                "seed": self.seed}

    @classmethod
    def from_setup(cls, setup: Mapping[str, Any]) -> Tournament:
        if not isinstance(setup, Mapping) or set(setup) - {"format", "teams", "options", "seed"}:
            raise SetupError("a tournament setup is {format, teams, options, seed}, not %r" % (setup,))
        return cls(setup.get("format", ""), setup.get("teams", []), setup.get("options"), setup.get("seed", 0))

    @classmethod
    def replay(cls, setup: Mapping[str, Any], results: Iterable[Result | Mapping[str, Any]]) -> Tournament:
        """The tournament after these results, in this order (each refused one raises, as when fed)."""
        t = cls.from_setup(setup)
        for r in results:
            t.record(r if isinstance(r, Result) else Result.from_dict(r))
        return t

    @property
    def results(self) -> tuple[Result, ...]:
        """Every accepted result and correction, in the order accepted: replay() takes exactly these."""
        return tuple(self._log)

    # ------------------------------------------------------------ feeding results

    def record(self, result: Result) -> list[str]:
        """Take a match's result, or with result.correction a correction (whose changed matches it
        returns, as correct() does; a result changes none). Refusals raise ResultRefused."""
        if result.correction:
            return self.correct(result)
        m = self.match(result.match)
        if m.state == "played":
            assert m.result is not None
            raise AlreadyPlayed(m.id, "already has a result (%s)" % _said(m.result),
                                duplicate=m.result.same_outcome(result))
        if m.state != "ready":
            raise NotReady(m.id, self._why_not(m))
        _fits(m, result)
        self._take(result)
        return []

    def correct(self, result: Result) -> list[str]:
        """Override a played match's result, as the host may. Refused once a match played since would
        now have other teams (the bracket has moved past it); a new score with the same winner is always
        taken. Returns the ids of the matches not played yet whose teams it changed, or that were ready
        and no longer are: a hub stops any of them already under way on a table."""
        result = replace(result, correction=True)
        m = self.match(result.match)
        if m.state != "played":
            raise CorrectionRefused(m.id, "has no result to correct (it is %s); record it instead" % m.state)
        _fits(m, result)
        before = self._state()
        after = self._derive({**self._results, m.id: result})
        for mid in self._results:
            old, new = before.matches[mid], after.matches[mid]
            if mid != m.id and (new.state != "played" or new.teams != old.teams):
                raise CorrectionRefused(m.id, "the tournament has moved past it: %s (%s) was played since "
                                        "and would no longer be the same match" % (mid, _said(old.result)))
        self._take(result)
        self._cache = after
        return [mid for mid, now in after.matches.items() if now.state != "played" and (
            now.teams != before.matches[mid].teams or (before.matches[mid].state == "ready" != now.state))]

    def _take(self, result: Result) -> None:
        self._results[result.match] = result
        self._log.append(result)
        self._prev, self._cache = self._cache or self._prev, None

    def _why_not(self, m: Match) -> str:
        if m.state == "bye":
            return "is a bye: %s goes on without playing" % (m.teams[0] or m.teams[1])
        if m.state == "void":
            if m.id == "GF-2":
                return "is not needed: %s won GF-1 from the winners' bracket" % m.teams[0]
            return "is not played: no team reaches it (byes)"
        if m.bracket == "round_robin":
            for team in m.teams:
                first = next(x for x in self._state().matches.values()
                             if x.state in ("ready", "waiting") and team in x.teams)
                if first.id != m.id:
                    return "waiting: %s plays %s first" % (team, first.id)
        if self._state().seeds is None:
            return "waiting for the round robin's standings to seed the bracket"
        waits = [s for s, t in zip(m.sources, m.teams, strict=True) if t is None]
        return "waiting for the %s" % " and the ".join(waits)

    # ------------------------------------------------------------ what it says

    def _state(self) -> _State:
        if self._cache is None:
            self._cache = self._derive(self._results)
        return self._cache

    def _derive(self, results: Mapping[str, Result]) -> _State:
        matches: dict[str, Match] = {}
        # most matches are as they were before the last result: keep those objects, as making a frozen
        # dataclass costs more than comparing it, and a replay derives once a result
        last = self._prev.matches if self._prev else {}
        # a team plays its round robin matches round by round: each is ready once the team's earlier ones are in
        first: dict[int, int] = {}
        for p in self._rr:
            if p.id not in results:
                for t in (p.a, p.b):
                    first.setdefault(t, p.round)
        for p in self._rr:
            res = results.get(p.id)
            state = "played" if res else (
                "ready" if first[p.a] == p.round and first[p.b] == p.round else "waiting")
            was = last.get(p.id)
            if was is not None and was.state == state and was.result is res:
                matches[p.id] = was
            else:
                a, b = self.names[p.a], self.names[p.b]
                matches[p.id] = Match(p.id, "round_robin", p.round, (a, b), state, (a, b), res)
        rr_done = len(first) == 0
        seeds = self._fixed
        if self._nodes and self._rr and rr_done:
            seeds = tuple(self._rr_ranking(results)[: self._bracket_n])
        champion = None
        if self._nodes:
            slots = bracket.resolve(self._nodes, self._bracket_n, seeds, results)
            for node in self._nodes:
                s = slots[node.id]
                teams = (s.teams[0] or None, s.teams[1] or None)  # nobody and not-yet-known both show as None
                res = results.get(node.id) if s.state == "played" else None
                was = last.get(node.id)
                if was is not None and was.state == s.state and was.teams == teams and was.result is res:
                    matches[node.id] = was
                else:
                    matches[node.id] = Match(node.id, node.bracket, node.round, teams, s.state,
                                             self._sources[node.id], res)
            champion = bracket.champion(self._nodes, slots)
        elif rr_done:
            champion = self._rr_ranking(results)[0]
        return _State(matches, seeds, champion)

    def _rr_ranking(self, results: Mapping[str, Result]) -> list[str]:
        # in schedule order, whatever order the results came in
        return roundrobin.ranking(self.names, [results[p.id] for p in self._rr if p.id in results])

    def matches(self) -> list[Match]:
        """Every match, in playing order: the round robin by round, then the bracket (winners' rounds
        interleaved with the losers' rounds they feed, then the grand final)."""
        return list(self._state().matches.values())

    def match(self, match_id: str) -> Match:
        m = self._state().matches.get(match_id)
        if m is None:
            raise UnknownMatch(str(match_id), "no such match in this tournament")
        return m

    def ready(self) -> list[Match]:
        """The matches that can be played now, oldest round first. No team is in two of them."""
        return [m for m in self._state().matches.values() if m.state == "ready"]

    def next_match(self, team: str) -> Match | None:
        """The team's next match: ready, or waiting with the team already in it; None when it is done."""
        self._known(team)
        return next((m for m in self._state().matches.values()
                     if m.state in ("ready", "waiting") and team in m.teams), None)

    @property
    def seeds(self) -> tuple[str, ...] | None:
        """The bracket's teams, seed 1 first; None while a seeding round robin is still running."""
        return self._state().seeds

    @property
    def champion(self) -> str | None:
        return self._state().champion

    @property
    def finished(self) -> bool:
        return self._state().champion is not None

    def _known(self, team: str) -> None:
        if team not in self.names:
            raise VenueError("no team named %r in this tournament" % (team,))

    def standings(self) -> list[Standing]:
        """Best first. A round robin (and a bracket's seeding one, until the bracket has its seeds)
        ranks by wins, tiebreak total, point difference, head-to-head, seed. A bracket ranks the
        teams still in first, then by how late each went out; teams out in the same round share a
        rank, listed by seed. Records count every match a team played, round robin included."""
        st = self._state()
        played = [m.result for m in st.matches.values() if m.result is not None]
        recs = roundrobin.records(self.names, played)
        if st.seeds is None or not self._nodes:
            order = self._rr_ranking(self._results)
            return [_standing(i + 1, t, recs[t], False) for i, t in enumerate(order)]
        stage: dict[tuple[str, int], int] = {}
        for node in self._nodes:
            stage.setdefault((node.bracket, node.round), len(stage))
        seeds = st.seeds
        losses = {t: 0 for t in seeds}
        out_at: dict[str, int] = {}
        for node in self._nodes:
            m = st.matches[node.id]
            if m.result is not None:
                loser = m.result.loser()
                losses[loser] += 1
                if losses[loser] == bracket.lives(self._nodes):
                    out_at[loser] = stage[(node.bracket, node.round)]
        place = {t: (1, -out_at[t]) if t in out_at else (0, 0) for t in seeds}
        order = sorted(seeds, key=lambda t: (place[t], seeds.index(t)))
        lines: list[Standing] = []
        for i, t in enumerate(order):
            rank = lines[-1].rank if i and place[t] == place[order[i - 1]] else i + 1
            lines.append(_standing(rank, t, recs[t], t in out_at))
        # teams the seeding round robin left out of the bracket: after it, in round robin order
        rest = [t for t in self._rr_ranking(self._results) if t not in place]
        return lines + [_standing(len(lines) + i + 1, t, recs[t], True) for i, t in enumerate(rest)]


def _standing(rank: int, team: str, r: roundrobin.Record, out: bool) -> Standing:
    return Standing(rank, team, r.played, r.wins, r.losses, r.tiebreak, r.points_for, r.points_against, out)


def _said(r: Result | None) -> str:
    if r is None:
        return "no result"
    return "%s won %s" % (r.winner, "-".join("%g" % r.scores[t] for t in sorted(r.scores, key=lambda t: t != r.winner)))


def _fits(m: Match, r: Result) -> None:
    teams = set(m.teams)
    if set(r.scores) != teams:
        raise BadResult(m.id, "scores must name exactly the match's teams, %s and %s; got %s" % (
            m.teams[0], m.teams[1], ", ".join(sorted(r.scores)) or "none"))
    if r.winner not in teams:
        raise BadResult(m.id, "the winner %r is not in the match (%s against %s)" % (r.winner, m.teams[0], m.teams[1]))
    extra = set(r.tiebreaks) - teams
    if extra:
        raise BadResult(m.id, "tiebreaks name teams not in the match: %s" % ", ".join(sorted(extra)))
