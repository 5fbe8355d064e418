"""Intake of a board's frames, once through the door (Transport._handle_line): signatures, hello and
resync, exactly-once events and their acknowledgements, and the fast parser of the everyday frame.

Resync before accept: an event counts as new only once its board's hello (for that boot) has said
where it stands (`acked`); events that come before it are held, the board is pinged, and its
answer (ack, hello, then its whole outbox oldest first) brings them in order.

Split from base.py so each file stays short. A mixin, not a helper object, because this is the
per-event hot path: Transport inherits it, so a call here costs the same method lookup as before.
It holds no state of its own: everything it uses is set in Transport.__init__ (declared below for
the type checker), and base.py imports it, never the other way round.
"""

from __future__ import annotations

import dataclasses
import re
import time
from typing import TYPE_CHECKING

from battlement.link import wire
from battlement.link.inbox import DUP
from battlement.link.messages import EvAck, Event, Hello, Ping, declared_kind, to_frame

if TYPE_CHECKING:
    import asyncio

    from battlement.link.inbox import Inbox

# The everyday frame, a well-formed event, in one regex match (its CRC too) instead of the general
# decoder's per-field checks; anything it does not match (a bad CRC, a number out of range) takes the
# general path, which names the reason. It accepts exactly what wire.decode accepts for an event.
_ID = rb"([a-z0-9-]{1,32})"
_NUM = rb"(0|[1-9][0-9]{0,9})"
_EVENT = re.compile(rb"(event %s ([1-9a-f][0-9a-f]{0,7}) ([1-9][0-9]{0,9}) %s (%s) ([01]) %s %s(?: ~[0-9a-f]{16})?)"
                    rb"\*([0-9a-f]{8})\r?\n?" % (_ID, _ID, "|".join(wire.KINDS).encode(), _NUM, _NUM))

EVACK_DELAY = 0.01  # seconds: acknowledgements are coalesced, at most one per board per 10 ms
PING_EVERY = 0.5  # seconds: how often to ask an unknown board for its hello
PENDING_MAX = 1000  # events held per board while waiting for its hello
GAP_NOTE_EVERY = 1.0  # seconds: gaps of one board noted at most this often (all are counted)
STUCK_PING = 1.0  # seconds: how often to ask a board resending past a hole where it stands


class Intake:
    """What Transport does with a board's frame once _handle_line has let it in."""

    evack_delay = EVACK_DELAY  # seconds acknowledgements are coalesced for (MqttTransport: longer)

    # Transport's state and helpers this uses (set and defined in base.py), for the type checker only.
    boards: dict[tuple, Hello]
    inbox: Inbox
    signed: set[str | None]
    keys: dict[tuple, bytes]
    acks_on_commit: bool
    acknowledges: bool
    _loop: asyncio.AbstractEventLoop | None
    _msgid: int
    _committed: dict[tuple, tuple[int, int]]
    _route: dict[tuple, object]
    _pending: dict[tuple, list[Event]]
    _sensors: dict[tuple, dict[str, str]]
    _pinged: dict[tuple, float]
    _stuck_pinged: dict[tuple, float]
    _gaps: dict[tuple, tuple[int, float]]
    _unsynced: set[tuple]
    _evack_due: set[tuple]
    _evack_timer: asyncio.TimerHandle | None

    if TYPE_CHECKING:
        def _note(self, text: str) -> None: ...
        def _count(self, reason: str, n: int = 1) -> None: ...
        def _reject(self, reason: str, where, detail: str = "") -> None: ...
        def _set_online(self, key: tuple, up: bool) -> None: ...
        def _deliver(self, msg, ack: tuple | None = None) -> None: ...
        def _put(self, msg, ack) -> None: ...
        def _out(self, link, table: str | None, board: str, frame: bytes, boot: int | None = None) -> None: ...
        # boots.py's (Boots, the other mixin of Transport)
        def _mac_table(self, key: tuple) -> str | None: ...
        def _say(self, what: str, key: tuple, text: str) -> None: ...
        def _v2(self, line: bytes, key: tuple, boot: int | None) -> None: ...
        def _booted(self, key: tuple, boot: int) -> None: ...
        def _said_offline(self, key: tuple, boot: int) -> bool: ...

    def _authentic(self, line: bytes, table: str | None, board: str, boot: int | None, link) -> bool:
        """A board with a key, or of a signed table, must send the MAC of its key over its table, its id and
        this boot (else counted: mac); any other board is heard as it comes (its table is unsigned: its map's
        choice)."""
        key = self.keys.get((table, board))
        if key is None:
            if table not in self.signed:
                return True
            self._reject(wire.R_MAC, link, "no key for board %s" % board)
            return False
        if boot is not None and wire.verify(line, key, self._mac_table((table, board)), board, boot):
            return True
        if b" ~" not in line:
            self._unsigned(table, board)
        else:
            self._v2(line, (table, board), boot)
        self._reject(wire.R_MAC, link, "no valid MAC for board %s" % board)
        return False

    def _unsigned(self, table: str | None, board: str) -> None:
        """A board that has a key heard without a MAC: a forger, or a board flashed without its key. Said in
        words (at most every boots.SAY_EVERY per board: a flood is counted, not written out)."""
        self._say("unsigned", (table, board), "board %s has a key but sent an unsigned frame: refused (counted as "
                  "mac; a forger on the link, or the board flashed without its key)" % named((table, board)))

    def _on_hello(self, msg: Hello, link) -> None:
        """A hello of this protocol (base.py refuses others first), authentic and of no older boot."""
        key = (msg.table, msg.board)
        self._msgid = max(self._msgid, msg.msgid)  # the board takes only newer commands: go on from its last
        if self.inbox.hello(key, msg.boot, msg.acked):
            self._note("board %s booted (boot %d) on %s" % (msg.board, msg.boot, link if msg.table is None else "table " + link))
        if key in self.keys:
            self._booted(key, msg.boot)
        if isinstance(link, str) and msg.table is None:
            msg = dataclasses.replace(msg, port=link)
        self.boards[key] = msg
        self._sensors[key] = msg.sensors
        if not self._said_offline(key, msg.boot):
            self._set_online(key, True)
        self._route[key] = link
        self._pinged.pop(key, None)
        self._unsynced.discard(key)
        at = self.inbox.acked(key)
        if at is not None and at[1] > msg.acked and not self.acks_on_commit:
            self._due(key)
            at = None
        elif at is not None and at[1] <= msg.acked:
            at = None
        # If we hold more than the board's acked (an earlier run journalled events it still keeps, or
        # the hello let a hole go), it may let go of them: once the consumer has committed what was
        # queued before this hello, which the hello's own place in the queue says.
        self._deliver(msg, (key, at) if at is not None else None)
        held = self._pending.pop(key, [])
        stale = [e for e in held if e.boot != msg.boot]
        if stale:
            self._count("stale-boot", len(stale))
        # Held events go in only as far as they follow on from where the board stands, in seq order;
        # the rest come again, in order, with the outbox the board resends after every hello.
        nxt = at[1] + 1 if at is not None else 0
        for ev in sorted((e for e in held if e.boot == msg.boot), key=lambda e: e.seq):
            if ev.seq > nxt:
                break
            self._on_event(ev, link)
            nxt = max(nxt, ev.seq + 1)

    def _resync(self, keys, link) -> None:
        """The link to these boards dropped and came back: what they sent meanwhile may be gone, so
        take no event of theirs as new before a fresh hello; ask for it now (ping = resync)."""
        for key in keys:
            self._unsynced.add(key)
            self._pinged.pop(key, None)
            table, board = key
            self._ask_hello(board, self.inbox.boot(key), table, self._route.get(key, link))

    def _unknown(self, board: str, boot: int, table: str | None, link) -> None:
        """A frame from a board whose hello (for this boot) we have not seen: count it, ask for a hello."""
        self._count("unknown-board")
        self._ask_hello(board, boot, table, link)

    def _ask_hello(self, board: str, boot: int | None, table: str | None, link) -> None:
        """Ping a board whose hello we lack (at most every PING_EVERY): it answers with its hello."""
        key = (table, board)
        now = time.monotonic()
        if now - self._pinged.get(key, -1e9) >= PING_EVERY:
            self._pinged[key] = now
            self._note("board %s%s has not said hello on %s: asking with ping"
                       % (board, "" if boot is None else " (boot %x)" % boot, link))
            self._msgid = self._msgid % 999_999_999 + 1
            # Signed for the boot the board just spoke from; 0 (any boot) if it has said nothing yet.
            self._out(link, table, board, to_frame(Ping(board, table), self._msgid), boot or 0)

    def _on_event(self, ev: Event, link) -> None:
        key = (ev.table, ev.board)
        if self.inbox.boot(key) != ev.boot or key in self._unsynced:
            held = self._pending.setdefault(key, [])
            if len(held) >= PENDING_MAX:  # the board keeps it in its outbox; it will come again
                held.pop(0)
                self._count("pending-overflow")
            held.append(ev)
            self._unknown(ev.board, ev.boot, ev.table, link)
            return
        if self._sensors[key].get(ev.sensor) != declared_kind(ev.kind):
            # Not what the board said it has: a confused or forged frame. It still takes its seq, so
            # the board's outbox can move on.
            self._reject("undeclared", link, "%s has no %s sensor %s in its hello" % (ev.board, ev.kind, ev.sensor))
            if self.inbox.offer(key, ev.boot, ev.seq)[0] != DUP:
                self._took(None, key)
            return
        verdict, gap = self.inbox.offer(key, ev.boot, ev.seq)
        if gap:
            self._gap_note(key, gap, ev.seq)
        if verdict != DUP:
            self._took(ev, key)
        else:  # the board missed our evack: acknowledge again
            self._due(key)
            if self.inbox.gapped(key):
                self._stuck(key, link)

    def _gap_note(self, key, gap: int, seq: int) -> None:
        """Say a board's events went missing: at once, then at most once a second per board with the
        sum (under overload every board has gaps, and a log line per gap cost more than the event)."""
        now = time.monotonic()
        n, at = self._gaps.get(key, (0, -1e9))
        n += gap
        if now - at >= GAP_NOTE_EVERY:
            self._note("board %s: %d event(s) missing before seq %d%s"
                       % (named(key), n, seq, " (since the last such note)" if n != gap else ""))
            self._gaps[key] = (0, now)
        else:
            self._gaps[key] = (n, at)

    def _stuck(self, key, link) -> None:
        """A board resends while seqs below are still missing here: it may have dropped them from its
        full outbox, and only its hello (`acked`) can say so; until then the cumulative evack waits
        at the hole, the board's outbox never empties and it resends it every second. Ask (ping, at
        most every STUCK_PING): the hello lets the hole go, the resent outbox fills what it still has."""
        now = time.monotonic()
        if now - self._stuck_pinged.get(key, -1e9) < STUCK_PING:
            return
        self._stuck_pinged[key] = now
        table, board = key
        self._count("resync-gap")
        self._msgid = self._msgid % 999_999_999 + 1
        self._out(self._route.get(key, link), table, board, to_frame(Ping(board, table), self._msgid))

    def _took(self, ev: Event | None, key) -> None:
        """Pass an accepted event on (None: a seq used up by a refused one); schedule its evack."""
        if not self.acks_on_commit:
            if ev is not None:
                self._deliver(ev)
            self._due(key)
            return
        ack = (key, self.inbox.acked(key))
        if ev is not None:
            self._deliver(ev, ack)
        else:
            self._put(None, ack)

    def _due(self, key) -> None:
        if not self.acknowledges:
            return
        self._evack_due.add(key)
        if self._evack_timer is None and self._loop is not None:
            self._evack_timer = self._loop.call_later(self.evack_delay, self._flush_evacks)

    def _flush_evacks(self) -> None:
        self._evack_timer = None
        due, self._evack_due = self._evack_due, set()
        for key in sorted(due, key=in_order):
            acked = self._committed.get(key) if self.acks_on_commit else self.inbox.acked(key)
            link = self._route.get(key)
            if acked is None or link is None:
                continue
            table, board = key
            self._out(link, table, board, to_frame(EvAck(board, acked[0], acked[1], table), 0))


def named(key: tuple) -> str:
    """A board's key for people: table/board, or the board alone on serial."""
    table, board = key
    return board if table is None else "%s/%s" % (table, board)


def in_order(key: tuple) -> tuple:
    """Sort key of (table, board) keys, table None (serial) too."""
    table, board = key
    return (table or "", board)


def _fast_fields(line: bytes) -> tuple | None:
    """A well-formed event frame's fields after the table (board, boot, seq, sensor, kind, value, t_us,
    width_us), or None for the general decoder to judge."""
    m = _EVENT.fullmatch(line) if len(line) < wire.MAX_FRAME else None
    if m is None:
        return None
    body, board, boot, seq, sensor, kind, value, t_us, width_us, crc = m.groups()
    if wire.crc32(body) & 0xFFFFFFFF != int(crc, 16):
        return None
    seq_, t, w = int(seq), int(t_us), int(width_us)
    if seq_ > wire.U32 or t > wire.TICKS or w > wire.TICKS:
        return None
    return board.decode(), int(boot, 16), seq_, sensor.decode(), kind.decode(), int(value), t, w


def _fast_event(line: bytes, table: str | None) -> Event | None:
    """A well-formed event frame as an Event, or None for the general decoder to judge."""
    f = _fast_fields(line)
    return None if f is None else Event(table, *f)
