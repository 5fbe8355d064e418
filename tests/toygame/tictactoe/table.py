"""Tic-tac-toe with a curse at the table: a presence sensor and a light under each cell."""

from __future__ import annotations

from typing import ClassVar

from battlement.table.adapter import AMBER, WHITE, Ignore, TableAdapter


class Table(TableAdapter):
    RELIGHT = frozenset(("piece", "cursed", "turn"))
    CUE_LIGHTS: ClassVar[dict] = {"cursed": [("cell", "blink", AMBER, 300)]}
    COLOURS: ClassVar[dict] = {"x": 0xFF0000, "o": 0x0040FF, "stone": AMBER}
    PRIVATE = ("curse",)  # where a side hides its curse: only its own page

    def objects(self, options):
        return {c: "presence" for c in self.rules.CELLS}

    def sense(self, state, obj, kind, value, at):
        if not value:
            return Ignore("piece-lifted")  # pieces are never taken back in this game
        return [{"t": "cell", "cell": obj, "occupied": True}]

    def to_sensors(self, state, inp):
        return [(inp["cell"], 1)] if inp.get("t") == "cell" else []

    def lighting(self, view, objects):
        return {c: ("solid", self.COLOURS.get(who, WHITE), 0) for c, who in view.get("cells", {}).items()}

    def describe(self, inp, viewer):
        if inp.get("t") == "curse":
            return "your curse on %s" % inp["cell"] if inp["by"] == viewer else "%s's curse" % inp["by"].upper()
        return "a piece on %s" % inp.get("cell")
