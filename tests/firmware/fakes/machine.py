"""Simulated `machine` for running the real firmware under the MicroPython unix port.

Only this module and neopixel.py are substituted (through MICROPYPATH); the
firmware itself is unchanged. Pins are driven from outside the process over a
control socket (host/battlement/fwsim.py speaks it), or directly by test
scripts through drive()/advance().

Control lines (';' separates commands applied together):
    set <pin> <level>                      drive an input pin (fires its IRQ)
    adv <us>                               move the virtual clock forward
    freeze                                 stop real time from moving the clock (only adv does)
    mux <sig> <s0,s1,..> <channel> <level> level a multiplexer channel reads
    sync <n>                               answered with "sync <n>" once all before it is applied
The neopixel fake reports each strip write as "px <rrggbb>,<rrggbb>,...".

IRQ handlers run with the heap locked, so a handler that allocates fails loudly.
"""

import os
import select
import socket
import sys
import time

import micropython
from umachine import *

_pins = {}
_mux = {}  # sig pin -> (select pins, {channel: level})
_skew = [0]
_frozen = [None]  # when set, the clock stands still except for advance(): fully deterministic runs
_sim = [None, b"", None]  # socket, partial input, poller


def sim_ticks_us():
    """The firmware's clock: real time plus however far the simulation jumped ahead."""
    base = _frozen[0]
    return (time.ticks_us() if base is None else base) + _skew[0]


def advance(us):
    _skew[0] += us


class Pin(PinBase):
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 1
    IRQ_RISING = 2

    def __init__(self, id, mode=-1, pull=None, value=None):
        self.id = id
        self.mode = mode
        self.pull = pull
        self._v = 1 if pull == Pin.PULL_UP else 0
        if value is not None:
            self._v = 1 if value else 0
        self._handler = None
        self._trigger = 0
        self.hard = False
        _pins[id] = self

    def init(self, mode=-1, pull=None, value=None):
        self.mode = mode
        if value is not None:
            self._v = 1 if value else 0

    def value(self, v=None):
        if v is None:
            m = _mux.get(self.id)
            if m is not None:
                ch = 0
                sel = m[0]
                for i in range(len(sel)):
                    p = _pins.get(sel[i])
                    if p is not None and p._v:
                        ch |= 1 << i
                return m[1].get(ch, self._v)
            return self._v
        self._v = 1 if v else 0
        return None

    def on(self):
        self._v = 1

    def off(self):
        self._v = 0

    def __call__(self, v=None):
        return self.value(v)

    def irq(self, handler=None, trigger=3, hard=False):
        self._handler = handler
        self._trigger = trigger
        self.hard = hard

    def drive(self, level):
        """Set the level an input sees, firing the IRQ like a real edge would."""
        level = 1 if level else 0
        if level == self._v:
            return
        self._v = level
        h = self._handler
        if h is not None and self._trigger & (Pin.IRQ_RISING if level else Pin.IRQ_FALLING):
            micropython.heap_lock()
            try:
                h(self)
            finally:
                micropython.heap_unlock()


def pin(id):
    p = _pins.get(id)
    if p is None:
        p = Pin(id, Pin.IN, Pin.PULL_UP)
    return p


def set_mux(sig, select, channel, level):
    m = _mux.get(sig)
    if m is None:
        m = (list(select), {})
        _mux[sig] = m
    m[1][channel] = level


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self.fed = time.ticks_ms()

    def feed(self):
        self.fed = time.ticks_ms()
        poll()


class Timer:
    ONE_SHOT = 0
    PERIODIC = 1

    def __init__(self, id=-1, **kw):
        self.kw = kw

    def init(self, **kw):
        self.kw = kw

    def deinit(self):
        pass


def unique_id():
    return b"\xba\x77\x1e\x00\x00\x01"


def freq(*a):
    return 125000000


def reset():
    print("machine.reset()", file=sys.stderr)
    sys.exit(3)


def soft_reset():
    sys.exit(3)


def reset_cause():
    return 1


# --- control channel -------------------------------------------------------------


def _connect():
    addr = os.getenv("BATTLEMENT_SIM")
    if not addr:
        return
    host, _, port = addr.rpartition(":")
    s = socket.socket()
    s.connect(socket.getaddrinfo(host, int(port))[0][-1])
    s.setblocking(False)
    p = select.poll()
    p.register(s, select.POLLIN)
    _sim[0] = s
    _sim[2] = p


def report(line):
    """Send one line to the controller (pixel frames, sync answers)."""
    s = _sim[0]
    if s is None:
        return
    data = line.encode() + b"\n"
    while data:
        try:
            n = s.write(data)
        except OSError:
            time.sleep_ms(1)
            continue
        data = data[n or 0 :]


def _apply(cmd):
    a = cmd.split()
    if not a:
        return
    op = a[0]
    if op == "set":
        pin(int(a[1])).drive(int(a[2]))
    elif op == "adv":
        advance(int(a[1]))
    elif op == "mux":
        set_mux(int(a[1]), [int(x) for x in a[2].split(",")], int(a[3]), int(a[4]))
    elif op == "freeze":
        _frozen[0] = time.ticks_us()
    elif op == "sync":
        report("sync " + a[1])
    elif op == "exit":
        sys.exit(0)


def poll():
    """Apply whatever the controller sent; called from WDT.feed(), i.e. every sensing cycle."""
    s = _sim[0]
    if s is None or not _sim[2].poll(0):
        return
    try:
        data = s.read(512)  # small reads: the heap-limit tests measure the firmware, not the fake
    except OSError:
        return
    if not data:
        sys.exit(0)  # controller went away: end the simulated board
    buf = _sim[1] + data
    while True:
        nl = buf.find(b"\n")
        if nl < 0:
            break
        for cmd in buf[:nl].decode().split(";"):
            _apply(cmd)
        buf = buf[nl + 1 :]
    _sim[1] = buf


_connect()
