"""Bytes and keys for the MQTT client (client._Client): a packet's fixed header, a connection's writes
gathered into one send per loop turn, and what makes a waiting board command pointless.

Small pieces that hold none of the client's state: apart from it, _Client reads as what it does (flow
control, the outbox, the packets' hot path) and these as how a header, a send or a key is made. Why
the client builds packets itself at all: docs/bridge.md, "MQTT client".
"""

from __future__ import annotations

import asyncio

COMMAND = object()  # send(key=COMMAND): a board command, superseded by the next for the same LED or evack


def _command_key(topic: str, frame: bytes) -> tuple | None:
    """What makes a waiting board command pointless: a newer LED command for the same LED, a newer
    evack (cumulative); nothing else (config, ping) is ever superseded."""
    if frame.startswith(b"led "):
        parts = frame.split(b" ", 4)
        return (topic, parts[3]) if len(parts) == 5 else None
    if frame.startswith(b"evack "):
        return (topic, b"evack")
    return None


def _fixed_header(first: int, n: int) -> bytes:
    """A packet's first byte and its remaining length (MQTT's variable byte integer)."""
    if n < 128:
        return bytes((first, n))
    out = bytearray((first,))
    while True:
        n, d = divmod(n, 128)
        out.append(d | (0x80 if n else 0))
        if not n:
            return bytes(out)


class _Gather:
    """A connection's writes within one loop turn leave in one send: a burst's PUBACKs, a batch's LED
    commands and evacks. gmqtt writes each packet as it goes, a system call each, which at 100 tables
    was most of what it cost beyond the hand-written client it replaced (docs/bridge.md, "MQTT client")."""

    def __init__(self, tr: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._tr, self._loop = tr, loop
        self._out: list = []
        self._due = False

    def write(self, data) -> None:
        self._out.append(data)
        if not self._due:
            self._due = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        self._due = False
        out, self._out = self._out, []
        if out and not self._tr.is_closing():
            self._tr.write(b"".join(out))

    def close(self) -> None:
        self.flush()  # the DISCONNECT (and what went before it) still leaves
        self._tr.close()

    def is_closing(self) -> bool:
        return self._tr.is_closing()

    def __getattr__(self, name):
        return getattr(self._tr, name)
