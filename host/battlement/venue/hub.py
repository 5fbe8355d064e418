"""The hub's side of the venue link: matches out to the tables, results in, both signed; what each table
says of itself. The hub process (`battlement venue`) runs one Hub on its event loop, with its journal.

Everything the hub is told or decides that must outlive it goes into its journal first (hubjournal.py)
and then into its state (players.py), so a hub killed at any moment starts again from identical state:

    hub.add("player", {"name": "Ann", "team": "Knights"})          players, teams, tournaments: add()
    hub.start_match("R1-M1", "hall-3", "ringo", {}, {"attackers": {"team": "Knights"}, ...})
    hub.correct("R1-M1", "defenders", why="the castle sensor saw a hand")

A match put on a table is sent to its bridge ("start") until the table answers "ready" or "refused":
every RESEND_EVERY, and at once when the table's status shows it is not playing it (a bridge that
restarted, or came back to the broker). A result is journalled once (keyed by its match id) and
acknowledged every time it comes, so a bridge that never heard the ack sends it again and it is not
counted again. A table whose bridge says nothing for DROPPED_AFTER is dropped: its match stays on it,
held, until it is back or the host moves the match (start_match again, on another table).

listeners get (kind, body) on the loop for what the pages show: "ready" and "refused" (the table's
message), "result" (the match's result as it counts now, VenueState.final, when it is new),
"status" (a table's status message) and "dropped" ({"table", "match"}).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable

from battlement.errors import UserError
from battlement.link.transport.mqtt import MqttTransport, check_id
from battlement.venue import players, protocol
from battlement.venue.hubjournal import HubJournal
from battlement.venue.players import VenueState
from battlement.venue.protocol import HUB, Receiver, Refused, Sender, down_topic, up_filter

log = logging.getLogger("battlement.venue")

TICK = 0.5  # seconds between looks at what to send again and which tables went silent
RESEND_EVERY = 3.0  # a start not yet answered goes again this often
DROPPED_AFTER = 15.0  # a table silent this long is dropped (its bridge says its status every 5 s)
NOTE_EVERY = 10.0  # a refused message is noted at most this often per reason (each one is counted)
NOTES_KEPT = 50


class Hub:
    def __init__(self, journal: HubJournal, url: str, venue: str, key: bytes, username: str | None = None,
                 password: str | None = None, tls: bool = False, tls_ca: str | None = None):
        self.journal = journal
        self.venue = check_id("venue", venue)
        self.state = VenueState.fold(journal.entries())
        self.counters: dict[str, int] = dict.fromkeys((
            "starts-sent", "ready", "refused-by-table", "results", "results-again", "results-elsewhere", "acks-sent",
            "status", "dropped", *("refused-" + r for r in protocol.REASONS)), 0)
        self.notes: list[str] = []
        self.tables: dict[str, dict] = {}  # table -> {"status": its last status message, "at": monotonic, "dropped"}
        self.refusals: dict[str, dict] = {}  # match -> the table's refusal of its latest assignment
        self.listeners: list[Callable[[str, dict], None]] = []
        self.sender = Sender(key, HUB, journal.counters("sent:").get(HUB, 0),
                             lambda n: journal.set_counters({"sent:" + HUB: n}))
        # The highest counter taken from each table is kept every TICK, not with each message: a status every
        # few seconds from each of a venue's tables would be as many fsyncs. What a crash forgets of the last
        # TICK could only be played back as what the hub takes once anyway (a result, a ready, a status).
        self.receiver = Receiver(key, journal.counters("seen:"), lambda name, n: self._seen_due.add(name))
        self._seen_due: set[str] = set()
        self.transport = MqttTransport(url, None, username, password, tls, tls_ca,
                                       client_id="battlement-venue-hub-" + uuid.uuid4().hex[:12])
        self.transport.hears_boards = False  # the hub reads no board's frames (and its login need not)
        self._sent_at: dict[str, float] = {}  # match -> when its start last went
        self._noted: dict[str, float] = {}
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        self.transport.subscribe_extra(up_filter(self.venue), self._message)
        self.transport.on_connected.append(self._resend)
        await self.transport.start()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.transport.stop()
        self._keep_seen()

    def _keep_seen(self) -> None:
        due, self._seen_due = self._seen_due, set()
        if due:
            self.journal.set_counters({"seen:" + name: self.receiver.seen[name] for name in due})

    # --- what the host decides -----------------------------------------------------------------

    def add(self, kind: str, body: dict, match: str | None = None) -> int:
        """Journal an entry (players.check refuses a bad one in words), then fold it in; its id."""
        players.check(kind, body)
        entry = self.journal.append(kind, body, match)
        if entry is None:
            raise UserError("match %s has a result already" % match)
        self.state.apply(entry, kind, body)
        return entry

    def start_match(self, match: str, table: str, game: str, options: dict, sides: dict, seed: int | None = None,
                    tournament: str | None = None) -> None:
        """Put a match on a table: journalled, then sent to the table's bridge until it answers. Again
        with another table: the match moves there (a table that dropped out)."""
        if self.state.final(match) is not None:
            raise UserError("match %s has a result already: correct it instead" % match)
        self.add("assign", {"match": match, "table": table, "game": game, "options": options, "sides": sides,
                            "seed": seed, "tournament": tournament}, match)
        self.refusals.pop(match, None)
        self._send_start(match)

    def correct(self, match: str, winner: str | None, why: str, score: dict | None = None) -> None:
        """The host's correction of a match's result (journalled with the host's words; the latest counts)."""
        final = self.state.final(match)
        sides = (final or {}).get("sides") or (self.state.matches.get(match, {}).get("assign") or {}).get("sides")
        if not sides:
            raise UserError("there is no match %s to correct" % match)
        if winner is not None and winner not in sides:
            raise UserError("match %s: the winner is one of its sides (%s), not %r" % (match, ", ".join(sorted(sides)),
                                                                                   winner))
        self.add("correct", {"match": match, "winner": winner, "score": score, "why": why}, match)
        self._tell("result", self.state.final(match) or {})

    def table_states(self) -> dict[str, dict]:
        """table -> {"state": its status's, or "dropped", "match", "boards": [online, total], "silent": seconds}."""
        now = time.monotonic()
        out = {}
        for table, t in sorted(self.tables.items()):
            st = t["status"]
            out[table] = {"state": "dropped" if t["dropped"] else st["state"], "match": st["match"],
                          "boards": st["boards"], "silent": round(now - t["at"], 1)}
        return out

    # --- what the tables say -------------------------------------------------------------------

    def _message(self, topic: str, payload: bytes) -> None:
        try:
            msg = self.receiver.open(topic, payload, lambda who, table: who == table)
        except Refused as e:
            self.counters["refused-" + e.reason] += 1
            now = time.monotonic()
            if now - self._noted.get(e.reason, -NOTE_EVERY) >= NOTE_EVERY:
                self._noted[e.reason] = now
                self._note("refused (%s): %s" % (e.reason, e))
            return
        table, t = msg["table"], msg["t"]
        if t == "status":
            self._status(table, msg)
            return
        if t not in ("ready", "refused", "result"):
            return
        assign = (self.state.matches.get(msg["match"]) or {}).get("assign")
        if t == "result":
            self._result(table, msg, assign)
        elif assign is None or assign["table"] != table:
            self._note("table %s says %s for match %s, which is not on it" % (table, t, msg["match"]))
        elif t == "ready":
            if self.state.matches[msg["match"]]["ready"] is None:
                self.add("ready", {"match": msg["match"], "table": table, "game_id": msg["game_id"]}, msg["match"])
                self.counters["ready"] += 1
            self._tell("ready", msg)
        else:
            self.counters["refused-by-table"] += 1
            self.refusals[msg["match"]] = msg
            self._note("table %s refused match %s: %s" % (table, msg["match"], msg["why"]))
            self._tell("refused", msg)

    def _result(self, table: str, msg: dict, assign: dict | None) -> None:
        mid = msg["match"]
        if assign is not None and assign["table"] != table:  # the match moved on: the table may stop sending it
            self.counters["results-elsewhere"] += 1
            self._note("table %s sent a result for match %s, which was moved to table %s: not taken"
                       % (table, mid, assign["table"]))
        else:
            body = {k: v for k, v in msg.items() if k not in ("v", "n", "from")}
            entry = self.journal.append("result", body, mid)  # committed before it is acknowledged
            if entry is None:
                self.counters["results-again"] += 1
            else:
                self.state.apply(entry, "result", body)
                self.counters["results"] += 1
                log.info("match %s on table %s: %s", mid, table, body["summary"])
                self._tell("result", self.state.final(mid) or {})
        self._send(table, protocol.ack(mid, table))
        self.counters["acks-sent"] += 1

    def _status(self, table: str, msg: dict) -> None:
        self.counters["status"] += 1
        was = self.tables.get(table)
        self.tables[table] = {"status": msg, "at": time.monotonic(), "dropped": False}
        if was is not None and was["dropped"]:
            self._note("table %s is back (%s)" % (table, msg["state"]))
        self._tell("status", msg)
        for mid, a in self.state.pending().items():  # a match on it that it is not playing: at once
            if a["table"] == table and msg["match"] != mid and (
                    self.state.matches[mid]["ready"] is None or msg["state"] == "idle"):
                self._send_start(mid)  # (idle after "ready": a bridge that lost its journal starts it anew)

    # --- out -------------------------------------------------------------------------------------

    def _send_start(self, mid: str) -> None:
        a = self.state.matches[mid]["assign"]
        refused = self.refusals.get(mid)
        if refused is not None and refused["table"] == a["table"]:
            return  # refused there: the host decides what next
        self._sent_at[mid] = time.monotonic()
        self._send(a["table"], protocol.start(mid, a["table"], a["game"], a["options"], a["sides"], a["seed"]))
        self.counters["starts-sent"] += 1

    def _send(self, table: str, msg: dict) -> None:
        topic = down_topic(self.venue, table)
        self.transport.publish_raw(topic, self.sender.seal(topic, msg), qos=1)

    def _resend(self) -> None:
        """After every (re)connect: every start not answered yet."""
        for mid in self.state.pending():
            if self.state.matches[mid]["ready"] is None:
                self._send_start(mid)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            self._keep_seen()
            now = time.monotonic()
            for mid in self.state.pending():
                if self.state.matches[mid]["ready"] is None and now - self._sent_at.get(mid, 0) >= RESEND_EVERY:
                    self._send_start(mid)
            for table, t in self.tables.items():
                if not t["dropped"] and now - t["at"] >= DROPPED_AFTER:
                    t["dropped"] = True
                    self.counters["dropped"] += 1
                    match = t["status"]["match"]
                    self._note("table %s went silent%s" % (table, ": match %s is held" % match if match else ""))
                    self._tell("dropped", {"table": table, "match": match})

    def _tell(self, kind: str, body: dict) -> None:
        for fn in list(self.listeners):
            try:
                fn(kind, body)
            except Exception as e:  # noqa: BLE001 -- a page's failure must not cost the venue its results
                self._note("a %s listener failed: %s: %s" % (kind, type(e).__name__, e))

    def _note(self, text: str) -> None:
        log.warning("venue %s: %s", self.venue, text)
        self.notes.append(text)
        del self.notes[:-NOTES_KEPT]
