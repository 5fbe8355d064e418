"""Serial ports of the virtual-time board: the ESP32 console (Console, models with "console") and USB-CDC
(Cdc, tests/firmware/mp/board.py's link). Loaded only where one is used.
"""

import io
import select
import time

from vboard import MODEL, _idle, _real, _st, gc_windows, stats, work
from vcontrol import poll


class Console(io.IOBase):
    """The serial link's port as the ESP32 port's console has it (models with "console"): poll says
    writable always (ports/esp32/mphalport.c, mp_hal_stdio_poll), and a write waits, the VM held, while
    the port has no room: up to 500 ms on native USB (shared/tinyusb/mp_usbd_cdc.c), 200 ms on
    USB-Serial/JTAG (ports/esp32/usb_serial_jtag.c), then the frame is dropped; after such a timeout
    the JTAG console drops at once what finds no room, until a write finds room. Room is the tty's
    (tests/support/cdc.py stops it while the USB FIFO is full). On native USB scheduled pin handlers run
    while it waits (mp_event_wait_ms); the JTAG port's loop spins on the FIFO and runs none: there they
    wait, up to the scheduler's 8 (more are dropped), and run when the write returns (gc_windows has the
    hold, as it has a collection)."""

    def __init__(self, f):
        self.f = f
        self.wait_ms, self.give_up, self.runs = MODEL["console"]
        self.gone = False
        self.room = select.poll()
        self.room.register(f, select.POLLOUT)

    def ioctl(self, req, arg):
        if req != 3:  # MP_STREAM_POLL; no file number (MP_STREAM_GET_FILENO: -1), so poll asks this object
            return -1
        p = select.poll()
        p.register(self.f, arg)
        got = p.poll(0)
        return (got[0][1] if got else 0) | (arg & select.POLLOUT)

    def readinto(self, buf):
        return self.f.readinto(buf)

    def read(self, n=-1):
        return self.f.read(n)

    def readline(self):
        return self.f.readline()

    def write(self, data):
        t0 = time.ticks_ms()
        if self.room.poll(0):
            self.gone = False
            return self.f.write(data)
        _real()
        idle = _idle[0]
        _idle[0] = -1  # the port's wait lasts as long as the host does not read: real time is the board's here
        h0 = _st[0]
        if not self.runs:
            _st[4] = 1 << 60  # the VM held: handlers wait (their ISRs still queue them)
        try:
            while not self.room.poll(0 if self.gone else 1):  # the VM waits here, as inside the port's write
                if self.gone or time.ticks_diff(time.ticks_ms(), t0) >= self.wait_ms:
                    self.gone = self.give_up
                    return 0
                poll()  # the world goes on (edges); on native USB the scheduler runs their handlers meanwhile
        finally:
            _real()
            _idle[0] = idle if idle is not None and idle > _st[0] else None
            if not self.runs:
                _st[4] = _st[0]
                if _st[0] > h0:
                    gc_windows.append((h0, _st[0]))
                    stats["console_held"] = stats.get("console_held", 0) + 1
        self.gone = False
        return self.f.write(data)


def install():
    """The serial link's port opens as the console (models with "console": its open("...", "r+b") in links.py)."""
    import builtins

    _open = builtins.open

    def _console_open(path, mode="r", *args):
        f = _open(path, mode, *args)
        return Console(f) if mode == "r+b" else f

    builtins.open = _console_open


class Cdc:
    """USB-CDC as shared/tinyusb/mp_usbd_cdc.c writes it: a 256-byte FIFO (CFG_TUD_CDC_TX_BUFSIZE);
    while the host reads, a full-speed host takes about 1 byte a us; while it does not, a write
    waits in 1 ms steps and gives up after 500 ms (MICROPY_HW_USB_CDC_TX_TIMEOUT on rp2).
    deaf: [(from_us, to_us)] when the host does not read."""

    FIFO = 256

    def __init__(self, deaf=()):
        self.deaf = [tuple(d) for d in deaf]
        self.fill = 0
        self.at = 0
        self.blocked_us = 0
        self.dropped = 0

    def _reading(self, t):
        for a, b in self.deaf:
            if a <= t < b:
                return False
        return True

    def _drain(self):
        t = _st[0]
        if self._reading(t):
            self.fill = max(0, self.fill - (t - self.at))
        self.at = t

    def write(self, data):
        i = 0
        n = len(data)
        waited = 0
        while i < n:
            self._drain()
            k = min(n - i, self.FIFO - self.fill)
            if k > 0:
                self.fill += k
                i += k
                work(k // 8 + 2)  # copying into the FIFO
                waited = 0
                continue
            if waited >= 500000:
                self.dropped += n - i
                return i
            work(1000)  # mp_event_wait_ms(1): scheduled handlers still run
            waited += 1000
            self.blocked_us += 1000
        return n
