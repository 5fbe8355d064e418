"""What each page may see of a table's session: the scoreboard's, the host's, a side's own.

Kept apart from session.py, which plays the inputs: these only read the session, never change it,
so what a page is shown can be checked against what the game keeps secret in one place. Session
inherits Views. `sides_of` (who gets a private page) lives here with the codes that open one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import shared_rules
from battlement.errors import UserError
from battlement.table.adapter import TableAdapter
from battlement.table.calls import Speaker
from battlement.table.journal import Journal
from battlement.table.maps import TableMap
from battlement.table.matchlog import Match
from battlement.table.router import Router
from battlement.table.tokens import same


def sides_of(match: Match) -> list[str]:
    """The sides or players who get a private page."""
    sides = getattr(match.game, "SIDES", None)
    if sides:
        return sorted(sides)
    players = match.state.get("players")
    if isinstance(players, list):
        return [p["id"] if isinstance(p, dict) else str(p) for p in players]
    return []


class Views:
    """The projections each viewer gets of the session (a mixin of Session)."""

    # the session's, set by Session.__init__
    table: str
    tmap: TableMap
    journal: Journal
    adapter: TableAdapter
    router: Router
    sound: Speaker
    match: Match
    codes: dict[str, str]
    game_id: int
    counters: dict[str, int]
    notices: list[dict]
    private: dict[str, list[str]]
    prompts: list[dict]
    between: dict | None
    previous: dict | None
    paused: bool
    paused_sensed: dict | None
    blind: list[dict]
    venue: dict | None

    if TYPE_CHECKING:  # Session's own (option_specs: GameOptions')
        def sensor_for(self, inp: dict) -> list[tuple[str, str, int]]: ...
        def timeout_input(self) -> dict | None: ...
        def option_specs(self) -> list[dict]: ...
        def set_aside_games(self) -> tuple[list[dict], int]: ...

    # Every page gets only projections the game made for its viewer (the adapter's words, the rules'
    # views): the public one (scoreboard, /api/state, and the host page in view of the players), a
    # side's own, and the host's controls, which add only what the game calls public.

    def _prompts(self, viewer) -> list[dict]:
        out = [q for q in (self.adapter.prompt_for(p, viewer) for p in self.prompts) if q is not None]
        if self.between is not None and self.match.over:
            out.append({"to": None, "ask": self.between["ask"]})
        return out

    def public(self) -> dict:
        """The scoreboard: public view, public notices, prompts to everyone. Never a secret."""
        return {
            "table": self.table, "title": self.match.game.TITLE, "game": self.match.game.NAME,
            "view": self.match.view(None), "notices": self.notices, "paused": self.paused,
            "prompts": self._prompts(None),
            "sides": sorted(self.codes),
            # a venue's match: who plays each side (set by the venue link for that game alone)
            "venue": self.venue if self.venue and self.venue["game_id"] == self.game_id else None,
        }

    def for_host(self) -> dict:
        legal = self.match.legal()
        sensed = set(getattr(self.match.game, "SENSED", ()))
        decisions = self.adapter.host_decisions(self.match.state, [i for i in legal if i.get("t") not in sensed])
        if self.between is not None and self.match.over:
            decisions = decisions + list(self.between["choices"])
        aside, more = self.set_aside_games()
        out = self.public()
        out.update({
            "codes": self.codes, "counters": self._all_counters(),
            "sensed": [i for i in legal if i.get("t") in sensed or self.sensor_for(i)][:200],
            "decisions": decisions[:200],
            "options": self.match.options, "option_specs": self.option_specs(),
            "history": self.journal.history(self.table, 5),
            "waiting": self.match.awaiting(),
            "timeout": self.timeout_input(),  # what the host's timeout button enters now (None: no button)
            "previous": self._previous_words(),
            "game_id": self.game_id,  # the journal's id of the game, as the games set aside are listed
            # every game set aside on this table (the latest first), any of which "Resume this game" takes up
            "set_aside": aside, "set_aside_more": more,
            "paused_sensed": self.paused_sensed if self.paused else None,
            # every question in words, as the game words it for the host
            "prompts": self._prompts("host"),
            "blind": self.blind,  # breaks a board could not time: a question for the host alone
        })
        return out

    def _previous_words(self) -> dict | None:
        """The latest game set aside, which the "resume-previous" action takes up (set_aside lists them all)."""
        p = self.previous
        if p is None:
            return None
        try:
            title = shared_rules.load(p["game"]).TITLE
        except KeyError:
            return None
        return {"game": p["game"], "title": title, "summary": p["summary"], "started": p["started"],
                "here": p["game"] == self.tmap.game}

    def for_side(self, side: str) -> dict:
        legal = self.match.legal()
        view = self.match.view(side)
        out = self.public()
        out.update({
            "side": side, "view": view, "private": self.adapter.private_notes(view, side, self.private.get(side, [])),
            "decisions": [i for i in legal if i.get("by") == side][:300],
            "prompts": self._prompts(side),
        })
        return out

    def check_code(self, side: str, code: str | None) -> None:
        if side not in self.codes:
            raise UserError("table %s has no side %r (sides: %s)" % (self.table, side, ", ".join(sorted(self.codes))))
        if not same(code, self.codes[side]):
            raise UserError("the private page of %s needs its code, shown on the host page" % side)

    def _all_counters(self) -> dict:
        out = dict(self.counters)
        for k, v in self.router.counters.items():
            out["router." + k] = v
        for k, v in self.sound.counters.items():
            out["sound." + k] = v
        return out
