"""A bridge's side of the venue link: the hub's match starts become games on its tables, and the end
the rules give each becomes a result the hub journals exactly once (docs/protocol.md, "Venue messages").

`battlement run --venue ID` attaches one to the bridge once it has started (cli/run.py): it listens
on the down topic of each table the bridge serves (a bridge hears only its own tables' starts, and
speaks only for them), and watches each table's session.

- start: a new game of the match's game and options on the table, its sides named (session.venue,
  shown on the table's pages), as the host page's new game makes one; "ready" goes back. A start
  resent for a match this bridge knows starts nothing: "ready" again, or its result again once over.
  A start the table cannot play (busy with another match, a game it is not built for, sides that are
  not the game's) is answered "refused", with why.
- the rules end the game: its result (the winner and the game's own numbers, TableAdapter.result) is
  written to the table journal in the same commit as the game's end, and sent once that commit is
  done; again every RESEND_EVERY and after every reconnect until the hub's "ack". A bridge killed
  in between finds it in its journal at start and sends it again: the hub takes a match's result
  once, and acknowledges every copy.
- status: each table's state (idle, playing, held: boards missing or the game set aside, over: a
  result not yet acknowledged) and boards online, on every change and every STATUS_EVERY.

What it keeps is in the table journal's progress rows of VENUE_PROGRESS: each match it took (by match
id: table, game id, sides, state, result), each table's current match, the highest counter taken
from the hub on each table and its own counters' floors (protocol.py).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time

import shared_rules
from battlement.errors import UserError
from battlement.link.transport.mqtt import MqttTransport
from battlement.table.adapter import adapter_for
from battlement.table.matchlog import Match
from battlement.table.views import sides_of
from battlement.venue import protocol
from battlement.venue.protocol import HUB, Receiver, Refused, Sender, down_topic, up_topic
from shared_rules.engine import Illegal

log = logging.getLogger("battlement.venue")

VENUE_PROGRESS = "(venue)"  # the journal's progress rows of the venue link, beside "(bridge)" and each table's
TICK = 0.5  # seconds between looks at each table's status and at results waiting for their ack
STATUS_EVERY = 5.0  # a table's status is said at least this often: the hub's sign that its bridge is there
RESEND_EVERY = 3.0  # a result not acknowledged goes again this often
NOTE_EVERY = 10.0  # a refused message is noted at most this often per reason (each one is counted)
COUNTERS = ("venue-starts", "venue-starts-again", "venue-refusals-sent", "venue-results", "venue-results-sent",
            "venue-acks") + tuple("venue-refused-" + r for r in protocol.REASONS)


def attach(bridge, venue: str, key: bytes) -> TableLink:
    """The venue link of a started bridge on MQTT (cli/run.py checks there is an MQTT transport)."""
    link = TableLink(bridge, venue, key)
    link.attach()
    return link


class TableLink:
    def __init__(self, bridge, venue: str, key: bytes):
        self.bridge, self.venue = bridge, venue
        self.journal = bridge.journal
        self.sessions = bridge.sessions
        self.mq = next(t for t in bridge.transports if isinstance(t, MqttTransport))
        self.counters = bridge.counters  # on /metrics and /api/health with the bridge's own
        for name in COUNTERS:
            self.counters.setdefault(name, 0)
        kept = self.journal.get_progress(VENUE_PROGRESS)
        self.records: dict[str, dict] = {k[6:]: v for k, v in kept.items() if k.startswith("match ")}
        self.current: dict[str, str] = {k[6:]: v for k, v in kept.items() if k.startswith("table ")}
        self.floors: dict[str, int] = kept.get("sent") or {}
        self.senders = {t: Sender(key, t, self.floors.get(t, 0), functools.partial(self._keep_floor, t))
                        for t in self.sessions}
        self.receiver = Receiver(key, kept.get("seen") or {}, self._keep_seen)
        self._said: dict[str, tuple[tuple, float]] = {}  # table -> (status, when) last said
        self._result_sent: dict[str, float] = {}  # match -> when its result last went
        self._noted: dict[str, float] = {}  # refusal reason -> when last noted

    def attach(self) -> None:
        for table, s in self.sessions.items():
            self.mq.subscribe_extra(down_topic(self.venue, table), self._message)
            s.listeners.append(self._changed)
            self._settle(table)
        self.mq.on_connected.append(self._say_all)
        self.bridge.supervisor.spawn("venue link", self._run)
        self._say_all()

    # --- keeping -------------------------------------------------------------------------------

    def _save(self, rec: dict) -> None:
        self.journal.set_progress(VENUE_PROGRESS, "match " + rec["match"], rec)
        self.journal.set_progress(VENUE_PROGRESS, "table " + rec["table"], rec["match"])

    def _keep_floor(self, table: str, n: int) -> None:
        self.floors[table] = n
        self.journal.set_progress(VENUE_PROGRESS, "sent", self.floors)

    def _keep_seen(self, _name: str, _n: int) -> None:
        self.journal.set_progress(VENUE_PROGRESS, "seen", self.receiver.seen)

    def _settle(self, table: str) -> None:
        """After a restart: the table's match as its journal left it. A game that ended without its result
        being written (a bridge killed between the two, off the batch) has it rebuilt from its inputs."""
        rec = self.records.get(self.current.get(table, ""))
        if rec is None or rec["state"] != "playing":
            return
        s = self.sessions[table]
        if s.game_id == rec["game_id"]:
            self._show(rec)
            return
        ended = self._replay(rec["game_id"])
        if ended is not None:
            self._ended(rec, ended)  # sent by _say_all, once attached

    def _replay(self, game_id: int) -> Match | None:
        """A finished game, replayed from the journal (None: not finished, or set aside)."""
        db = self.journal.db
        row = db.execute("SELECT game, options, seed, summary FROM games WHERE id=? AND finished IS NOT NULL",
                         (game_id,)).fetchone()
        if row is None or (row[3] or "").startswith("abandoned"):
            return None
        inputs = [json.loads(i) for (i,) in db.execute(
            "SELECT input FROM inputs WHERE game_id=? AND status IN ('ok', 'pending') ORDER BY n", (game_id,))]
        m = Match.restore(shared_rules.load(row[0]), {"options": json.loads(row[1]), "seed": row[2], "inputs": inputs})
        return m if m.over else None

    # --- the hub's messages --------------------------------------------------------------------

    def _message(self, topic: str, payload: bytes) -> None:
        try:
            msg = self.receiver.open(topic, payload, lambda who, table: who == HUB and table in self.sessions)
        except Refused as e:
            self.counters["venue-refused-" + e.reason] += 1
            now = time.monotonic()
            if now - self._noted.get(e.reason, -NOTE_EVERY) >= NOTE_EVERY:
                self._noted[e.reason] = now
                self.bridge._note("venue %s: refused (%s): %s" % (self.venue, e.reason, e))
            return
        if msg["t"] == "start":
            self._start(msg["table"], msg)
        elif msg["t"] == "ack":
            self._ack(msg["table"], msg["match"])

    def _start(self, table: str, msg: dict) -> None:
        mid, s = msg["match"], self.sessions[table]
        rec = self.records.get(mid)
        if rec is not None:
            if rec["table"] != table:
                return self._refuse(table, mid, "match %s is on table %s" % (mid, rec["table"]))
            self.counters["venue-starts-again"] += 1
            if rec["state"] != "playing":
                return self._send_result(rec)  # over: its result again, which the hub acknowledges again
            if s.game_id != rec["game_id"]:  # its game was set aside on the host page: taken up again
                r = self.bridge.resume_previous(table, rec["game_id"])
                if not r.get("ok"):
                    return self._refuse(table, mid, "its game was set aside and cannot be taken up: " + r["message"])
                self._show(rec)
            return self._send(table, protocol.ready(mid, table, rec["game"], rec["game_id"], rec["sides"]))
        busy = self.records.get(self.current.get(table, ""))
        if busy is not None and busy["state"] == "playing" and busy["game_id"] == s.game_id and not s.match.over:
            return self._refuse(table, mid, "table %s is playing match %s" % (table, busy["match"]))
        problem = self._sides_problem(table, msg)
        if problem:
            return self._refuse(table, mid, problem)
        try:
            self.bridge.new_game(table, msg["game"], msg["options"], msg["seed"])
        except UserError as e:
            return self._refuse(table, mid, str(e))
        rec = {"match": mid, "table": table, "game": msg["game"], "game_id": s.game_id, "sides": msg["sides"],
               "state": "playing", "result": None}
        self.records[mid], self.current[table] = rec, mid
        self._save(rec)
        self._show(rec)
        self.counters["venue-starts"] += 1
        log.info("table %s plays match %s: %s", table, mid, s.venue["title"])
        self._send(table, protocol.ready(mid, table, rec["game"], rec["game_id"], rec["sides"]))
        self._say(table, force=True)

    def _sides_problem(self, table: str, msg: dict) -> str | None:
        """The sides a start names must be the game's, with these options."""
        game = msg["game"]
        try:
            mod = shared_rules.load(game)
        except KeyError:
            return "unknown game %r (games: %s)" % (game, ", ".join(shared_rules.GAMES))
        s = self.sessions[table]
        options = dict(s.tmap.options if s.tmap.game == game else {}, **msg["options"])
        try:
            sides = sides_of(Match(mod, options, 0))
        except Illegal as e:
            return "new %s game: %s" % (game, e.reason)
        if sorted(msg["sides"]) != sides:
            return "a %s game with these options has the sides %s, not %s" % (game, ", ".join(sides),
                                                                            ", ".join(sorted(msg["sides"])))
        return None

    def _show(self, rec: dict) -> None:
        """The table's pages name the match's sides."""
        s = self.sessions[rec["table"]]
        names = {side: protocol.side_name(side, e) for side, e in rec["sides"].items()}
        s.venue = {"venue": self.venue, "match": rec["match"], "game_id": rec["game_id"], "sides": rec["sides"],
                   "names": names, "title": " against ".join(names[side] for side in sorted(names))}
        s._changed()

    def _refuse(self, table: str, mid: str, why: str) -> None:
        self.counters["venue-refusals-sent"] += 1
        self.bridge._note("venue %s: match %s refused on table %s: %s" % (self.venue, mid, table, why))
        self._send(table, protocol.refused(mid, table, why))

    def _ack(self, table: str, mid: str) -> None:
        rec = self.records.get(mid)
        if rec is None or rec["table"] != table or rec["state"] != "over":
            return  # an ack again (the hub acknowledges every copy of a result)
        rec["state"] = "acked"
        self._save(rec)
        self.counters["venue-acks"] += 1
        self._say(table, force=True)

    # --- the rules end a game ------------------------------------------------------------------

    def _changed(self, session, fx: list) -> None:
        """Every session change (its listener): a venue match's game over is its result. Cheap otherwise."""
        if not session.match.over:
            return
        rec = self.records.get(self.current.get(session.table, ""))
        if rec is None or rec["state"] != "playing" or rec["game_id"] != session.game_id:
            return
        self._ended(rec, session.match)
        asyncio.get_running_loop().call_soon(self._send_result, rec)  # once the batch's commit is done

    def _ended(self, rec: dict, match) -> None:
        """The result, journalled now: in the pump's batch, in the commit of the game's end."""
        winner = match.state["winner"]
        try:
            numbers = adapter_for(match.game).result(match.view(None), match.options)
        except Exception as e:  # noqa: BLE001 -- a game's counting must never cost the match its result
            numbers = {}
            self.bridge._note("venue %s: %s could not count match %s: %s: %s" % (
                self.venue, rec["game"], rec["match"], type(e).__name__, e))
        summary = "%s: %s after %d inputs" % (
            match.game.TITLE, ("%s won" % protocol.side_name(winner, rec["sides"].get(winner))) if winner else "draw",
            len(match.inputs))
        result = protocol.result(rec["match"], rec["table"], rec["game"], rec["game_id"], rec["sides"], winner,
                                 numbers, summary)
        problem = protocol.check(result, rec["table"])
        if problem:  # what the hub would refuse for ever: the winner and the summary still go
            self.bridge._note("venue %s: match %s's numbers left out: %s" % (self.venue, rec["match"], problem))
            result = protocol.result(rec["match"], rec["table"], rec["game"], rec["game_id"], rec["sides"],
                                     winner if winner in rec["sides"] else None, {}, summary)
        rec["state"], rec["result"] = "over", result
        self._save(rec)
        self.counters["venue-results"] += 1

    def _send_result(self, rec: dict) -> None:
        if rec["state"] == "playing":
            return
        self._result_sent[rec["match"]] = time.monotonic()
        self.counters["venue-results-sent"] += 1
        self._send(rec["table"], rec["result"])

    # --- out ------------------------------------------------------------------------------------

    def _send(self, table: str, msg: dict) -> None:
        topic = up_topic(self.venue, table)
        self.mq.publish_raw(topic, self.senders[table].seal(topic, msg), qos=1, urgent=True)  # before LEDs

    def status(self, table: str) -> tuple:
        """(state, match, boards online, boards) of a table, as its status message says them."""
        s = self.sessions[table]
        rec = self.records.get(self.current.get(table, ""))
        link = self.bridge.link_of(table)
        online, boards = link["online"], link["boards"]
        if rec is None or rec["state"] == "acked":
            return ("idle", None, online, boards)
        if rec["state"] == "over":
            return ("over", rec["match"], online, boards)
        held = online < boards or s.game_id != rec["game_id"] or s.paused
        return ("held" if held else "playing", rec["match"], online, boards)

    def _say(self, table: str, force: bool = False) -> None:
        now = time.monotonic()
        st = self.status(table)
        said = self._said.get(table)
        if force or said is None or said[0] != st or now - said[1] >= STATUS_EVERY:
            self._said[table] = (st, now)
            self._send(table, protocol.status(table, *st))

    def _say_all(self) -> None:
        """After every (re)connect: each table's status, and every result not yet acknowledged."""
        for table in sorted(self.sessions):
            self._say(table, force=True)
        for rec in self.records.values():
            if rec["state"] == "over":
                self._send_result(rec)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            now = time.monotonic()
            for table in sorted(self.sessions):
                self._say(table)
            for rec in list(self.records.values()):
                if rec["state"] == "over" and now - self._result_sent.get(rec["match"], 0) >= RESEND_EVERY:
                    self._send_result(rec)
