"""Router: a sensed event -> the game object it belongs to -> the rule input it means.

The table map says which (board, sensor) is which object; the game's table adapter says what a
sensor change on one of its objects means, including timing rules (two changes close together
meaning one thing) and changes that mean nothing. Unknown boards and sensors are counted and
reported, never fatal.
"""

from __future__ import annotations

from battlement.link.messages import Event
from battlement.link.wire import BLIND, BLOCKED
from battlement.table.adapter import Ignore, TableAdapter
from battlement.table.maps import TableMap


class Router:
    """Maps events of one table; counts what it could not place and what meant nothing."""

    def __init__(self, tmap: TableMap, adapter: TableAdapter):
        self.tmap = tmap
        self.adapter = adapter
        self.counters: dict[str, int] = {}

    def _count(self, what: str) -> None:
        self.counters[what] = self.counters.get(what, 0) + 1

    def place(self, ev: Event, state: dict, at: float) -> tuple[str | None, list[dict] | None, str]:
        """(object, inputs, note). object None: not on the map; inputs None: the change means nothing;
        [] : held by a timing rule (the session asks the adapter for it when its window is over)."""
        obj = self.tmap.by_sensor.get((ev.board, ev.sensor))  # (only boards of the map have mapped sensors)
        if obj is None and ev.board not in self.tmap.boards:
            self._count("unknown-board")
            return None, None, "board %s is not on table %s's map (%s)" % (ev.board, self.tmap.table, self.tmap.path)
        if obj is None:
            self._count("unmapped-sensor")
            return None, None, "sensor %s/%s is not mapped to any object in %s" % (ev.board, ev.sensor, self.tmap.path)
        if ev.kind == BLIND:
            # No sensor timed it: never a ball by itself. The session asks the host page about it.
            self._count("blind")
            return obj, None, "%s: the board looked away for %d ms and cannot tell whether a ball went in" % (
                obj, ev.value)
        if ev.kind == BLOCKED:
            # Dark longer than any ball (a hand, a cup): never a ball, nor is its clearing. Board health shows it.
            self._count("blocked" if ev.value else "unblocked")
            return obj, None, "%s is blocked" % obj if ev.value else "%s is clear again" % obj
        out = self.adapter.sense(state, obj, ev.kind, ev.value, at)
        if isinstance(out, Ignore):
            self._count(out.counter)
            return obj, None, "%s: %s %d means nothing now (%s)" % (obj, ev.kind, ev.value, out.counter)
        return obj, out, ""
