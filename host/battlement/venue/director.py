"""The tournament director: a venue's tournaments played out on its tables, from the hub's journal alone.

The hub (hub.py) puts matches on tables and journals what comes back; the formats (formats/) say who
plays whom. The director joins them, on the hub's event loop:

- after every result and every table's change it takes each tournament's ready matches that are on no
  table yet, and puts each on a free table (one whose status says idle, with nothing of the venue's on
  it) with its sides assigned: the match's first team plays the game's first side. A team goes back to
  a table it just played at when that one is free (no walk across the room). Each start is announced,
  "Table 3: Knights against Orcs", to the pages and to whoever listens (the hub's speech, the TV's).
- a result the rules give goes into the bracket as the hub journalled it (VenueState.bracket_results,
  fed to Tournament.record), with no typing.
- the host's correction is tried on the tournament first (Tournament.correct, refused in its words),
  then journalled (Hub.correct). A correction that would change who plays a match already on a table
  is refused too: the venue has no way to take a game off a table half-played.
- a table that drops out keeps its match, held, until it is back; the host may move it (move()).

Nothing here is kept apart from the hub's journal: a director made after a restart (kill -9 included)
feeds the same results to the same set-ups and has the same standings; a match already on a table has
its assignment in the journal, so it is not put on a table twice.
"""

from __future__ import annotations

import re
import secrets
import zlib
from collections.abc import Callable

import shared_rules
from battlement.errors import UserError
from battlement.table.matchlog import Match as GameMatch
from battlement.table.views import sides_of
from battlement.venue import protocol
from battlement.venue.formats import (
    FORMATS,
    AlreadyPlayed,
    Match,
    Result,
    ResultRefused,
    SetupError,
    Team,
    Tournament,
    blind_draw,
)
from battlement.venue.hub import Hub

ANNOUNCEMENTS_KEPT = 20
TOURNAMENT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")  # "<id>/<match id>" stays a match id
SEED_MAX = (1 << 30) - 1  # a game's seed, as a start message takes it


def venue_match(tid: str, mid: str) -> str:
    return "%s/%s" % (tid, mid)


def table_label(table: str) -> str:
    """How a table is called aloud and on the TV: "table-3" and "3" are "Table 3"."""
    m = re.fullmatch(r"(?i)(?:table)?[-_ ]?(\d+)", table)
    return "Table %d" % int(m.group(1)) if m else "Table " + table


def game_seed(seed: int, mid: str) -> int:
    """Each match's game seed, from the tournament's: journalled with the match, the same on a replay."""
    return zlib.crc32(("%d/%s" % (seed, mid)).encode()) & SEED_MAX


def game_sides(game: str, options: dict) -> list[str]:
    """The sides of a two-sided game with these options, or UserError in words."""
    try:
        mod = shared_rules.load(game)
    except KeyError:
        raise UserError("unknown game %r (games: %s)" % (game, ", ".join(sorted(shared_rules.GAMES)))) from None
    try:
        sides = sides_of(GameMatch(mod, dict(options), 0))
    except Exception as e:  # noqa: BLE001 -- a game's own refusal of its options, said in its words
        raise UserError("%s with options %s: %s" % (game, options, getattr(e, "reason", e))) from None
    if len(sides) != 2:
        raise UserError("a tournament's matches are two teams against each other; %s with these options has "
                        "%d sides (%s)" % (game, len(sides), ", ".join(sides) or "none"))
    return sides


class Director:
    def __init__(self, hub: Hub):
        self.hub = hub
        self.tournaments: dict[str, Tournament] = {}  # in the order they were set up
        self.announcements: list[dict] = []  # {"id", "text", "table", "match"}, newest last
        self.listeners: list[Callable[[str, dict], None]] = []  # ("announce", a) and ("changed", {})
        self.refused_on: dict[str, dict[str, str]] = {}  # venue match -> {table: why it refused it}
        self._fed: dict[str, int] = {}  # tournament -> how many of its bracket results it has taken
        self._feed_len = -1
        self._said: dict[str, tuple] = {}  # table -> its last status (state, match, boards)
        self._loading = True
        self.update()
        self._loading = False
        hub.listeners.append(self._heard)

    # --- what the host does ----------------------------------------------------------------------

    def create(self, form: dict) -> str:
        """Set a tournament up from the host's form and journal it; its id. The form: title, game, options
        (the game's), format, seeding, rounds, advance, seed (None: drawn now, then journalled), teams
        (names) or pools (lists of players, best first; with team_size for one pool), tables (None: all)."""
        state = self.hub.state
        title = str(form.get("title") or "").strip() or "Tournament %d" % (len(state.tournaments) + 1)
        tid = form.get("id") or _slug(title, state.tournaments)
        if not isinstance(tid, str) or not TOURNAMENT_RE.match(tid):
            raise UserError("a tournament's id is 1-40 of letters, digits, '.', '_' and '-', a letter or digit "
                            "first, not %r" % (tid,))
        if tid in state.tournaments:
            raise UserError("there is a tournament %s already: give the new one another id" % tid)
        game, options = form.get("game") or "", form.get("options") or {}
        if not isinstance(options, dict):
            raise UserError("a game's options are an object of names and values, not %r" % (options,))
        sides = game_sides(game, options)
        seed = form.get("seed")
        if seed is None or seed == "":
            seed = secrets.randbelow(SEED_MAX)
        if isinstance(seed, str) and seed.strip().lstrip("-").isdigit():
            seed = int(seed)
        teams = self._teams(form, seed)
        fmt_options = {k: form[k] for k in ("seeding", "rounds", "advance") if form.get(k) not in (None, "")}
        if form.get("format") not in FORMATS:
            raise UserError("format is one of %s, not %r" % (", ".join(FORMATS), form.get("format")))
        if form["format"] == "round_robin":
            fmt_options.pop("seeding", None)
        t = Tournament(form["format"], teams, fmt_options, seed)  # SetupError says what is wrong
        tables = form.get("tables") or None
        if tables is not None and (not isinstance(tables, list) or not all(isinstance(x, str) for x in tables)):
            raise UserError("tables is a list of table ids, not %r" % (tables,))
        for team in t.teams:  # the venue keeps the teams, and a drawn team's players, for their records
            if team.name not in state.teams:
                self.hub.add("team", {"name": team.name})
            for p in team.players:
                if state.players.get(p, {}).get("team") != team.name:
                    self.hub.add("player", {"name": p, "team": team.name})
        self.hub.add("tournament", {"id": tid, "title": title, "game": game, "options": options, "sides": sides,
                                    "setup": t.setup(), "tables": tables})
        self.update()
        return tid

    def _teams(self, form: dict, seed: int) -> list[Team]:
        pools = form.get("pools")
        if pools:
            size = form.get("team_size")
            names = form.get("names") or None
            return blind_draw(pools, seed, int(size) if size not in (None, "") else None, names)
        teams = form.get("teams") or []
        if not isinstance(teams, list):
            raise UserError("teams is a list of team names, not %r" % (teams,))
        bad = [x for x in teams if not protocol.is_name(x)]
        if bad:
            raise UserError("a team's name is 1-%d printable characters without spaces around, not %r"
                            % (protocol.NAME_MAX, bad[0]))
        return [Team(x, tuple(self.hub.state.members(x))) for x in teams]

    def correct(self, vmid: str, winner: str, scores: dict | None, why: str) -> list[str]:
        """The host's result for a match (a team's name wins; scores by team name, None: as they were):
        a correction of a refereed result, or the result of a match whose table died. The matches whose
        teams it changed; UserError, in words, if the bracket cannot take it."""
        tid, t, m = self._match(vmid)
        teams = _both(m)
        a = (self.hub.state.matches.get(vmid) or {}).get("assign")
        if a is None or a.get("tournament") != tid:
            raise UserError("%s has not been put on a table: there is nothing to correct" % vmid)
        side_of = {protocol.side_name(s, e): s for s, e in a["sides"].items()}
        if winner not in side_of or set(teams) != set(side_of):
            raise UserError("%s is %s against %s: the winner is one of them, not %r" % (vmid, *teams, winner))
        before = m.result
        scores = dict(scores) if scores else dict(before.scores) if before else {}
        if set(scores) - set(side_of):
            raise UserError("scores of %s are by team (%s), not %s" % (vmid, ", ".join(teams), ", ".join(scores)))
        trial = Tournament.replay(t.setup(), t.results)
        result = Result(m.id, winner, {x: scores.get(x, 0) for x in teams},
                        dict(before.tiebreaks) if before else {})
        if not str(why or "").strip():
            raise UserError("say why %s is corrected: the words are kept with it" % vmid)
        try:  # the tournament's word first: nothing is journalled that the bracket would refuse
            changed = trial.correct(result) if m.state == "played" else trial.record(result)
        except ResultRefused as e:
            raise UserError("%s cannot be corrected: %s" % (vmid, e.why)) from None
        pending = self.hub.state.pending()
        for mid in changed:
            on = pending.get(venue_match(tid, mid))
            if on is not None:
                raise UserError("correcting %s would change who plays %s, which is on %s now: correct it once "
                                "that game is over, if the bracket allows" % (vmid, mid, table_label(on["table"])))
        self.hub.correct(vmid, side_of[winner], why=str(why).strip(),
                         score={side_of[x]: v for x, v in scores.items()} if scores else None)
        self.update()
        return changed

    def move(self, vmid: str) -> str:
        """Put a match held on a table that dropped out (or refused it) on a free table instead; the table."""
        tid, _t, m = self._match(vmid)
        a = self.hub.state.pending().get(vmid)
        if a is None:
            raise UserError("%s is on no table now: nothing to move" % vmid)
        there = self.hub.table_states().get(a["table"], {}).get("state")
        if there != "dropped" and a["table"] not in self.refused_on.get(vmid, {}):
            raise UserError("%s is on %s, which is %s: only a match held on a table that dropped out is moved"
                            % (vmid, table_label(a["table"]), there or "not heard from yet"))
        free = self._free(self.hub.state.tournaments[tid], vmid)
        if not free:
            raise UserError("no table is free for %s now: it stays held on %s" % (vmid, table_label(a["table"])))
        self._start(tid, m, free[0], "moved from %s" % table_label(a["table"]))
        self.update()
        return free[0]

    # --- keeping up with the hub ------------------------------------------------------------------

    def _heard(self, kind: str, body: dict) -> None:
        if kind == "status":  # a table's heartbeat that says what it said before changes nothing here
            said = (body["state"], body["match"], tuple(body["boards"]))
            if self._said.get(body["table"]) == said:
                return
            self._said[body["table"]] = said
        if kind == "dropped":  # its next status, whatever it says, is news: the table is back
            self._said.pop(body["table"], None)
        if kind == "refused":
            self.refused_on.setdefault(body["match"], {})[body["table"]] = body["why"]
        if kind == "result" and body.get("winner") is None and body.get("match", "").partition("/")[0] in self.tournaments:
            self.hub._note("match %s ended in a draw: a bracket needs a winner, which the host gives it (correct "
                           "the result)" % body["match"])
        self.update()

    def update(self) -> None:
        """Load new tournaments, feed new results, put ready matches on free tables, tell the pages."""
        for tid, setup in self.hub.state.tournaments.items():
            if tid not in self.tournaments:
                try:
                    self.tournaments[tid] = Tournament.from_setup(setup["setup"])
                except (SetupError, KeyError) as e:
                    self.hub._note("tournament %s cannot be set up again from the journal: %s" % (tid, e))
                    continue
                self._fed[tid] = 0
                self._feed_len = -1
        if self._feed_len != len(self.hub.state.feed):
            self._feed_len = len(self.hub.state.feed)
            for tid in self.tournaments:
                self._feed(tid)
        self._place()
        self._tell("changed", {})

    def _feed(self, tid: str) -> None:
        t = self.tournaments[tid]
        results = self.hub.state.bracket_results(tid)
        was = t.champion
        for r in results[self._fed[tid]:]:
            try:
                t.record(Result.from_dict(r))
            except AlreadyPlayed as e:
                if not e.duplicate:
                    self.hub._note("tournament %s: %s" % (tid, e))
            except ResultRefused as e:
                self.hub._note("tournament %s: a result not taken into the bracket: %s" % (tid, e))
        self._fed[tid] = len(results)
        if t.champion and t.champion != was and not self._loading:
            title = self.hub.state.tournaments[tid].get("title") or tid
            self._announce("%s win %s!" % (t.champion, title), None, None)

    def queued(self) -> list[tuple[str, Match]]:
        """Every ready match on no table, the tournaments in the order they were set up: (tid, match)."""
        out = []
        for tid, t in self.tournaments.items():
            for m in t.ready():
                if self._needs_table(venue_match(tid, m.id)):
                    out.append((tid, m))
        return out

    def _needs_table(self, vmid: str) -> bool:
        rec = self.hub.state.matches.get(vmid)
        if rec is None or rec["assign"] is None:
            return True
        if rec["result"] is not None or rec["corrections"]:
            return False  # it has a result the bracket did not take: noted, the host corrects it
        return rec["assign"]["table"] in self.refused_on.get(vmid, {})

    def _free(self, info: dict, vmid: str) -> list[str]:
        busy = {a["table"] for mid, a in self.hub.state.pending().items()
                if a["table"] not in self.refused_on.get(mid, {})}
        refused = self.refused_on.get(vmid, {})
        return [t for t, st in self.hub.table_states().items()
                if st["state"] == "idle" and t not in busy and t not in refused
                and (info.get("tables") is None or t in info["tables"])]

    def _place(self) -> None:
        last_at = self._last_tables()
        for tid, m in self.queued():
            free = self._free(self.hub.state.tournaments[tid], venue_match(tid, m.id))
            if free:
                # a table one of its teams just played at, else the first free one
                near = [x for x in free if x in [last_at.get(team) for team in _both(m)]]
                self._start(tid, m, (near or free)[0])

    def _last_tables(self) -> dict[str, str]:
        out = {}
        for rec in self.hub.state.matches.values():  # in the order they were first put on a table
            a = rec["assign"]
            if a is not None and (rec["result"] is not None or rec["corrections"]):
                for e in a["sides"].values():
                    if e.get("team"):
                        out[e["team"]] = a["table"]
        return out

    def _start(self, tid: str, m: Match, table: str, why: str = "") -> None:
        info = self.hub.state.tournaments[tid]
        t = self.tournaments[tid]
        players = {team.name: list(team.players) for team in t.teams}
        sides = {}
        for side, name in zip(info["sides"], _both(m), strict=True):
            entry: dict = {"team": name}
            if players.get(name):
                entry["players"] = players[name]
            sides[side] = entry
        vmid = venue_match(tid, m.id)
        self.hub.start_match(vmid, table, info["game"], info["options"], sides, game_seed(t.seed, m.id), tid)
        self._announce("%s: %s against %s" % (table_label(table), *_both(m)), table, vmid, why)

    def _announce(self, text: str, table: str | None, vmid: str | None, why: str = "") -> None:
        # ids only rise, across restarts too (the journal's last entry leads): the TV speaks each new one once
        last = self.announcements[-1]["id"] if self.announcements else 0
        a = {"id": max(self.hub.state.last * 1000, last + 1), "text": text, "table": table, "match": vmid, "why": why}
        self.announcements.append(a)
        del self.announcements[:-ANNOUNCEMENTS_KEPT]
        self._tell("announce", a)

    def _tell(self, kind: str, body: dict) -> None:
        for fn in list(self.listeners):
            try:
                fn(kind, body)
            except Exception as e:  # noqa: BLE001 -- a page or the speaker failing must not stop the night
                self.hub._note("a %s listener failed: %s: %s" % (kind, type(e).__name__, e))

    def _match(self, vmid: str) -> tuple[str, Tournament, Match]:
        tid, _, mid = str(vmid).partition("/")
        t = self.tournaments.get(tid)
        if t is None:
            raise UserError("no tournament %r (a match is named <tournament>/<match>, e.g. %s/W1-1)"
                            % (tid, next(iter(self.tournaments), "cup")))
        return tid, t, t.match(mid)


def _both(m: Match) -> tuple[str, str]:
    """A match's two teams, when both are known (a ready or played match's are)."""
    a, b = m.teams
    if a is None or b is None:
        raise UserError("%s is waiting for its teams (%s against %s)" % (m.id, *m.sources))
    return a, b


def _slug(title: str, taken) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:32] or "t"
    tid, n = base, 2
    while tid in taken or not TOURNAMENT_RE.match(tid):
        tid, n = "%s-%d" % (base, n), n + 1
    return tid
