"""Improv Wi-Fi over a board's serial port: what `battlement provision` says to a board, and what it hears.

The board answers on the port it sends its frames on (or, on an MQTT board, its USB console), so the
answers come among frames and console text: Reader picks out the packets (battlement.link.improvwire),
each at the start of a line, as the browser tools do. Every question is an RPC; the board answers with an
RPC result, or an error state (Board.ask raises it as "board refused: ...").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Self

import serial

from battlement.errors import UserError
from battlement.link import improvwire as iw
from battlement.link.transport.serialport import _why

ANSWER_S = 5.0  # for a board to answer a question
CONNECT_S = 45.0  # for it to join the Wi-Fi (15 s at most) and log in to the broker


class Reader:
    """Improv packets out of a byte stream they share with text; feed() returns (type, data) for each whole
    one, or an ImprovError for one that is not good (wrong checksum, another version)."""

    def __init__(self) -> None:
        self.buf = b""
        self.in_line = False  # inside a line that is not a packet: skip to its end

    def feed(self, data: bytes) -> list:
        self.buf += data
        out: list = []
        while self.buf:
            if self.in_line:
                nl = self.buf.find(b"\n")
                if nl < 0:
                    self.buf = b""
                    break
                self.buf = self.buf[nl + 1 :]
                self.in_line = False
                continue
            head = self.buf[:6]
            if not iw.HEADER.startswith(head) or (len(self.buf) > 6 and self.buf[6] != iw.VERSION):
                self.in_line = True  # text (which may well start "IMPROVISED")
                continue
            if len(self.buf) < 9 or len(self.buf) < iw.size(self.buf):
                break  # the rest is on its way
            n = iw.size(self.buf)
            try:
                out.append(iw.unpack(self.buf[:n]))
            except iw.ImprovError as e:
                out.append(e)
            self.buf = self.buf[n:]
            self.in_line = True  # its b"\n", if any, ends the line it started
        return out


class Board:
    """One board on a serial port, asked questions one at a time. say(text) shows what the board says."""

    def __init__(self, port: str, say: Callable[[str], None]):
        self.port = port
        self.say = say
        try:
            self.ser = serial.Serial(port, 115200, timeout=0.05, exclusive=True)
        except (serial.SerialException, OSError, ValueError) as e:
            raise UserError("cannot open %s: %s" % (port, _why(e)))
        self.reader = Reader()
        self.state: int | None = None

    def close(self) -> None:
        self.ser.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _write(self, pkt: bytes) -> None:
        try:
            self.ser.write(pkt)
        except (serial.SerialException, OSError) as e:
            raise UserError("%s: the board went away (%s)" % (self.port, _why(e)))

    def _packets(self):
        try:
            data = self.ser.read(4096)
        except (serial.SerialException, OSError) as e:
            raise UserError("%s: the board went away (%s)" % (self.port, _why(e)))
        return self.reader.feed(data) if data else []

    def ask(self, cmd: int, strings=(), timeout: float = ANSWER_S, again: float | None = None,
            state: bool = False) -> list[str]:
        """Send RPC cmd and wait for its result: the strings it carries (state: for the board's state instead,
        GET_STATE's answer). again: ask again this often meanwhile (a board still starting may miss the first)."""
        pkt = iw.rpc(cmd, strings)
        self._write(pkt)
        start = sent = time.monotonic()
        while True:
            now = time.monotonic()
            if now - start > timeout:
                raise UserError("%s: no answer from the board within %g s (is the Battlement firmware, or another "
                                "Improv firmware, running on it, and no other program holding the port?)"
                                % (self.port, timeout))
            if again is not None and now - sent > again:
                self._write(pkt)
                sent = now
            for p in self._packets():
                if isinstance(p, iw.ImprovError):
                    raise UserError("%s: the board's answer has a %s (a noisy cable, or another program "
                                    "writing to the port?)" % (self.port, p))
                typ, data = p
                if typ == iw.ERROR and data and data[0] != iw.NO_ERROR:
                    raise UserError("board refused: %s" % iw.ERRORS.get(data[0], "error %d" % data[0]))
                if typ == iw.STATE and data:
                    if data[0] != self.state:
                        self.state = data[0]
                        self.say("board: %s" % iw.STATES.get(data[0], "state %d" % data[0]))
                    if state:
                        return []
                elif typ == iw.RESULT:
                    try:
                        got, back = iw.command(data)
                    except iw.ImprovError as e:
                        raise UserError("%s: the board's answer is not one (%s)" % (self.port, e))
                    if got == cmd and not state:
                        return back


Settings = tuple[tuple[str, int, str, str] | None, tuple[str, str] | None]


def provision(port: str, wifi: tuple[str, str], settings: Callable[[str], Settings] | None, board: str | None,
              say: Callable[[str], None], wait: float = ANSWER_S) -> list[str]:
    """Give the board on port its Wi-Fi, and a Battlement board what settings(its id) returns (None: Wi-Fi
    only): its broker (host, port, login, password) and table (id, key hex or ""), each or None. Returns its
    device information (firmware, version, chip, board id)."""
    with Board(port, say) as b:
        info = b.ask(iw.GET_INFO, again=1.0, timeout=wait)
        if len(info) < 4:
            raise UserError("%s: the board's device information is %r, not firmware, version, chip and name"
                            % (port, info))
        say("board on %s: %s %s on %s, board %s" % (port, info[0], info[1], info[2], info[3]))
        if board and board != info[3]:
            raise UserError("the board on %s is %s, not %s: give --board %s, or plug in board %s"
                            % (port, info[3], board, info[3], board))
        if settings is not None and info[0] != iw.FIRMWARE:
            raise UserError("the board on %s runs %s, not %s: it takes Wi-Fi only (leave out --broker and --table)"
                            % (port, info[0], iw.FIRMWARE))
        b.ask(iw.GET_STATE, state=True)
        broker, table = settings(info[3]) if settings is not None else (None, None)
        if broker:
            b.ask(iw.BROKER, (broker[0], str(broker[1]), broker[2], broker[3]))
            say("board: takes broker %s:%d, login %s" % (broker[0], broker[1], broker[2] or "(none)"))
        if table:
            b.ask(iw.TABLE, table)
            say("board: takes table %s%s" % (table[0], " and its signing key" if table[1] else ""))
        say("board: joining Wi-Fi %s%s" % (wifi[0], ", then logging in to the broker" if broker else ""))
        b.ask(iw.WIFI, wifi, timeout=CONNECT_S)
        return info
