"""Games set aside, any one taken up again by its id; a side page whose game is not the one in progress.

A new game, a switch of game or a resume leaves the game in progress unfinished in the journal ("abandoned
after n inputs"): nothing of it is lost. The host page lists every one with its id (the journal's), when it
started and was last played and how many inputs it has; "Resume this game" and `battlement run --resume ID`
take the one picked up again, and the game in progress is set aside in its turn. SetAside is a mixin of the
Session; the functions below it serve `battlement run`, which has a journal and no session yet.

A side's page code is its game's: each game draws new codes, kept in the journal with the game. So the code
of an open side page names the game it was made for: while the table plays another, that page is told which
game the table plays now and the names of its sides, never their codes (a page's holder must not learn
another side's), until the host takes its own game up again.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import shared_rules
from battlement.errors import UserError
from battlement.table.journal import Journal
from battlement.table.maps import TableMap
from battlement.table.matchlog import Match
from battlement.table.tokens import same

PAGE_LISTS = 30  # games set aside the host page lists, the latest first (`battlement run --list-games`: all)
SAID = 6  # games a one-line refusal names


def title_of(game: str) -> str:
    try:
        return shared_rules.load(game).TITLE
    except KeyError:  # a game this version no longer has: its name
        return game


def when(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else "-"


def words(g: dict, table: bool = False) -> str:
    """'12 (<its title>, started 2026-12-05 14:02, 50 inputs)'; table: with its table, for a journal of several."""
    return "%d (%s%s, started %s, %d input%s)" % (g["id"], title_of(g["game"]), ", table %s" % g["table"] if table
                                                   else "", when(g["started"]), g["inputs"], "" if g["inputs"] == 1 else "s")


def there_are(journal: Journal, table: str | None = None) -> str:
    """The games set aside, in a few words for a one-line refusal."""
    games = journal.set_aside(table)
    if not games:
        return "no game is set aside%s" % (" on table %s" % table if table else "")
    more = len(games) - SAID
    return "set aside: %s%s" % (", ".join(words(g, table is None) for g in games[:SAID]),
                                ", and %d more (battlement run --list-games)" % more if more > 0 else "")


def find(journal: Journal, game_id, table: str | None = None) -> dict:
    """The game with this id, set aside (its journal.set_aside() entry) or in progress ({"id", "table", "game",
    "playing": True}); a UserError of one line saying why not, naming the games there are, for any other."""
    if isinstance(game_id, bool) or not isinstance(game_id, int):
        raise UserError("a game's id is a whole number, as the host page and `battlement run --list-games` show it; "
                        "got %r" % (game_id,))
    row = journal.db.execute("SELECT tbl, game, finished, summary FROM games WHERE id=?", (game_id,)).fetchone()
    if row is None or table is not None and row[0] != table:
        raise UserError("no game %d set aside%s (%s)" % (game_id, " on table %s" % table if table else
                                                          " in %s" % journal.path, there_are(journal, table)))
    if row[2] is None:
        return {"id": game_id, "table": row[0], "game": row[1], "playing": True}
    aside = next((g for g in journal.set_aside(row[0]) if g["id"] == game_id), None)
    if aside is None:
        raise UserError("game %d is over (%s): only a game set aside can be resumed (%s)"
                        % (game_id, row[3], there_are(journal, table)))
    return aside


def listing(journal: Journal) -> list[str]:
    """`battlement run --list-games`: every game set aside, the latest first, and the games in progress."""
    games = journal.set_aside()
    out = ["Games set aside in %s, the latest first (battlement run --resume ID takes one up again):" % journal.path]
    out += ["  %5d  %s, table %s: started %s, %s%d input%s" % (
        g["id"], title_of(g["game"]), g["table"], when(g["started"]), "last played %s, " % when(g["last"])
        if g["last"] else "", g["inputs"], "" if g["inputs"] == 1 else "s") for g in games] or ["  (none)"]
    for gid, table, game in journal.db.execute("SELECT id, tbl, game FROM games WHERE finished IS NULL ORDER BY id"):
        out.append("In progress: %d, %s on table %s" % (gid, title_of(game), table))
    return out


class SetAside:
    """A mixin of Session: its table's games set aside, any one resumed by id, the side pages of other games."""

    # the session's, set by Session.__init__
    table: str
    tmap: TableMap
    journal: Journal
    match: Match
    game_id: int
    codes: dict[str, str]

    if TYPE_CHECKING:
        def resume_previous(self, prev: dict | None = None) -> dict: ...

    def set_aside_game(self, game_id) -> dict:
        """This table's game set aside with this id (UserError saying why not, and what there is)."""
        found = find(self.journal, game_id, self.table)
        if found.get("playing"):
            raise UserError("game %d is the game in progress" % game_id)
        return found

    def resume_game(self, game_id) -> dict:
        """Take up again the game set aside with this id (the host page's "Resume this game"): the game in
        progress is set aside in its turn. A game of another game: Bridge.resume_previous switches first."""
        try:
            return self.resume_previous(self.set_aside_game(game_id))
        except UserError as e:
            return {"ok": False, "message": str(e)}

    def set_aside_games(self) -> tuple[list[dict], int]:
        """The host page's list, the latest set aside first (PAGE_LISTS of them), and how many more there are.
        The list changes only when the game in progress does: kept until then, not read at every push."""
        kept = getattr(self, "_aside", None)
        if kept is None or kept[0] != self.game_id:
            games = self.journal.set_aside(self.table)
            for g in games:
                g.update(title=title_of(g["game"]), here=g["game"] == self.tmap.game)
            kept = self._aside = (self.game_id, games[:PAGE_LISTS], max(0, len(games) - PAGE_LISTS))
        return kept[1], kept[2]

    def code_game(self, side: str, code: str | None) -> dict | None:
        """The game of this table whose side `side` had this page code (the one in progress too), or None."""
        if not code or not isinstance(side, str):
            return None
        mark = "%s: %s" % (json.dumps(side), json.dumps(code))  # as the journal writes a game's codes
        for gid, game, codes, started, finished, summary in self.journal.db.execute(
                "SELECT id, game, codes, started, finished, summary FROM games WHERE tbl=? AND instr(codes, ?) > 0 "
                "ORDER BY id DESC", (self.table, mark)):
            if same(code, json.loads(codes).get(side)):
                return {"id": gid, "game": game, "title": title_of(game), "started": started,
                        "set_aside": finished is not None and (summary or "").startswith("abandoned")}
        return None

    def moved(self, side: str, mine: dict) -> dict:
        """What the page of `side` in game `mine` (code_game's), not the one in progress, is sent: its own game
        and what the table plays now, with the sides' names and never their codes."""
        players = self.match.view(None).get("players")
        names = [{"id": p["id"], "name": p["name"]} for p in players if isinstance(p, dict) and p.get("name")
                 ] if isinstance(players, list) else []
        return {"type": "moved", "table": self.table, "side": side, "mine": mine,
                "now": {"game": self.match.game.NAME, "title": self.match.game.TITLE, "sides": sorted(self.codes),
                        "players": names}}


def at_start(journal: Journal, game_id: int, tmaps: dict[str, TableMap], switchable) -> dict:
    """`battlement run --resume ID`: the game find() gives, checked against the tables this bridge serves
    (switchable(table): may it play another game) before anything starts; UserError in one line if it cannot."""
    g = find(journal, game_id)
    tmap = tmaps.get(g["table"])
    if tmap is None:
        raise UserError("game %d is of table %s, which this bridge does not serve (tables: %s)"
                        % (game_id, g["table"], ", ".join(sorted(tmaps))))
    if g["game"] != tmap.game and not switchable(g["table"]):
        raise UserError("game %d is %s, and table %s is built for %s (%s): its boards sense that game only"
                        % (game_id, title_of(g["game"]), g["table"], tmap.title, tmap.path))
    return g


def said_at_start(g: dict) -> str:
    """`battlement run`'s line about the game --resume named (at_start's, after Bridge.start)."""
    if g.get("playing"):
        return "game %d is the game in progress already: it goes on" % g["id"]
    reply = g.get("reply") or {}
    if not reply.get("ok"):
        return "game %d could not be taken up again: %s" % (g["id"], reply.get("message", "the bridge did not start"))
    return ("game %s of table %s, as --resume asked; the game it interrupted is set aside (battlement run "
            "--list-games)" % (words(g), g["table"]))
