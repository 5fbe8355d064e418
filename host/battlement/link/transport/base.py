"""What both transports share, the consumer's side: the Transport API (get, send...), flow control,
rejection counting, and the door every frame from a board comes in by (_handle_line).

What happens to a frame once in (signatures, hello tracking and resync, exactly-once, evack) is in
intake.py, a mixin Transport inherits; fresh boots (a signing board's frames of an older boot refused)
and the boards' MQTT status in boots.py, another. A consumer that journals (the bridge) sets acks_on_commit
and calls committed() after each commit: an event is acknowledged only once it is durable, and
remember() hands over what an earlier run journalled, so a host killed at any moment neither loses
nor doubles an event.

Concurrency model: asyncio. Everything below runs on the event loop thread.
Serial ports are non-blocking file descriptors watched with loop.add_reader
(no thread per port, no extra hop); paho-mqtt's network thread hands each
message over with loop.call_soon_threadsafe. So counters, boards and the inbox
need no locks, and the bridge (an asyncio ASGI app) just awaits get().
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable

from battlement.errors import UserError
from battlement.link import wire
from battlement.link.inbox import Inbox
from battlement.link.messages import (
    DOWN_TYPES,
    Beat,
    Config,
    Event,
    Hello,
    Led,
    Ping,
    Reply,
    from_frame,
    to_frame,
)
from battlement.link.transport.boots import Boots

# Intake and _fast_fields are used here; the rest moved to intake.py beside the code that uses them
# and are imported for those who import them from here (noqa), as before the split.
from battlement.link.transport.intake import (  # noqa: F401
    EVACK_DELAY,
    GAP_NOTE_EVERY,
    PENDING_MAX,
    PING_EVERY,
    STUCK_PING,
    Intake,
    _fast_event,
    _fast_fields,
    in_order,
    named,
)
from battlement.link.wire import WireError

# Flow control between intake and consumer (asyncio's high/low-water marks): once QUEUE_HIGH events
# wait, or the oldest has waited QUEUE_AGE, the transport stops reading its links (MQTT socket, serial
# ports) and reads again once at most QUEUE_LOW wait. Meanwhile the kernel, the broker's queue for us
# and the serial line hold what the boards send, and a board resends after 1 s what got lost on the
# way; nothing is parsed only to be refused. QUEUE_MAX is the hard bound on what was already read
# when reading stopped (never reached when the transport can stop reading): past it an event is
# refused at the door (`queue-full`, not acknowledged, so the board sends it again).
QUEUE_HIGH = 2000  # events waiting: stop reading...
QUEUE_AGE = 0.25  # ...or the oldest waiting this long (well within a board's 1 s resend)
QUEUE_LOW = 250  # read again once at most this many wait
QUEUE_MAX = 10000  # refuse at the door past this many (what was read before reading stopped)


class NoRoute(UserError):
    """A command for a board the transport cannot reach (it never said hello)."""


class BadCommand(UserError):
    """A command with a value the wire cannot carry (unknown pattern, colour out of range...)."""


class Transport(Intake, Boots):
    """Base of SerialTransport and MqttTransport. See docs/protocol.md, "Host behaviour"."""

    KEYED_BY_TABLE = True  # boards are told apart by (table, board); serial: by board id alone

    def __init__(self, allow: list[str] | None = None):
        self.counters: dict[str, int] = {"accepted": 0}
        # Boards by (table, board), as everything below keys them: two tables on one broker may use the same
        # board ids. Table None on serial (key_of).
        self.boards: dict[tuple, Hello] = {}  # (table, board) -> latest hello (with .port on serial)
        self.online: dict[tuple, bool] = {}  # (table, board) -> link up (serial port open / MQTT status)
        # MQTT: boards of tables not served, heard by their status alone (their frames go elsewhere) -> online
        self.strangers: dict[tuple, bool] = {}
        self.since: dict[tuple, float] = {}  # (table, board) -> when `online` last changed (time.time())
        self.links: dict[str, str] = {}  # port path or broker url -> state, for people
        self.allow = set(allow) if allow else None
        self.inbox = Inbox(self.counters)
        self.log: Callable[[str], None] | None = None  # notable happenings (gaps, hot-plug) for the monitor
        self._loop: asyncio.AbstractEventLoop | None = None
        # (message or None, (key, boot, seq) it lets us ack or None, when queued); see QUEUE_MAX
        self._queue: collections.deque = collections.deque()
        self._events_queued = 0  # how many of those are events (only events are ever refused)
        self._waiter: asyncio.Future | None = None
        self._stuck_pinged: dict[tuple, float] = {}
        self._gaps: dict[tuple, tuple[int, float]] = {}  # key -> (seqs missing not yet noted, when last noted)
        # True: flow control (QUEUE_HIGH, QUEUE_LOW, QUEUE_MAX), for a consumer that always takes (the bridge)
        self.bounded = False
        self._paused_at: float | None = None  # when reading stopped; None: reading
        # Signing (docs/protocol.md, "Signed frames"), decided per table (sign()): every frame from a board
        # with a key, or of a table in `signed`, must carry the MAC of its key, and every frame to it gets one;
        # the boards of other tables are heard unsigned. keys: (table, board) -> key (table None on serial).
        self.signed: set[str | None] = set()
        self.keys: dict[tuple, bytes] = {}
        self.mac_tables: dict[tuple, str | None] = {}  # (table, board) -> the table id its MACs bind (sign's table_id)
        # Fresh boots (boots.py): (table, board) -> the highest boot heard (frames of lower ones are replays),
        # and its last signed status (boot, link session, online).
        self.floors: dict[tuple, int] = {}
        self._status: dict[tuple, tuple[int, int, bool]] = {}
        self._said: dict[tuple, float] = {}  # (what, table, board) said in words -> when (boots.SAY_EVERY)
        self.acks_on_commit = False  # True: evack only what the consumer said it committed (committed())
        self.acknowledges = True  # False: never evack (a watcher beside the bridge, which acknowledges)
        self._taken: dict[tuple, tuple[int, int]] = {}  # key -> (boot, seq) the consumer has taken
        self._committed: dict[tuple, tuple[int, int]] = {}  # key -> (boot, seq) safe to acknowledge
        self._route: dict[tuple, object] = {}  # (table, board) -> link to reach it
        self._pending: dict[tuple, list[Event]] = {}
        self._sensors: dict[tuple, dict[str, str]] = {}  # (table, board) -> sensors its current hello declared
        self._pinged: dict[tuple, float] = {}
        self._unsynced: set[tuple] = set()  # boards heard before on a link that has since dropped
        self._evack_due: set[tuple] = set()
        self._evack_timer: asyncio.TimerHandle | None = None
        self._msgid = 0

    # --- consumer API ------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()

    async def stop(self) -> None:
        self.log = None  # closing on purpose is not news
        if self._evack_timer:
            self._evack_timer.cancel()
            self._evack_timer = None
        self._flush_evacks()

    async def get(self):
        """The next accepted message: Hello, Event (exactly once), Beat or Reply."""
        while True:
            msg = self.get_nowait()
            if msg is not None:
                return msg
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def get_nowait(self):
        """The next accepted message, or None if none is waiting."""
        q = self._queue
        while q:
            msg, ack, _t = q.popleft()
            if ack is not None:
                k, at = ack
                before = self._taken.get(k)
                if before is None or before[0] != at[0] or at[1] > before[1]:
                    self._taken[k] = at
            if type(msg) is Event:
                self._events_queued -= 1
            if self._paused_at is not None and self._events_queued <= QUEUE_LOW:
                self._resume()
            if msg is not None:
                return msg
        if self._paused_at is not None:
            self._resume()
        return None

    def queued(self) -> int:
        """Messages accepted and waiting for the consumer."""
        return len(self._queue)

    def paused(self) -> bool:
        """True while flow control keeps the links from being read."""
        return self._paused_at is not None

    def _put(self, msg, ack) -> None:
        now = time.monotonic()
        if type(msg) is Event:
            self._events_queued += 1
        q = self._queue
        q.append((msg, ack, now))
        if self.bounded and self._paused_at is None and (
                self._events_queued >= QUEUE_HIGH
                or self._events_queued > QUEUE_LOW and now - q[0][2] > QUEUE_AGE):
            self._pause(now)
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def _pause(self, now: float) -> None:
        self._paused_at = now
        self._count("paused")
        self._stop_reading()

    def _resume(self) -> None:
        if self._paused_at is not None:
            self._count("paused-ms", int((time.monotonic() - self._paused_at) * 1000))
        self._paused_at = None
        self._start_reading()

    def _stop_reading(self) -> None:
        """Flow control: stop reading the links (each transport its own way)."""

    def _start_reading(self) -> None:
        """Flow control: read the links again."""

    def committed(self) -> None:
        """With acks_on_commit: every event taken so far is durable; acknowledge it to its board."""
        taken, self._taken = self._taken, {}
        for key, at in taken.items():
            self._committed[key] = at
            self._due(key)

    def key_of(self, table: str | None, board: str) -> tuple:
        """What this transport keys table's board by (boards, online, since...): (table, board), or
        (None, board) on serial, where a board's id alone names it."""
        return (table if self.KEYED_BY_TABLE else None, board)

    def sign(self, table: str | None, keys: dict[str, bytes], every_board: bool = True,
             table_id: str | None = None) -> None:
        """Table's boards sign with these keys (table None on serial: a board's id alone names it). With
        every_board (and a key at all), a board of the table without a key is not heard either. table_id:
        the table id their MACs bind, where the transport keys them by none (serial); else table's."""
        for board, key in keys.items():
            self.keys[(table, board)] = key
            self.mac_tables[(table, board)] = table_id or table
        if keys and every_board:
            self.signed.add(table)

    def remember(self, table: str | None, board: str, boot: int, seqs) -> None:
        """Events of board's boot an earlier run applied (from the journal): never applied again."""
        self.inbox.seed(self.key_of(table, board), boot, seqs)

    async def send(self, cmd) -> int:
        """Send Led/Config/Ping to its board; returns the msgid the board's ack/error will carry.

        Raises NoRoute (board never said hello) or BadCommand (value the wire cannot carry).
        """
        return self.send_now(cmd)

    def send_now(self, cmd) -> int:
        """send() without the coroutine, for code already on the loop (the bridge, per LED command):
        the frame is written, or queued by the link, before it returns."""
        if not isinstance(cmd, (Led, Config, Ping)):
            raise BadCommand("cannot send %r: commands are Led, Config or Ping" % (cmd,))
        self._msgid = self._msgid % 999_999_999 + 1
        try:
            frame = to_frame(cmd, self._msgid)
        except WireError as e:
            raise BadCommand("%s for board %s: %s" % (type(cmd).__name__.lower(), cmd.board, e.detail or e))
        link = self._link_for(cmd.board, cmd.table)
        self._out(link, link if self.KEYED_BY_TABLE else None, cmd.board, frame)
        return self._msgid

    # --- for subclasses ------------------------------------------------------------

    def _link_for(self, board: str, table: str | None):
        raise NotImplementedError

    def _write(self, link, board: str, frame: bytes) -> None:
        raise NotImplementedError

    def _out(self, link, table: str | None, board: str, frame: bytes, boot: int | None = None) -> None:
        """Write a frame to a board, signed with its key for its current boot (or `boot`) when signing is on."""
        key = self.keys.get((table, board))
        if key is not None:
            frame = wire.sign(frame, key, self._mac_table((table, board)), board,
                              boot if boot is not None else self.inbox.boot((table, board)) or 0)
        elif table in self.signed:  # a board of a signed table with no key is never heard either
            self._count("unsent")
            return
        self._write(link, board, frame)

    def _note(self, text: str) -> None:
        if self.log:
            self.log(text)

    def _set_online(self, key: tuple, up: bool) -> None:
        if self.online.get(key) != up:
            self.since[key] = time.time()
        self.online[key] = up

    def _count(self, reason: str, n: int = 1) -> None:
        self.counters[reason] = self.counters.get(reason, 0) + n

    def _reject(self, reason: str, where, detail: str = "") -> None:
        self._count(reason)
        self._note("rejected %s frame from %s%s" % (reason, where, (": " + detail) if detail else ""))

    def _handle_line(self, line: bytes, link, table: str | None = None, board: str | None = None) -> None:
        """Decode and act on one frame from `link`; never raises. board: the id the link says it is (MQTT topic)."""
        if self._events_queued >= QUEUE_MAX and self.bounded and line.startswith(b"event "):
            # Far behind even though reading stopped (what was read before it did): take no event now,
            # before any work is spent on it. The board keeps it in its outbox (nothing is acknowledged
            # that was not taken) and sends it again.
            self.counters["queue-full"] = self.counters.get("queue-full", 0) + 1
            return
        f = _fast_fields(line)
        if f is None and not line.strip(b"\r\n\t "):
            return  # blank lines resync the stream; not an error
        if f is not None and (board is None or f[0] == board):
            key = (table, f[0])
            if self.inbox.known(key, f[1], f[2]) and key not in self._unsynced:
                # A resend of an event already taken, dropped before its MAC is checked or an Event made
                # (most of what a resending board sends). Safe unverified: a duplicate only makes us
                # repeat the evack of what is committed, which replaying a genuine frame does too.
                self.counters["stale-seq"] = self.counters.get("stale-seq", 0) + 1
                self._due(key)
                if self.inbox.gapped(key):
                    self._stuck(key, link)
                return
            if not self._authentic(line, table, f[0], f[1], link) or self._stale(key, f[1], link):
                return
            if self.allow is not None and f[0] not in self.allow:
                self._reject("unknown-board", link, "%s is not in the allow-list" % f[0])
            else:
                self._on_event(Event(table, *f), link)
            return
        try:
            typ, fields = wire.decode(line)
            if typ in DOWN_TYPES:
                raise WireError("wrong-direction", typ)
            if board is not None and fields[0] != board:
                raise WireError("board-mismatch", "%s sent on %s's topic" % (fields[0], board))
            msg = from_frame(typ, fields, table)
        except WireError as e:
            # Show the start of the line: often a board's own message (boot banner, a traceback).
            text = "".join(chr(c) if 32 <= c < 127 else "?" for c in line[:72].rstrip(b"\r\n"))
            self._reject(e.reason, link, "%s: %s" % (e.detail or e.reason, text))
            return
        if isinstance(msg, Hello) and msg.proto != wire.VERSION:  # before its MAC: a v2 board signs another way
            self._old_proto((table, msg.board), msg.proto, link)
            return
        boot = msg.boot if not isinstance(msg, Reply) else self.inbox.boot((table, msg.board))
        if not self._authentic(line, table, msg.board, boot, link):
            return
        if not isinstance(msg, Reply) and self._stale((table, msg.board), msg.boot, link):
            return
        if self.allow is not None and msg.board not in self.allow:
            self._reject("unknown-board", link, "%s is not in the allow-list" % msg.board)
            return
        if isinstance(msg, Event):
            self._on_event(msg, link)
        elif isinstance(msg, Hello):
            self._on_hello(msg, link)
        elif isinstance(msg, Beat):
            if self.inbox.boot((table, msg.board)) != msg.boot:
                self._unknown(msg.board, msg.boot, table, link)
                return
            self._deliver(msg)
        else:  # Reply: an answer to something we sent; pass it on even before a hello
            assert isinstance(msg, Reply)
            self._deliver(msg)

    def _deliver(self, msg, ack: tuple | None = None) -> None:
        self.counters["accepted"] += 1
        self._put(msg, ack)
