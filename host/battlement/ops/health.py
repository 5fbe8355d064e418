"""What an operator sees of a bridge: its tasks, every counter by reason, the last rejected frames, each
board's heartbeat and health, which boards are online, whether each table signs, and the LED test.

A mixin of the Bridge (battlement.bridge), reading the parts the Bridge wires together, as the metrics
(battlement.ops.metrics) do: the host page, /api/health and `battlement monitor --bridge` show what it says.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from battlement.link.keys import TableKeys
from battlement.link.messages import Led
from battlement.link.transport.base import in_order
from battlement.ops.supervise import Supervisor
from battlement.table.journal import Journal
from battlement.table.maps import TableMap
from battlement.table.session import Session, shown_path

LED_TEST_SECONDS = 3.0  # how long the LED test blinks a board's lights


class Health:
    """The operator's view, mixed into the Bridge (which sets every attribute read here)."""

    # what the Bridge gives it (boards' watch and Home Assistant are neighbours' types: Any here)
    tmaps: dict[str, TableMap]
    sessions: dict[str, Session]
    transports: list
    names: dict[int, str]
    rejected: dict[str, collections.deque]
    beats: dict[tuple, dict]
    watch: Any
    hass: Any
    supervisor: Supervisor
    journal: Journal
    counters: dict[str, int]
    web_counters: dict[str, int]
    notes: list[str]
    keys: dict[str, TableKeys]  # each table's board keys, as the bridge found them
    mqtt: str | None
    _links: dict[str, dict]

    def _note(self, text: str) -> None:
        raise NotImplementedError  # the Bridge's

    def health(self) -> dict:
        """What an operator needs to see: tasks, every counter by reason, the last rejected frames,
        each board's last heartbeat (its outbox and how many events it dropped)."""
        transports = []
        for t in self.transports:
            name = self.names.get(id(t), type(t).__name__)
            transports.append({"name": name, "counters": dict(t.counters), "links": dict(t.links), "queued": t.queued(),
                               "paused": t.paused(),
                               "boards": [{"table": table, "board": board, "online": bool(t.online.get((table, board)))}
                                          for table, board in sorted(t.boards, key=in_order)],
                               "rejected": list(self.rejected.get(name, ()))})
        return {
            "tasks": self.supervisor.health(),
            "counters": dict(self.counters, **{"journal.row-errors": self.journal.errors,
                                               "journal.unfiled": self.journal.recent},
                             **{"journal." + k: v for k, v in self.journal.checkpoints.items()}),
            "transports": transports,
            "web": dict(self.web_counters),
            "router": {table: dict(s.router.counters) for table, s in self.sessions.items()},
            "tables": {table: dict(s.counters) for table, s in self.sessions.items()},
            "boards": sorted(self.beats.values(), key=lambda b: (b["table"], b["board"])),
            "board_health": self.board_health(),
            "notes": self.notes[-20:],
            "signing": {table: tk.line(bool(self.mqtt)) for table, tk in sorted(self.keys.items())},
            "hass": dict(self.hass.counters) if self.hass is not None else None,
        }

    def board_health(self) -> dict:
        return self.watch.report(self.tmaps, self.transports, self.names, self.beats)

    def link_of(self, table: str) -> dict:
        """How many of the table's boards are online (every page shows it beside "live")."""
        if table not in self._links:
            self._links[table] = self.watch.links({table: self.tmaps[table]}, self.transports)[table]
        return self._links[table]

    def _watch_links(self) -> None:
        """A board going offline or coming back changes no game: tell the pages all the same."""
        links = self.watch.links(self.tmaps, self.transports)
        for table, s in self.sessions.items():
            if self.hass is not None:  # Home Assistant sees each board's link as the bridge took it
                self.hass.boards(table)
            now = links[table]
            if self._links.get(table) != now:  # (the transport notes which board went offline)
                self._links[table] = now
                s._changed()

    def led_test(self, table: str, board: str) -> dict:
        """The health section's LED test: the board's lights blink white for a moment through the normal
        LED path, then show the game again."""
        tmap = self.tmaps.get(table)
        if tmap is None:
            return {"ok": False, "message": "this bridge serves no table %r" % table}
        if board not in tmap.boards:
            return {"ok": False, "message": "table %s has no board %r" % (table, board)}
        targets = sorted({o.led for o in tmap.objects.values() if o.led_board == board and o.led})
        if not targets:
            return {"ok": False, "message": "board %s has no lights on %s" % (board, shown_path(tmap.path))}
        s = self.sessions[table]
        for target in targets:
            s.effects.send(Led(board, target, "blink", 0xFFFFFF, 300, table))
        self._note("LED test: board %s/%s blinks its %d light%s for %.0f s" % (
            table, board, len(targets), "" if len(targets) == 1 else "s", LED_TEST_SECONDS))
        asyncio.get_running_loop().call_later(LED_TEST_SECONDS, s.forget_board, board)  # the game's lights back
        return {"ok": True, "message": "", "lights": len(targets)}
