"""Fresh boots and trusted status (protocol 3; docs/protocol.md, "Boot counter" and "Signed status").

A board's boot is a counter it raises in flash at every boot. So the host keeps, per signing board, the
highest boot it has heard (`floors`: the consumer hands over what an earlier run kept, recall()), and
refuses every frame of a lower boot: a frame recorded during an earlier boot is a replay, however many
boots ago, and counted (`old-boot`) and said in words. An unsigned board is not held to it (anyone can
act as it anyway): its lower boot is a board that started counting again (a reflashed one).

A signing board's MQTT status (retained, and its will) is a status frame signed for its boot and link
session; the host takes one only if it is no older than the last it took (`stale-status`), and refuses
the plain words (`mac`), so no stranger on the broker can show it online or offline.

A mixin of Transport, as intake.py is (which calls it): it holds no state of its own (Transport.__init__
sets it), and base.py imports it, never the other way round.
"""

from __future__ import annotations

import time
from binascii import hexlify
from typing import TYPE_CHECKING

from battlement.link import wire
from battlement.link.transport.intake import PING_EVERY, named

if TYPE_CHECKING:
    import asyncio

    from battlement.link.inbox import Inbox

OLD_BOOT = "old-boot"  # a frame of a boot below the highest heard: a replay
STALE_STATUS = "stale-status"  # a signed status older than the last one taken (an earlier link session)
SAY_EVERY = 60.0  # seconds: one thing about one board is said at most this often (all are counted)
V2_LOOK = 1.0  # seconds: a frame failing its MAC is checked for protocol 2's MAC at most this often per board


class Boots:
    """What Transport does about boots and status (set in base.py, declared here for the type checker)."""

    floors: dict[tuple, int]
    keys: dict[tuple, bytes]
    signed: set[str | None]
    mac_tables: dict[tuple, str | None]
    inbox: Inbox
    _status: dict[tuple, tuple[int, int, bool]]
    _said: dict[tuple, float]
    _route: dict[tuple, object]
    _loop: asyncio.AbstractEventLoop | None

    if TYPE_CHECKING:
        def key_of(self, table: str | None, board: str) -> tuple: ...
        def _note(self, text: str) -> None: ...
        def _reject(self, reason: str, where, detail: str = "") -> None: ...
        def _set_online(self, key: tuple, up: bool) -> None: ...
        def _hello_due(self, table: str, board: str) -> None: ...
        def remember(self, table: str | None, board: str, boot: int, seqs) -> None: ...

    def floor(self, table: str | None, board: str, boot: int) -> None:
        """Board has been heard from boot `boot` (an earlier run's record): no frame of a lower boot is taken."""
        key = self.key_of(table, board)
        if boot > self.floors.get(key, 0):
            self.floors[key] = boot

    def recall(self, records, seen: dict | None = None) -> None:
        """What an earlier run kept: each board's highest boot (records: {"table", "board", "boot"}, the journal's
        board_records(): floor()), and the seqs it applied of each boot (seen: {(table, board, boot): seqs}: remember())."""
        for r in records:
            self.floor(r["table"], r["board"], r["boot"])
        for (table, board, boot), seqs in (seen or {}).items():
            self.remember(table, board, boot, seqs)

    def _mac_table(self, key: tuple) -> str | None:
        """The table id a board's MACs bind (on serial the key names none: the one its keys came with)."""
        return self.mac_tables.get(key, key[0])

    def _say(self, what: str, key: tuple, text: str) -> None:
        """Said in words (the log), at most every SAY_EVERY per board and kind: a flood is counted, not written."""
        now = time.monotonic()
        if now - self._said.get((what, *key), -1e9) >= SAY_EVERY:
            self._said[(what, *key)] = now
            self._note(text)

    def _stale(self, key: tuple, boot: int, link) -> bool:
        """True (refused, counted, said) for a frame of a signing board from a boot below the highest heard."""
        high = self.floors.get(key, 0)
        if boot >= high or key not in self.keys:
            return False
        text = "%s: boot %d is older than boot %d already seen: a replay" % (named(key), boot, high)
        self._reject(OLD_BOOT, link, text)
        self._say(OLD_BOOT, key, "board " + text + " (refused, counted as %s)" % OLD_BOOT)
        return True

    def _booted(self, key: tuple, boot: int) -> None:
        """A signed hello (or status) of this boot was taken: lower boots are replays from now on."""
        if boot > self.floors.get(key, 0):
            self.floors[key] = boot

    def _v2(self, line: bytes, key: tuple, boot: int | None) -> None:
        """A frame that failed its MAC: if it is signed as protocol 2 did (boot and frame only), the board runs
        firmware from before boot counters: say so, in words that say what to do."""
        k = self.keys.get(key)
        star = line.rfind(b"*")
        i = line.rfind(b" ~", 0, star)
        now = time.monotonic()
        if k is None or boot is None or i < 0 or now - self._said.get(("v2?", *key), -1e9) < V2_LOOK:
            return  # looked lately: a flood of forgeries costs no second MAC each
        self._said[("v2?", *key)] = now
        if hexlify(wire.hmac_sha256(k, b"%x " % boot, line[:i])[:wire.MAC_LEN]) == line[i + 2:star]:
            self._say("v2", key, "board %s signs as protocol 2 (random boot ids, so a replay cannot be told from "
                                    "a boot): reflash it with this version's firmware (`battlement flash`)" % named(key))

    def _old_proto(self, key: tuple, proto: int, link) -> None:
        """A hello of another protocol version: refused (counted: proto), and said with what to do."""
        if proto < wire.VERSION:
            text = ("%s speaks protocol v%d, this host v%d (its boot ids are not counters, so its replays cannot be "
                    "told apart): reflash it with this version's firmware (`battlement flash`)"
                    % (named(key), proto, wire.VERSION))
        else:
            text = "%s speaks protocol v%d, this host v%d: update the host" % (named(key), proto, wire.VERSION)
        self._reject("proto", link, text)
        self._say("proto", key, "board " + text)

    # --- MQTT status --------------------------------------------------------------------------

    def _on_status(self, table: str, board: str, payload: bytes, where: str) -> None:
        """A board's retained status (or its will): plain online/offline for an unsigned board, a status frame
        signed for its boot and link session for a signing one (anything else refused and counted)."""
        key = (table, board)
        signing = key in self.keys or table in self.signed
        if payload in (b"online", b"offline"):
            if signing:
                self._reject(wire.R_MAC, where, "board %s signs: its status must be a signed status frame" % board)
                self._say("status", key, "board %s signs, but an unsigned status (%s) came for it: refused (counted as "
                                         "mac; a forger on the broker, or the board flashed without its key)"
                          % (named(key), payload.decode()))
                return
            self._status_is(key, payload == b"online")
            return
        try:
            typ, f = wire.decode(payload)
            if typ != "status":
                raise wire.WireError(wire.R_TYPE, "a %s frame on a status topic" % typ)
            if f[0] != board:
                raise wire.WireError("board-mismatch", "%s sent on %s's topic" % (f[0], board))
            if f[3] not in wire.STATES:
                raise wire.WireError(wire.R_FIELDS, "status must be online or offline, not %s" % f[3][:20])
        except wire.WireError as e:
            self._reject(e.reason, where, e.detail or e.reason)
            return
        boot, session, up = f[1], f[2], f[3] == "online"
        if signing:
            k = self.keys.get(key)
            if k is None or not wire.verify(payload, k, self._mac_table(key), board, boot):
                self._reject(wire.R_MAC, where, "no valid MAC on the status of board %s" % board)
                self._v2(payload, key, boot)
                return
            if self._stale(key, boot, where):
                return
            last = self._status.get(key)
            if last is not None and ((boot, session) < last[:2] or ((boot, session) == last[:2] and up and not last[2])):
                self._reject(STALE_STATUS, where, "%s: %s of boot %d session %d is older than %s of boot %d session %d"
                             % (named(key), f[3], boot, session, "online" if last[2] else "offline", *last[:2]))
                return
            self._status[key] = (boot, session, up)
            self._booted(key, boot)
        self._status_is(key, up)

    def _status_is(self, key: tuple, up: bool) -> None:
        table, board = key
        self._set_online(key, up)
        self._note("board %s/%s is %s" % (table, board, "online" if up else "offline"))
        if up and key not in self._route and self._loop is not None:
            # Its hello normally follows; if it went out before we subscribed, ask for it.
            self._loop.call_later(PING_EVERY, self._hello_due, table, board)

    def _said_offline(self, key: tuple, boot: int) -> bool:
        """True if the board's last signed status of this boot said offline: a hello of that boot (a replay,
        the board's own link being gone) does not make it online; its next session's status will."""
        last = self._status.get(key)
        return last is not None and last[0] == boot and not last[2]
