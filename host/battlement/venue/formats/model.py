"""The shapes a tournament speaks in: teams, results, matches, standings, and its refusals.

Every refusal is a ValueError (a caller that only knows "bad value" still catches it) and a UserError
(the command line prints it as one line); a refusal about a match carries the match id in `.match`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from battlement.errors import UserError


class VenueError(UserError, ValueError):
    """A tournament refused something; the message says what and where."""


class SetupError(VenueError):
    """The format, teams, options or seed cannot make a tournament."""


class ResultRefused(VenueError):
    """A result or correction that cannot go into the tournament; `.match` is its match id."""

    def __init__(self, match: str, why: str) -> None:
        super().__init__("%s: %s" % (match, why))
        self.match = match
        self.why = why


class UnknownMatch(ResultRefused):
    """No match of this tournament has that id."""


class NotReady(ResultRefused):
    """The match is waiting for its teams, is a bye, or will not be played."""


class AlreadyPlayed(ResultRefused):
    """The match has a result; `.duplicate` says the refused one is the same result again."""

    def __init__(self, match: str, why: str, duplicate: bool) -> None:
        super().__init__(match, why)
        self.duplicate = duplicate


class BadResult(ResultRefused):
    """The result does not fit its match (a winner or a score for a team not in it, a score not a number)."""


class CorrectionRefused(ResultRefused):
    """The bracket has moved past the match, or it has no result to correct."""


@dataclass(frozen=True)
class Team:
    """A team: its name (unique in a tournament, what results name) and, from a blind draw, its players."""

    name: str
    players: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "players": list(self.players)}


def _number(match: str, what: str, v: Any) -> float:
    # bool is an int to Python, never a score; NaN and infinity would make every comparison lie
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise BadResult(match, "%s must be a finite number, not %r" % (what, v))
    return v


@dataclass(frozen=True)
class Result:
    """One match's result: who won, each team's score, and each team's tiebreak value.

    scores and tiebreaks are keyed by team name, so a side swapped at the table cannot give one team
    the other's score. A tiebreak value is the game's own (towers left, cups left; higher is better);
    a team left out has 0. correction=True overrides the match's recorded result (Tournament.correct).
    """

    match: str
    winner: str
    scores: Mapping[str, float]
    tiebreaks: Mapping[str, float] = field(default_factory=dict)
    correction: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.match, str) or not self.match:
            raise BadResult(str(self.match), "a result needs its match id as a non-empty string")
        if not isinstance(self.winner, str):
            raise BadResult(self.match, "the winner must be a team name, not %r" % (self.winner,))
        for what, values in (("score", self.scores), ("tiebreak", self.tiebreaks)):
            if not isinstance(values, Mapping):
                raise BadResult(self.match, "%ss must map each team's name to a number" % what)
            for team, v in values.items():
                _number(self.match, "%s's %s" % (team, what), v)
        # copies: a caller's dict changed later must not change a recorded result
        object.__setattr__(self, "scores", dict(self.scores))
        object.__setattr__(self, "tiebreaks", dict(self.tiebreaks))

    def same_outcome(self, other: Result) -> bool:
        """The same winner, scores and tiebreaks (whether or not either is a correction)."""
        return (self.match, self.winner, self.scores, self._tiebreaks()) == (
            other.match, other.winner, other.scores, other._tiebreaks())

    def _tiebreaks(self) -> dict[str, float]:
        return {t: v for t, v in self.tiebreaks.items() if v}

    def loser(self) -> str:
        return next(t for t in self.scores if t != self.winner)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"match": self.match, "winner": self.winner, "scores": dict(self.scores),
                             "tiebreaks": dict(self.tiebreaks)}
        if self.correction:
            d["correction"] = True
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Result:
        if not isinstance(d, Mapping):
            raise BadResult("?", "a result must be an object, not %r" % (d,))
        unknown = set(d) - {"match", "winner", "scores", "tiebreaks", "correction"}
        if unknown:
            raise BadResult(str(d.get("match", "?")), "unknown result fields: %s" % ", ".join(sorted(unknown)))
        return cls(match=d.get("match", ""), winner=d.get("winner", ""), scores=d.get("scores", {}),
                   tiebreaks=d.get("tiebreaks", {}), correction=bool(d.get("correction", False)))


# What a match is now. waiting: a team is not known yet, or (round robin) still has an earlier match;
# ready: both teams known, no result; played: has a result; bye: one team goes on without playing;
# void: nobody plays it (two empty slots of a bracket with byes, or a reset final not needed).
STATES = ("waiting", "ready", "played", "bye", "void")


@dataclass(frozen=True)
class Match:
    """A match as the tournament sees it now.

    id: stable ("R1-M3" round robin, "W2-1" winners' bracket, "L3-2" losers' bracket, "GF-1"/"GF-2");
    bracket: "round_robin", "winners", "losers" or "grand_final"; round: 1-based within the bracket.
    teams: the two team names; None where not known yet (waiting) or nobody (bye, void).
    sources: where each slot's team comes from ("Knights", "seed 3", "winner of W1-2", "loser of W2-1").
    """

    id: str
    bracket: str
    round: int
    teams: tuple[str | None, str | None]
    state: str
    sources: tuple[str, str]
    result: Result | None = None


@dataclass(frozen=True)
class Standing:
    """A team's line in the standings. rank is shared by teams the format cannot tell apart
    (two teams out in the same bracket round); out: eliminated from a bracket."""

    rank: int
    team: str
    played: int
    wins: int
    losses: int
    tiebreak: float
    points_for: float
    points_against: float
    out: bool = False

    @property
    def diff(self) -> float:
        return self.points_for - self.points_against
