"""Ringo at the table: a presence sensor and a light under every cell and the castle
(docs/rules/ringo.md). Host side only (CPython); a board never loads it.
"""

from __future__ import annotations

from typing import ClassVar

from battlement.table.adapter import AMBER, GREEN, RED, WHITE, TableAdapter

from shared_rules.engine import Illegal, clone


class Table(TableAdapter):
    RELIGHT = frozenset(("move", "capture", "castle.entered", "turn", "miss"))
    # a piece lifted and put back: only the LEDs cues lit since the last redraw go back
    RESTORE = frozenset(("board.restored",))
    CUE_LIGHTS: ClassVar[dict] = {
        "move": [("from", "off", 0, 0), ("to", "solid", "side", 0)],
        "capture": [("from", "off", 0, 0), ("cell", "off", 0, 0), ("to", "solid", "side", 0)],
        "castle.entered": [("from", "off", 0, 0), ("castle", "blink", "side", 400)],
        "piece.lifted": [("cell", "blink", "side", 400), ("to", "pulse", GREEN, 1000)],
        "move.illegal": [("refill", "blink", RED, 250), ("clear", "blink", RED, 250)],
        "capture.remove": [("cells", "blink", AMBER, 400)],
    }
    COLOURS: ClassVar[dict] = {"attackers": 0xFF5000, "defenders": 0x0060FF}

    def objects(self, options):
        return {name: "presence" for name in self.rules.NAMES}

    def describe(self, inp, viewer):
        """A sensor change in words (an undo of a piece still in the air names it so)."""
        if inp.get("t") == "cell":
            return ("a piece put on %s" if inp.get("occupied") else "a piece lifted from %s") % inp.get("cell")
        return TableAdapter.describe(self, inp, viewer)

    def in_move(self, state):
        """Lifted and not yet put down: the lift and the place are one move (and one undo)."""
        return state.get("hand") is not None

    def sense(self, state, obj, kind, value, at):
        return [{"t": "cell", "cell": obj, "occupied": bool(value)}]

    def to_sensors(self, state, inp):
        """A cell input is its one sensor change. A move is found by playing it on a copy of the
        game and comparing the public boards: lift the piece, take off what it captured (out of the
        castle too), put it down (or into the castle)."""
        if inp.get("t") == "cell":
            return [(inp["cell"], 1 if inp["occupied"] else 0)]
        if inp.get("t") != "move":
            return []
        after = clone(state)
        try:
            self.rules.apply(after, inp)
        except Illegal:
            return []
        was, now = self.rules.view(state, None), self.rules.view(after, None)
        off = sorted(c for c in was["cells"] if now["cells"].get(c) != was["cells"][c] and c != inp["from"])
        steps = [(inp["from"], 0)] + [(c, 0) for c in off]
        if now["castle"] < was["castle"]:  # a defender's jump across the castle takes an attacker out of it
            steps.append(("castle", 0))
        return steps + [("castle" if now["castle"] > was["castle"] else inp["to"], 1)]

    def lighting(self, view, objects):
        lit = {}
        for cell, side in (view.get("cells") or {}).items():
            lit[cell] = ("solid", self.COLOURS.get(side, WHITE), 0)
        if view.get("castle"):
            lit["castle"] = ("solid", self.COLOURS["attackers"], 0)
        return lit

    def result(self, view, options):
        """Captures score; the pieces a side has left break a tie."""
        start = self.rules.start_board(options["attackers"])
        left = {"attackers": view["attackers"], "defenders": view["defenders"]}
        had = {"attackers": start.count("A"), "defenders": start.count("D")}
        captures = {s: had[o] - left[o] for s, o in (("attackers", "defenders"), ("defenders", "attackers"))}
        facts = {s: {"captures": captures[s], "pieces left": left[s]} for s in left}
        facts["attackers"]["in the castle"] = view["castle"]
        return {"score": captures, "tiebreak": left, "facts": facts}
