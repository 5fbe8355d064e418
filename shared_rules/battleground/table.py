"""Battleground at the table: a tilt switch in every figure, flag, brick and gate; the shot timeout
(docs/rules/battleground.md). Host side only (CPython); a board never loads it.
"""

from __future__ import annotations

from typing import ClassVar

from battlement.table.adapter import AMBER, WHITE, TableAdapter

from shared_rules.engine import complete_options


class Table(TableAdapter):
    RELIGHT = frozenset(("figure.out", "figure.revived", "flag.down", "brick.removed", "gate.down", "stood",
                         "shot.over", "flags.restand", "turn", "miss"))
    TIMEOUT = "over"  # the shot timeout: the shot is over, judge what fell
    CUE_LIGHTS: ClassVar[dict] = {"stand": [("piece", "pulse", AMBER, 800)]}  # "stand this piece back up"
    COLOURS: ClassVar[dict] = {"orcs": 0x20C000, "knights": 0xC0C0FF}

    def objects(self, options):
        # Every piece the largest army can field; required() asks only for the default army.
        bg_options: dict = self.rules.OPTIONS
        most = {k: max(bg_options[k]["choices"]) for k in ("warriors", "flags", "bricks")}
        state = self.rules.setup(complete_options(self.rules, most), 0)
        return {p: "tilt" for side in self.rules.SIDES for p in self.rules.tilt_pieces(state, side)}

    def required(self, options):
        state = self.rules.setup(complete_options(self.rules, {}), 0)
        return sorted(p for side in self.rules.SIDES for p in self.rules.tilt_pieces(state, side))

    def sense(self, state, obj, kind, value, at):
        return [{"t": "fell" if value else "stood", "piece": obj}]

    def to_sensors(self, state, inp):
        if inp.get("t") in ("fell", "stood"):
            return [(inp["piece"], 1 if inp["t"] == "fell" else 0)]
        return []

    def lighting(self, view, objects):
        down = set(view.get("down") or [])
        return {name: ("solid", self.COLOURS.get(name.split(".")[0], WHITE), 0) for name in objects if name not in down}

    def result(self, view, options):
        """Each side scores the other army's pieces it brought down; its own warriors left break a tie."""
        kinds = {"warrior": "figures down", "hero": "figures down", "flag": "flags down", "brick": "bricks down",
                 "gate": "gates down"}
        facts: dict = {s: dict.fromkeys(sorted(set(kinds.values())), 0) for s in self.rules.SIDES}
        for piece in view.get("down") or ():
            owner, _, name = piece.partition(".")
            fact = kinds.get(name.rstrip("0123456789"))
            for side, counted in facts.items():
                if side != owner and fact is not None:
                    counted[fact] += 1
        armies = view.get("armies") or {}
        return {"score": {s: sum(f.values()) for s, f in facts.items()},
                "tiebreak": {s: armies.get(s, {}).get("warriors_left", 0) for s in facts}, "facts": facts}
