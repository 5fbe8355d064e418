"""What a game's timing rules hold between events, kept in the journal: a mixin of the Session.

A timing rule (a tie window: two balls close together are one tie) may hold a sensor change for a
moment instead of playing it at once. The change is journalled on its own row, "held", in the commit after which its
board hears it acknowledged. When the rule lets it go (its window over, a later change released it, or
made one input of both: the tie), the input is written and that row settled ("input n") in one commit:
its own (board, boot, seq), never another event's. A bridge that stops inside the window (killed, or
a clean stop) leaves the row held: the next one rebuilds the rule at start by sensing those rows again
at the times they came, and plays each when its window ends, or at once if it ended meanwhile.
Nothing forgets a held change: an undo, a pause and a new game play it first. The turn's timeout
counts from the newest input journalled, so a restart neither starts it over nor loses it
(docs/rules/engine.md, "The table adapter").
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING

from battlement.link.messages import Event
from battlement.table.adapter import Ignore, TableAdapter
from battlement.table.journal import Journal
from battlement.table.matchlog import Match


class HeldInputs:
    """A mixin of Session: the sensor changes its game's timing rules hold, and the turn's timer."""

    # the session's, set by Session.__init__
    table: str
    journal: Journal
    adapter: TableAdapter
    match: Match
    game_id: int
    last_input_at: float
    _wake: asyncio.TimerHandle | None
    # (board, boot, seq, object) of each change the adapter holds, oldest first: the keys of their rows
    _held: list[tuple[str, int, int, str]]

    if TYPE_CHECKING:  # Session's own
        def apply(self, inp: dict, source: str = "page", event=None, held=()) -> dict: ...

    def _hold(self, ev: Event, obj: str) -> dict:
        """The adapter holds this change: journalled now on its own row, played when its window is over."""
        self._held.append((ev.board, ev.boot, ev.seq, obj))
        self.journal.write_event(self.table, ev, obj, "held")
        self._wake_at(self.adapter.deadline())
        return {"ok": True, "message": "held"}

    def _play(self, inputs: list[dict], event: tuple | None = None, source: str = "") -> dict:
        """Apply what the adapter handed out, each written with the events it stands for: first the
        held changes it let go (oldest first, one input each; the last input stands for those left, as
        a tie does for both balls), then the sensed change's own (event: (table, ev, object))."""
        gone = max(0, len(self._held) - self.adapter.holding())
        released, self._held = self._held[:gone], self._held[gone:]
        reply = {"ok": True, "message": ""}
        for i, inp in enumerate(inputs):
            last = i == len(inputs) - 1
            mine = released[i:] if last else released[i:i + 1]
            own = event if last or i >= len(released) else None
            keys = [(self.table, *h[:3]) for h in mine]
            reply = self.apply(inp, source=source if own else "sensor %s (held)" % (mine[0][3] if mine else "?"),
                               event=own, held=keys)
            if keys and not reply.get("n"):  # not written (the game was over): its rows say why
                for key in keys:
                    self.journal.settle_held(key, "not played: %s" % reply.get("message"))
        for h in () if inputs else released:  # let go with no input at all (an adapter's bug): never left held
            self.journal.settle_held((self.table, *h[:3]), "ignored: the timing rule let it go")
        return reply

    def apply_due(self, now: float | None = None) -> None:
        """Apply what a timing rule held once its window is over (now = inf: everything held)."""
        now = time.monotonic() if now is None else now
        due = self.adapter.due(self.match.state, now)
        if due or len(self._held) != self.adapter.holding():
            self._play(due)
        self._wake_at(self.adapter.deadline())

    def _release_held(self) -> None:
        """Play what is held now, whatever its window: it was sensed before an undo, a pause or a new
        game, which must not forget it."""
        if self._held or self.adapter.holding():
            self.apply_due(math.inf)

    def _wake_at(self, deadline: float | None) -> None:
        if deadline is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (a test driving the session by hand): the next event or tick applies it
        if self._wake is not None:
            self._wake.cancel()
        self._wake = loop.call_later(max(0.0, deadline - time.monotonic()) + 0.001, self.apply_due)

    def _rebuild_held(self) -> None:
        """At a resume: the adapter as it was, from the journal's rows still held. Each is sensed again
        at the host time it came (the wall clock's age of its row: a clock set back counts as now), so a
        window that ended while no bridge ran plays it at once."""
        self.adapter.reset()
        self._held = []
        now, wall = time.monotonic(), time.time()
        for board, boot, seq, kind, value, obj, at in self.journal.held_events(self.table):
            self._held.append((board, boot, seq, obj))
            out = self.adapter.sense(self.match.state, obj, kind, value, now - max(0.0, wall - at))
            if isinstance(out, Ignore):  # means nothing in the game as it stands now
                self._held.pop()
                self.journal.settle_held((self.table, board, boot, seq), "ignored (%s)" % out.counter)
            else:
                self._play(out)
        self.apply_due(now)

    def _resume_clock(self) -> None:
        """The turn's timeout counts from the newest input journalled, not from this start: a bridge
        restarted sooner than the timeout again and again still calls it (at its first tick, when it
        ran out while none ran)."""
        age = time.time() - self.journal.last_input_time(self.game_id)
        self.last_input_at = time.monotonic() - max(0.0, age)
