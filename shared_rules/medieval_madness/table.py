"""Medieval Madness at the table: a presence sensor and a pixel at every space; the dice are typed
on the page (docs/rules/medieval-madness.md). Host side only (CPython); a board never loads it.
"""

from __future__ import annotations

from typing import ClassVar

from battlement.errors import UserError
from battlement.table.adapter import RED, WHITE, Ignore, TableAdapter

from shared_rules.engine import Illegal


def space_object(number: int) -> str:
    """The table-map object of a space: its number, as the rules and the page count."""
    return "space.%d" % number


class Table(TableAdapter):
    RELIGHT = frozenset(("turn", "miss"))
    # a pawn on a space where it does not belong: warn there, and show where it belongs when the
    # sensor knows whose pawn it is; pawn.ok puts both back as the view shows them
    CUE_LIGHTS: ClassVar[dict] = {"pawn.misplaced": [("space", "blink", RED, 250), ("want", "pulse", "player", 800)]}
    WARNINGS = frozenset(("pawn.misplaced",))
    CLEAR_WARNINGS = frozenset(("pawn.ok",))
    # the rulebook gives the pawns no colours: Player 1 red, 2 blue, 3 green, 4 yellow
    COLOURS: ClassVar[dict] = {"p1": 0xFF0000, "p2": 0x0040FF, "p3": 0x00C000, "p4": 0xFFC000}

    def objects(self, options):
        try:
            return {space_object(s["id"]): "presence" for s in self.rules.board_view(options)}
        except Illegal as e:  # a table built for a board file that is missing or wrong
            raise UserError("medieval-madness board: %s" % e.reason)

    def sense(self, state, obj, kind, value, at):
        # A pawn put down is checked against the banker's books. A pawn lifted means nothing: every
        # move lifts one, and the rules already know where each pawn went.
        if value != 1 or not obj.startswith("space."):
            return Ignore("ignored")
        return [{"t": "pawn", "space": int(obj[6:])}]

    def to_sensors(self, state, inp):
        if inp.get("t") == "pawn" and "player" not in inp:
            space = inp.get("space")
            if isinstance(space, int) and not isinstance(space, bool):
                return [(space_object(space), 1)]  # a presence sensor cannot say whose pawn: only a plain pawn
        return []

    def cue_objects(self, cue, name, objects):
        if isinstance(name, int) and not isinstance(name, bool):
            return [space_object(name)]  # cues name a space by its number
        return super().cue_objects(cue, name, objects)

    def lighting(self, view, objects):
        # every pawn's space glows in its player's colour; the space of the player whose turn it is
        # pulses, and wins when pawns share a space (the castle entrance, -1, has no LED)
        lit = {}
        turn = view.get("turn")
        players = sorted(view.get("players") or (), key=lambda p: (p.get("id") != turn, p.get("id")))
        for p in players:
            name = space_object(p.get("space", -1))
            if p.get("space", -1) >= 0 and name not in lit:
                rgb = self.COLOURS.get(p.get("id"), WHITE)
                lit[name] = ("pulse", rgb, 1000) if p.get("id") == turn else ("solid", rgb, 0)
        return lit

    def result(self, view, options):
        """Gold is the score; the title's rank breaks a tie."""
        players = [p for p in view.get("players") or () if isinstance(p, dict)]
        return {"score": {p["id"]: p["gold"] for p in players}, "tiebreak": {p["id"]: p["rank"] for p in players},
                "facts": {p["id"]: {"gold": p["gold"], "rank": p["rank"], "cottages": p["cottages"]} for p in players}}


def pawn_checks(view: dict) -> list[dict]:
    """A pawn put down on each space where a pawn belongs, for the page's sensor buttons (the rules
    never list pawn inputs among the legal ones: they do not move the game on)."""
    spaces = sorted({p["space"] for p in view.get("players") or () if p.get("space", -1) >= 0})
    return [{"t": "pawn", "space": n} for n in spaces]
