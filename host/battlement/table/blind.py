"""Blind breaks: a ball a board could not see for sure, asked of the host page.

A board that something held for a moment (an ESP32's garbage collection, a flash write, a wait on its
USB port) cannot tell whether a ball broke a beam meanwhile, so such a break is never a ball by itself: the
host page asks the one person who saw it, and a "yes" plays exactly what the sensor's ball would
have. Kept apart from session.py because only a blind event comes here: the sensed -> apply path of
every other event does not pass through it. Session inherits BlindQuestions and keeps its state
(`blind`, `_blind_events`) and the journal they are written to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from battlement.link.messages import Event
from battlement.table.journal import Journal
from battlement.table.matchlog import Match

KEEP_BLIND = 20  # open questions about breaks a board could not time (the oldest go first, counted)


class BlindQuestions:
    """The host page's questions about breaks a board could not time (a mixin of Session)."""

    # the session's, set by Session.__init__
    table: str
    journal: Journal
    match: Match
    counters: dict[str, int]
    blind: list[dict]
    _blind_events: dict[str, Event]

    if TYPE_CHECKING:  # Session's own
        def sensed(self, ev: Event, at: float | None = None, source: str | None = None) -> dict: ...
        def _changed(self, fx: list | None = None) -> None: ...

    def _ask_blind(self, ev: Event, obj: str, note: str) -> dict:
        """A beam's break its board could not time: never a ball by itself; the host page asks a person
        (the only one who saw it), and only the host page: a question about a sensor is not the players'."""
        self.journal.write_event(self.table, ev, obj, "asked")  # open until close_question()
        self._question(ev, obj)
        while len(self.blind) > KEEP_BLIND:
            gone = self.blind.pop(0)
            self._close_blind(self._blind_events.pop(gone["id"]), "unanswered: more than %d questions open"
                              % KEEP_BLIND)
            self.counters["blind-unanswered"] = self.counters.get("blind-unanswered", 0) + 1
        self._changed()
        return {"ok": True, "message": "asked: " + note}

    def _question(self, ev: Event, obj: str) -> None:
        """Put the question about a blind break to the host page (asked now, or still open at a restart)."""
        qid = "%s-%x-%d" % (ev.board, ev.boot, ev.seq)  # the event's own name: a board's seq is once per boot
        if qid in self._blind_events:
            return
        # In a player's words: what happened, and the one thing to answer about the object they can see.
        text = "The board looked away for a moment (%d ms): did a ball go into %s (%s, %s)?" % (
            ev.value, ev.sensor, self.match.game.TITLE, obj)
        self.blind.append({"id": qid, "object": obj, "board": ev.board, "sensor": ev.sensor, "ms": ev.value,
                           "ask": text})
        self._blind_events[qid] = ev

    def _close_blind(self, ev: Event, outcome: str) -> None:
        self.journal.close_question(self.table, ev.board, ev.boot, ev.seq, outcome)

    def _drop_blind(self, why: str) -> None:
        """The open questions go unanswered (another game now): never asked again, after a restart neither."""
        for ev in self._blind_events.values():
            self._close_blind(ev, "unanswered: " + why)
        self.blind, self._blind_events = [], {}

    def answer_blind(self, qid, ball: bool, source: str = "host page") -> dict:
        """The host's answer to a blind question: yes plays exactly what the sensor's ball would have
        (the adapter's own sense path, journalled, undoable); no dismisses it. Either is journalled, so
        a restart asks again only what no one answered."""
        ev = self._blind_events.pop(qid, None) if isinstance(qid, str) else None
        if ev is None:
            return {"ok": False, "message": "no open question %r about an untimed break (answered already?)" % (qid,)}
        self.blind = [q for q in self.blind if q["id"] != qid]
        key = "blind-yes" if ball else "blind-no"
        self.counters[key] = self.counters.get(key, 0) + 1
        if not ball:
            self._close_blind(ev, "answered: no ball")
            self._changed()
            return {"ok": True, "message": ""}
        ball_ev = Event(ev.table, ev.board, ev.boot, ev.seq, ev.sensor, "beam", 1, ev.t_us, ev.width_us)
        # The ball's event and input are one commit, and that event alone settles the question on a
        # restart (Journal.open_questions); the mark after it says so in words.
        reply = self.sensed(ball_ev, source="%s (a ball on %s, untimed)" % (source, ev.sensor))
        self._close_blind(ev, "answered: a ball")
        self._changed()
        return reply
