"""PlingPong at the table: a beam in every cup (docs/rules/plingpong.md). Host side only (CPython)."""

from __future__ import annotations

from typing import ClassVar

from battlement.table.adapter import WHITE, Ignore, TableAdapter


class Table(TableAdapter):
    RELIGHT = frozenset(("cup.removed", "cup.add", "rack", "round", "back", "turn", "miss"))
    TIMEOUT = "miss"  # a throw with no ball in before the timeout
    CUE_LIGHTS: ClassVar[dict] = {"cup.add": [("cup", "pulse", "colour", 800)]}  # "add a cup here", in the cup's colour
    COLOURS: ClassVar[dict] = {"red": 0xFF0000, "blue": 0x0040FF, "green": 0x00C000, "yellow": 0xFFC000, "black": 0x8000FF}

    def objects(self, options):
        return {c["cup"]: "beam" for c in self.rules.table({"players": 4})}

    def required(self, options):
        return sorted(c["cup"] for c in self.rules.table(options or {}))

    def sense(self, state, obj, kind, value, at):
        if kind != "beam" or value != 1:
            return Ignore("ignored")
        return [{"t": "ball", "cup": obj}]

    def to_sensors(self, state, inp):
        if inp.get("t") == "ball" and "cup" in inp:
            return [(inp["cup"], 1)]
        return []

    def lighting(self, view, objects):
        # every space that holds a cup shows the cup's colour; the Black Cup is always lit
        lit = {}
        for row in (view.get("trays") or {}).values():
            for space in row:
                if space.get("height"):
                    lit[space["cup"]] = ("solid", self.COLOURS.get(space.get("colour"), WHITE), 0)
        lit["black"] = ("solid", self.COLOURS["black"], 0)
        return lit

    def result(self, view, options):
        """The cups a side has left on the table are its score and its tiebreak."""
        cups = {s: v["cups"] for s, v in (view.get("sides") or {}).items()}
        return {"score": cups, "tiebreak": dict(cups), "facts": {s: {"cups left": n} for s, n in cups.items()}}
