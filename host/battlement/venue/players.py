"""A venue's state, folded from the hub journal's entries: players, teams, tournaments, matches.

Pure: VenueState.fold(entries) of the same entries is the same state, whatever ran before; a hub killed
at any moment rebuilds exactly what it had from its journal (hubjournal.py). Each entry kind and what
it holds (check() refuses a malformed one in words, before it is journalled):

    player      {"name", "team": name or None}           a player, or a player moving to another team
    team        {"name"}                                   a team (with no players yet)
    tournament  {"id", ...}                                a tournament's set-up, as the formats take it
    assign      {"match", "table", "game", "options", "sides", "seed", "tournament"}   a match put on a table
    ready       {"match", "table", "game_id"}             the table's bridge set its game up
    result      a result message (protocol.result)        the rules ended the match's game
    correct     {"match", "winner", "score", "why"}       the host corrects a result (the latest counts)

A side of a match names a team, players, or both (protocol.start's sides). The players a side stands for
are those it names, else its team's players at the moment its result came, so a player who changes
team later keeps the games they played.
"""

from __future__ import annotations

import copy

from battlement.errors import UserError
from battlement.venue import protocol

ENTRY_FIELDS = {
    "player": {"name", "team"}, "team": {"name"},
    "assign": {"match", "table", "game", "options", "sides", "seed", "tournament"},
    "ready": {"match", "table", "game_id"}, "correct": {"match", "winner", "score", "why"},
}


def check(kind: str, body: dict) -> None:
    """Refuse an entry that would not fold, in one line naming what is wrong (UserError)."""
    if not isinstance(body, dict):
        raise UserError("a %s entry is an object, not %r" % (kind, body))
    extra = set(body) - ENTRY_FIELDS.get(kind, set(body))
    if extra:
        raise UserError("a %s entry has no field %s" % (kind, ", ".join(sorted(extra))))
    if kind in ("player", "team"):
        if not protocol.is_name(body.get("name")):
            raise UserError("a %s's name is 1-%d printable characters without spaces around: %r"
                            % (kind, protocol.NAME_MAX, body.get("name")))
        if body.get("team") is not None and not protocol.is_name(body["team"]):
            raise UserError("player %s: a team name is 1-%d printable characters" % (body["name"], protocol.NAME_MAX))
    elif kind == "tournament":
        if not isinstance(body.get("id"), str) or not protocol.MATCH_RE.match(body["id"]):
            raise UserError("a tournament needs an id: 1-64 of letters, digits and . _ : / -")
    elif kind == "assign":
        start = dict(body, t="start")
        problem = protocol.check(start, start.get("table"))  # type: ignore[arg-type]
        if problem:
            raise UserError("match %s: %s" % (body.get("match"), problem))
    elif kind == "correct":
        if not isinstance(body.get("why"), str) or not body["why"].strip():
            raise UserError("a correction of %s says why (the host's words are kept with it)" % body.get("match"))
        score = body.get("score")
        if score is not None and protocol.per_side(score, "score"):
            raise UserError("correction of %s: %s" % (body.get("match"), protocol.per_side(score, "score")))


class VenueState:
    def __init__(self) -> None:
        self.players: dict[str, dict] = {}  # name -> {"team": name or None}
        self.teams: dict[str, dict] = {}  # name -> {} (members: players_of)
        self.tournaments: dict[str, dict] = {}  # id -> set-up
        # match id -> {"assign": the latest, "ready", "result", "corrections": [...], "players": {side: [names]}}
        self.matches: dict[str, dict] = {}
        # (match, its correction's index or None for its result) of each result and correction, in journal order
        self.feed: list[tuple[str, int | None]] = []
        self.last = 0  # the id of the last entry folded in

    @classmethod
    def fold(cls, entries) -> VenueState:
        state = cls()
        for entry_id, kind, body in entries:
            state.apply(entry_id, kind, body)
        return state

    def apply(self, entry_id: int, kind: str, body: dict) -> None:
        """One journalled entry (in journal order)."""
        self.last = entry_id
        body = copy.deepcopy(body)  # the caller's dict changed later must not change the state
        if kind == "player":
            self.players[body["name"]] = {"team": body.get("team")}
            if body.get("team") is not None:
                self.teams.setdefault(body["team"], {})
        elif kind == "team":
            self.teams.setdefault(body["name"], {})
        elif kind == "tournament":
            self.tournaments[body["id"]] = body
        elif kind in ("assign", "ready", "result", "correct"):
            m = self.matches.setdefault(body["match"], {"assign": None, "ready": None, "result": None,
                                                        "corrections": [], "players": {}})
            if kind == "correct":
                m["corrections"].append(body)
            else:
                m[kind] = body
            if kind in ("result", "correct"):
                self.feed.append((body["match"], len(m["corrections"]) - 1 if kind == "correct" else None))
            if kind == "assign":
                m["ready"] = None  # put on a table (again): that table's "ready" is still to come
            if kind == "result":
                m["players"] = {side: self._players_of(e) for side, e in (body.get("sides") or {}).items()}

    def _players_of(self, entry: dict) -> list[str]:
        if entry.get("players"):
            return list(entry["players"])
        return self.members(entry.get("team"))

    def members(self, team: str | None) -> list[str]:
        return sorted(p for p, v in self.players.items() if team is not None and v["team"] == team)

    # --- what the bracket and the pages read -------------------------------------------------

    def final(self, match: str) -> dict | None:
        """The match's result as it counts: the refereed one with the latest correction over it
        ({"winner", "score", "tiebreak", "facts", "sides", "corrected": the host's why or None}), None if none."""
        m = self.matches.get(match)
        if m is None or (m["result"] is None and not m["corrections"]):
            return None
        r = m["result"] or {}
        sides = r.get("sides") or (m["assign"] or {}).get("sides") or {}
        out = {"match": match, "winner": r.get("winner"), "score": dict(r.get("score") or {}),
               "tiebreak": dict(r.get("tiebreak") or {}), "facts": copy.deepcopy(r.get("facts") or {}),
               "sides": copy.deepcopy(sides), "corrected": None}
        if m["corrections"]:
            c = m["corrections"][-1]
            out["winner"] = c.get("winner")
            if c.get("score") is not None:
                out["score"] = dict(c["score"])
            out["corrected"] = c["why"]
        return out

    def bracket_results(self, tournament: str) -> list[dict]:
        """The tournament's results and corrections in the order they were journalled, as its format takes
        them (formats.Result.from_dict; Tournament.replay): keyed by team (a side's team, else its players),
        the match id within the tournament (a venue match id "<tournament>/<id>" without its prefix).
        A draw is left out (a bracket needs a winner: the host corrects it); a correction of a match with
        no refereed result (a table that died) is its result."""
        out, fed = [], set()
        for mid, i in self.feed:
            m = self.matches[mid]
            a = m["assign"] or {}
            if a.get("tournament") != tournament or (i is None and mid in fed):
                continue  # (a refereed result after the host's own for that match: the host's stands)
            base = m["result"] or {}
            sides = base.get("sides") or a.get("sides") or {}
            c = None if i is None else m["corrections"][i]
            winner = base.get("winner") if c is None else c["winner"]
            score = base.get("score") or {} if c is None or c.get("score") is None else c["score"]
            if winner is None or winner not in sides:
                continue
            team = {side: protocol.side_name(side, e) for side, e in sides.items()}
            entry: dict = {"match": mid.removeprefix(tournament + "/"), "winner": team[winner],
                           "scores": {team[s]: score.get(s, 0) for s in sides},
                           "tiebreaks": {team[s]: (base.get("tiebreak") or {}).get(s, 0) for s in sides}}
            if mid in fed:
                entry["correction"] = True
            fed.add(mid)
            out.append(entry)
        return out

    def pending(self) -> dict[str, dict]:
        """Matches put on a table whose game is not over yet: match id -> its (latest) assignment."""
        return {mid: m["assign"] for mid, m in sorted(self.matches.items())
                if m["assign"] is not None and m["result"] is None and not m["corrections"]}

    def record(self, name: str) -> dict:
        """A player's or a team's night: its games (newest last), wins, losses, draws, and every fact summed."""
        games: list[dict] = []
        totals: dict[str, float] = {}
        wins = losses = draws = 0
        for mid, m in self.matches.items():
            f = self.final(mid)
            if f is None:
                continue
            for side, entry in f["sides"].items():
                if name not in m["players"].get(side, ()) and entry.get("team") != name:
                    continue
                won = None if f["winner"] is None else f["winner"] == side
                wins, losses, draws = wins + (won is True), losses + (won is False), draws + (won is None)
                for fact, n in (f["facts"].get(side) or {}).items():
                    totals[fact] = totals.get(fact, 0) + n
                a = m["assign"] or {}
                games.append({"match": mid, "table": a.get("table"), "game": a.get("game"), "side": side,
                              "won": won, "score": f["score"].get(side), "facts": f["facts"].get(side) or {},
                              "against": [protocol.side_name(s, e) for s, e in f["sides"].items() if s != side],
                              "corrected": f["corrected"]})
        return {"name": name, "games": games, "wins": wins, "losses": losses, "draws": draws, "facts": totals}

    def to_dict(self) -> dict:
        """Everything, as plain data (two states are the same if these are equal)."""
        return {"players": self.players, "teams": {t: {"players": self.members(t)} for t in self.teams},
                "tournaments": self.tournaments, "matches": self.matches,
                "results": {mid: self.final(mid) for mid in sorted(self.matches)}, "last": self.last}
