"""Serial transport: one or many USB serial ports, hot-plug, garbage-tolerant.

Each port is opened non-blocking with pyserial and watched by the event loop
(add_reader). A port that fails (board unplugged: read error or end of file) is
closed and retried every `retry` seconds, so a replugged board is picked up
without restarting the bridge. A port that does not exist yet is simply waited for.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat

import serial

from battlement.errors import UserError
from battlement.link.transport.base import NoRoute, Transport
from battlement.link.wire import R_LENGTH, Splitter

OUT_MAX = 64 * 1024  # bytes queued per port before commands are dropped (counted as unsent)


def _why(e: Exception) -> str:
    """A short reason a person can act on, for a port that would not open."""
    code = getattr(e, "errno", None)
    if code == errno.ENOENT:
        return "no such device: plugged in?"
    if code == errno.EACCES:
        return "permission denied: is your user in the dialout group?"
    if code == errno.EBUSY:
        return "busy: another program has it open"
    return getattr(e, "strerror", None) or str(e)


class _Port:
    __slots__ = ("fd", "out", "path", "ser", "splitter")

    def __init__(self, path: str, ser: serial.Serial):
        self.path = path
        self.ser = ser
        self.fd = ser.fileno()
        self.splitter = Splitter()
        self.out = b""  # bytes waiting for the port to accept them


class SerialTransport(Transport):
    """Boards on serial ports. ports: device paths (e.g. /dev/ttyACM0); baud is ignored by USB CDC boards."""

    KEYED_BY_TABLE = False  # one board per port: its id alone names it

    def __init__(self, ports: list[str], baud: int = 115200, allow: list[str] | None = None, retry: float = 0.25):
        super().__init__(allow)
        if not ports:
            raise ValueError("SerialTransport needs at least one port")
        self.ports = list(dict.fromkeys(ports))
        for p in self.ports:
            # A port that is missing may still be plugged in later; one that is a plain file never will.
            if os.path.exists(p) and not stat.S_ISCHR(os.stat(p).st_mode):
                raise UserError("%s is not a serial device (expected something like /dev/ttyACM0)" % p)
        self.baud = baud
        self.retry = retry
        self._open: dict[str, _Port] = {}
        self._watch: asyncio.Task | None = None
        for p in self.ports:
            self.links[p] = "waiting"

    def add_port(self, path: str) -> None:
        """Listen on one more port from now on (a simulated table's new boards)."""
        if path not in self.ports:
            self.ports.append(path)
            self.links[path] = "waiting"
            if self._loop is not None:
                self._try_open(path)

    def remove_port(self, path: str) -> None:
        """Stop listening on a port and forget the boards heard on it (a simulated table's old boards)."""
        if path in self._open:
            self._close(path, "no longer used")
        if path in self.ports:
            self.ports.remove(path)
        self.links.pop(path, None)
        for key in [k for k, h in self.boards.items() if h.port == path]:
            del self.boards[key]
            self.online.pop(key, None)
            self.since.pop(key, None)

    async def start(self) -> None:
        await super().start()
        for path in self.ports:
            self._try_open(path)
        self._watch = asyncio.get_running_loop().create_task(self._reopen_loop())

    async def stop(self) -> None:
        await super().stop()
        if self._watch:
            self._watch.cancel()
            try:
                await self._watch
            except asyncio.CancelledError:
                pass
            self._watch = None
        for path in list(self._open):
            self._close(path, "stopped")
            self.links[path] = "closed"

    async def _reopen_loop(self) -> None:
        while True:
            await asyncio.sleep(self.retry)
            for path in self.ports:
                if path not in self._open:
                    self._try_open(path)

    def _try_open(self, path: str) -> bool:
        try:
            ser = serial.Serial(path, self.baud, timeout=0, write_timeout=0)
        except (serial.SerialException, OSError, ValueError) as e:
            state = "waiting: " + _why(e)
            if self.links.get(path) != state:
                self.links[path] = state
                self._note("serial %s not available yet (%s); will keep trying" % (path, _why(e)))
            return False
        port = _Port(path, ser)
        self._open[path] = port
        self.links[path] = "open"
        assert self._loop is not None
        if not self.paused():  # else once flow control reads again
            self._loop.add_reader(port.fd, self._readable, path)
        self._note("serial %s open" % path)
        # Boards heard on this port before it dropped: resync before taking their events as new.
        self._resync([k for k, h in self.boards.items() if h.port == path], path)
        return True

    def _close(self, path: str, why: str) -> None:
        port = self._open.pop(path, None)
        if port is None:
            return
        if self._loop is not None:
            self._loop.remove_reader(port.fd)
            self._loop.remove_writer(port.fd)
        try:
            port.ser.close()
        except (OSError, serial.SerialException):
            pass
        self.links[path] = "waiting: " + why
        for key, hello in self.boards.items():
            if hello.port == path:
                self._set_online(key, False)
        self._note("serial %s closed (%s); will reopen when it comes back" % (path, why))

    def _readable(self, path: str) -> None:
        port = self._open.get(path)
        if port is None:
            return
        try:
            data = os.read(port.fd, 4096)
        except BlockingIOError:
            return
        except OSError as e:
            self._close(path, e.strerror or str(e))
            return
        if not data:
            self._close(path, "end of file")
            return
        before = port.splitter.overlong
        lines = port.splitter.feed(data)
        if port.splitter.overlong != before:
            self._count(R_LENGTH, port.splitter.overlong - before)
            self._note("rejected length frame from %s: over %d bytes" % (path, port.splitter.limit))
        for line in lines:
            self._handle_line(line, path)

    def _stop_reading(self) -> None:
        # The port's buffers fill and then hold the board back: a board blocks (briefly, see
        # docs/bridge.md "Overload") or keeps its events in its outbox; a sender that never resends
        # loses nothing either.
        if self._loop is not None:
            for port in self._open.values():
                self._loop.remove_reader(port.fd)

    def _start_reading(self) -> None:
        if self._loop is not None:
            for path, port in self._open.items():
                self._loop.add_reader(port.fd, self._readable, path)

    def _link_for(self, board: str, table: str | None):
        hello = self.boards.get((None, board))
        if hello is None or hello.port is None:
            raise NoRoute("board %s has not said hello on any serial port (%s)" % (board, ", ".join(self.ports)))
        return hello.port

    def _write(self, link, board: str, frame: bytes) -> None:
        port = self._open.get(link)
        if port is None:
            # Unplugged: the board reboots when it comes back and says hello; the bridge resends state then.
            self._count("unsent")
            return
        if port.out:  # already waiting for the port: keep order
            if len(port.out) + len(frame) > OUT_MAX:
                self._count("unsent")  # a board that stopped reading must not stall the bridge
                return
            port.out += frame
            return
        port.out = frame
        self._flush(link)

    def _flush(self, path: str) -> None:
        """Write what the port takes without blocking the loop; the rest waits for add_writer."""
        port = self._open.get(path)
        if port is None:
            return
        try:
            n = os.write(port.fd, port.out)
        except BlockingIOError:
            n = 0
        except OSError as e:
            self._count("unsent")
            self._close(path, e.strerror or str(e))
            return
        port.out = port.out[n:]
        assert self._loop is not None
        if port.out:
            self._loop.add_writer(port.fd, self._flush, path)
        else:
            self._loop.remove_writer(port.fd)
