"""Router: a sensed event -> the game object it belongs to -> the rule input it means.

The table map says which (board, sensor) is which object; each game says what a
sensor change on one of its objects means (a beam in tower red.B2 -> "ball in
tower B2 of red"; a presence change on cell b5 -> cell b5 occupied/vacated; a
tilt on orcs.warrior3 -> it fell / stood; a pawn put down on space.12 -> check that a
pawn belongs there). Unknown boards and sensors are
counted and reported, never fatal.
"""

from __future__ import annotations

from battlement.messages import Event
from battlement.tables import TableMap, space_object
from shared_rules.medieval_pong.switches import switch_input, switch_of


def _pong(obj: str, kind: str, value: int):
    if obj.count(".") == 2:
        # a tower's fall or roof switch: only a roof switch opening is a roof tipping over
        return switch_input(obj, value == 1)
    if value != 1:
        return None  # a completed ball pulse
    side, tower = obj.split(".", 1)
    return {"t": "ball", "side": side, "tower": tower}


def _ringo(obj: str, kind: str, value: int):
    return {"t": "cell", "cell": obj, "occupied": bool(value)}


def _battleground(obj: str, kind: str, value: int):
    return {"t": "fell" if value else "stood", "piece": obj}


def _plingpong(obj: str, kind: str, value: int):
    if kind != "beam" or value != 1:
        return None
    return {"t": "ball", "cup": obj}


def _madness(obj: str, kind: str, value: int):
    # A pawn put down is checked against the banker's books. A pawn lifted means nothing: every
    # move lifts one, and the rules already know where each pawn went (docs/rules/medieval-madness.md).
    if value != 1 or not obj.startswith("space."):
        return None
    return {"t": "pawn", "space": int(obj[6:])}


# game -> (object, sensor kind, value) -> input, or None for a change that means nothing
TO_INPUT = {"medieval-pong": _pong, "ringo": _ringo, "battleground": _battleground, "plingpong": _plingpong,
            "medieval-madness": _madness}


def to_sensor(game: str, inp: dict):
    """The inverse: which object and value a sensed input comes from (the page's sensor buttons)."""
    t = inp.get("t")
    if game == "medieval-pong" and t == "ball" and "tower" in inp:
        return "%s.%s" % (inp["side"], inp["tower"]), 1
    if game == "ringo" and t == "cell":
        return inp["cell"], 1 if inp["occupied"] else 0
    if game == "battleground" and t in ("fell", "stood"):
        return inp["piece"], 1 if t == "fell" else 0
    if game == "plingpong" and t == "ball" and "cup" in inp:
        return inp["cup"], 1
    if game == "medieval-madness" and t == "pawn" and "player" not in inp:
        space = inp.get("space")
        if isinstance(space, int) and not isinstance(space, bool):
            return space_object(space), 1  # a presence sensor cannot say whose pawn: only a plain pawn
    return None


def pawn_checks(game: str, view: dict) -> list[dict]:
    """Medieval Madness: a pawn put down on each space where a pawn belongs, for the page's sensor
    buttons (the rules never list pawn inputs among the legal ones: they do not move the game on)."""
    if game != "medieval-madness":
        return []
    spaces = sorted({p["space"] for p in view.get("players") or () if p.get("space", -1) >= 0})
    return [{"t": "pawn", "space": n} for n in spaces]


def to_sensors(game: str, state: dict, inp: dict) -> list[tuple[str, int]]:
    """The sensor changes a player's hand makes for an input: [(object, value)], [] if none.

    Every sensed input is its one sensor change. A Ringo move is found by playing it on a copy
    of the game and comparing the public boards: lift the piece, take off what it captured, put
    it down (or into the castle).
    """
    one = to_sensor(game, inp)
    if one is not None:
        return [one]
    if game == "medieval-pong" and inp.get("t") == "tilt" and "tower" in inp:
        obj, opened = switch_of(inp)
        return [(obj, 1 - opened), (obj, opened)]  # a roof switch closes as the roof is set, opens as it tips
    if game == "ringo" and inp.get("t") == "move":
        import shared_rules
        from shared_rules.engine import Illegal, clone

        rules = shared_rules.load(game)
        after = clone(state)
        try:
            rules.apply(after, inp)
        except Illegal:
            return []
        was, now = rules.view(state, None), rules.view(after, None)
        off = sorted(c for c in was["cells"] if now["cells"].get(c) != was["cells"][c] and c != inp["from"])
        steps = [(inp["from"], 0)] + [(c, 0) for c in off]
        return steps + [("castle" if now["castle"] > was["castle"] else inp["to"], 1)]
    return []


class Router:
    """Maps events of one table; counts what it could not place."""

    def __init__(self, tmap: TableMap):
        self.tmap = tmap
        self.counters: dict[str, int] = {}

    def _count(self, what: str) -> None:
        self.counters[what] = self.counters.get(what, 0) + 1

    def place(self, ev: Event) -> tuple[str | None, dict | None, str]:
        """(object, input, note). object None: not on the map; input None: nothing to apply."""
        if ev.board not in self.tmap.boards:
            self._count("unknown-board")
            return None, None, "board %s is not on table %s's map (%s)" % (ev.board, self.tmap.table, self.tmap.path)
        obj = self.tmap.by_sensor.get((ev.board, ev.sensor))
        if obj is None:
            self._count("unmapped-sensor")
            return None, None, "sensor %s/%s is not mapped to any object in %s" % (ev.board, ev.sensor, self.tmap.path)
        conv = TO_INPUT.get(self.tmap.game)
        inp = conv(obj, ev.kind, ev.value) if conv else None
        if inp is None:
            self._count("ignored")
            return obj, None, "%s: %s %d means nothing in %s" % (obj, ev.kind, ev.value, self.tmap.game)
        return obj, inp, ""
