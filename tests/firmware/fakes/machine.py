"""A virtual-time board for running the real firmware under the MicroPython unix port.

Only this module, neopixel.py, rp2.py and esp32.py are substituted (through
MICROPYPATH); the firmware itself is unchanged. The board keeps a virtual
clock in microseconds that moves with the work the firmware does: every pin
read or write, mux select, clock read, LED frame and frame encoding costs the
time the chosen port takes for it (COSTS below, sources in docs/hardware.md
"Timing"). Edges are scheduled at absolute instants and delivered whenever the
clock passes them, also in the middle of App.sense(), through the port's IRQ
model:

    ideal     the old kind fake: no work costs time, a handler runs at its edge's instant
    rp2       hard IRQs 10-20 us after the edge, masked while machine.bitstream (the stock
              neopixel) sends a frame; edges of one pin that wait coalesce into one call
    esp32     no hard IRQs: the C ISR queues the handler on the scheduler (8 slots, full
              -> lost), it runs 30-150 us later, or after the call that blocks the VM
              (GC, an LED frame the RMT driver waits for); pin.value() is read then
    esp32-gc  esp32 with 30 ms garbage collections: the port's own every 2 s (when the heap
              fills, wherever the firmware is) until the firmware turns them off
              (hal.gc_manual -> gc_manual()), and every collect() the firmware asks for

BATTLEMENT_BOARD picks the model (default ideal), BATTLEMENT_SEED the random
stream of latencies (deterministic by seed).

Pins are driven from outside the process over a control socket
(host/battlement/sim/firmware.py speaks it), or by test drivers through schedule(),
run_until() and drive(). Control lines (';' separates commands applied in order):
    set <pin> <level>                      an edge on an input pin now
    adv <us>                               let the clock run on while the firmware idles (scheduled
                                           handlers: the commands after it happen that much later,
                                           while the clock moves with the firmware's work and sleeps)
    freeze                                 stop real time from moving the clock (only adv does)
    mux <sig> <s0,s1,..> <channel> <level> level a multiplexer channel reads
    sync <n>                               answered with "sync <n>" once all before it is applied
    stats                                  answered with "stats <json>": the board's counters (edges the
                                           scheduler dropped, pauses, console holds)
The neopixel fake reports each strip write as "px <rrggbb>,<rrggbb>,...".

Hard IRQ handlers run with the heap locked, so a handler that allocates fails loudly.
"""

import io
import json
import os
import select
import socket
import sys
import time

import micropython
from umachine import *

# Work costs in microseconds per port (docs/hardware.md "Timing" gives each source).
COSTS = {
    "ideal": {"ticks": 0, "pin_r": 0, "pin_w": 0, "encode": 0, "px": 0, "px_setup": 0, "sm_word": 0, "irq_run": 0, "timer": 0},
    # RP2040 at 125 MHz running bytecode.
    "rp2": {"ticks": 3, "pin_r": 6, "pin_w": 6, "encode": 700, "px": 30, "px_setup": 20, "sm_word": 3, "irq_run": 8, "timer": 10},
    # ESP32-S3 at 240 MHz.
    "esp32": {"ticks": 2, "pin_r": 3, "pin_w": 3, "encode": 300, "px": 30, "px_setup": 120, "sm_word": 0, "irq_run": 25,
              "timer": 10},
}
MODELS = {
    # irq: kind of pin IRQ; lat: latency range (us); gc: (every us, pause us) or None
    "ideal": {"port": "rp2", "irq": "ideal", "lat": (0, 0), "gc": None, "costs": "ideal"},
    "rp2": {"port": "rp2", "irq": "hard", "lat": (10, 20), "gc": (2000000, 4000), "costs": "rp2"},
    "esp32": {"port": "esp32", "irq": "soft", "lat": (30, 150), "gc": None, "costs": "esp32"},
    "esp32-gc": {"port": "esp32", "irq": "soft", "lat": (30, 150), "gc": (2000000, 30000), "costs": "esp32"},
    # A baseline: the port keeps collecting by itself whatever the firmware asks (the firmware before
    # gc.disable()), so the bench can show what turning that off is worth, in the same run.
    "esp32-gc-auto": {"port": "esp32", "irq": "soft", "lat": (30, 150), "gc": (2000000, 30000), "costs": "esp32", "auto": True},
    # esp32 whose serial link is the port's console (Console below): on native USB, and on USB-Serial/JTAG
    # (which after one timeout drops at once what finds no room); the watchdog resets these boards.
    "esp32-usb": {"port": "esp32", "irq": "soft", "lat": (30, 150), "gc": None, "costs": "esp32",
                  "console": (500, False, True), "wdt": True},
    "esp32-jtag": {"port": "esp32", "irq": "soft", "lat": (30, 150), "gc": None, "costs": "esp32",
                   "console": (200, True, False), "wdt": True},
}
SCHED_DEPTH = 8  # MICROPY_SCHEDULER_DEPTH on ports/esp32 and ports/rp2

MODEL_NAME = os.getenv("BATTLEMENT_BOARD") or "ideal"
if MODEL_NAME not in MODELS:
    raise SystemExit("BATTLEMENT_BOARD must be one of " + ", ".join(MODELS))
MODEL = MODELS[MODEL_NAME]
C = COSTS[MODEL["costs"]]
sim_port = MODEL["port"]

_pins = {}
_mux = {}  # sig pin -> (select pins, {channel: level})
_sim = [None, b"", None]  # socket, partial input, poller
# Clock state: [virtual now, last real ticks_us or None when frozen, inside a handler, masked until,
#               VM blocked until, next automatic GC, automatic GC off]
_st = [0, time.ticks_us(), False, 0, 0, 0, False]
_edges = []  # [t, pin, level] waiting to happen, in time order
_ei = [0]
_costed = [False]
_hard = []  # rp2: pins whose handler waits to run (one call per pin however many edges)
_soft = []  # esp32: [due, pin] scheduled handler calls, oldest first
stats = {"edges": 0, "irqs": 0, "coalesced": 0, "sched_lost": 0, "gc": 0, "unasked": 0, "masked_us": 0, "late_max": 0,
         "ticks": 0}
_unasked = []  # [(at, us)] pauses the firmware did not ask for (a flash write, Wi-Fi), in time order
_rng = [int(os.getenv("BATTLEMENT_SEED") or "1") * 2654435761 & 0xFFFFFFFF or 1]
if MODEL["gc"]:
    _st[5] = MODEL["gc"][0]


def _rand(lo, hi):
    """xorshift32: the same latencies for the same seed on every run."""
    if hi <= lo:
        return lo
    x = _rng[0]
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    _rng[0] = x
    return lo + x % (hi - lo + 1)


def _lat():
    return _rand(MODEL["lat"][0], MODEL["lat"][1])


# --- the clock and the event engine ---------------------------------------------------


def now():
    return _st[0]


# Models with scheduled handlers (the firmware reads a long stretch between two drains of its ring as a
# pause it did not ask for): real time counts only where the board idles too, so a busy test machine
# never shows up on the board's clock. None: the firmware runs, its time is the work it does (COSTS);
# an instant: the sensing loop sleeps until then (app._sensing: sleep_ms(1) after feeding the watchdog);
# -1: the port waits for the host (Console), as long as the host takes.
_idle = [None]
SLEEP_US = 1000


def _real():
    last = _st[1]
    if last is not None:
        r = time.ticks_us()
        d = time.ticks_diff(r, last)
        _st[1] = r
        if d > 0 and MODEL["irq"] == "soft":
            w = _idle[0]
            if w is None:
                return
            if w >= 0 and d >= w - _st[0]:
                _idle[0] = None  # the sleep is over; the rest was the host's
                d = w - _st[0]
        if d > 0:
            run_until(_st[0] + d)


def _next_irq():
    """(due, index) of the next handler call, or (None, -1)."""
    if MODEL["irq"] == "soft":
        if _soft:
            return max(_soft[0][0], _st[4]), 0
        return None, -1
    best = None
    k = -1
    for i in range(len(_hard)):
        d = _hard[i]._due
        if best is None or d < best:
            best = d
            k = i
    if best is not None and best < _st[3]:
        best = _st[3] + _lat()  # masked: runs once interrupts come back on
        _hard[k]._due = best
    return best, k


def pauses(windows):
    """Pauses the firmware did not ask for, [(at_us, length_us)]: from at the VM is held (no handler runs,
    nor the firmware: the clock it reads next is past the pause), as a flash write or Wi-Fi holds it."""
    _unasked[:] = sorted(tuple(w) for w in windows)


def _next_world():
    """When the next edge or timer alarm happens (None: nothing waits)."""
    te = _edges[_ei[0]][0] if _ei[0] < len(_edges) else None
    if _timers and (te is None or _timers[0][0] < te):
        return _timers[0][0]
    return te


def run_until(t):
    """Let every edge, timer alarm and handler call due up to t happen, in time order; then the clock reads t."""
    while True:
        if _unasked and _unasked[0][0] <= t and not _st[2]:
            at, us = _unasked[0]
            te = _next_world()
            ti, _ = _next_irq()
            if (te is None or at <= te) and (ti is None or at <= ti):
                _unasked.pop(0)
                _st[0] = max(_st[0], at)
                stats["unasked"] += 1
                gc_windows.append((_st[0], _st[0] + us))
                _st[4] = max(_st[4], _st[0] + us)
                t = max(t, _st[0] + us)  # the firmware itself waits it out too
                continue
        te = _next_world()
        ti, k = _next_irq()
        if te is not None and (ti is None or te <= ti) and te <= t and _timers and _timers[0][0] == te:
            _st[0] = max(_st[0], te)
            _timers.pop(0)[1]._alarm(te)
        elif te is not None and (ti is None or te <= ti) and te <= t:
            _, p, lv = _edges[_ei[0]]
            _ei[0] += 1
            if _ei[0] >= 32 and _ei[0] * 2 > len(_edges):  # past edges go: the firmware's heap is small
                del _edges[: _ei[0]]
                _ei[0] = 0
            _st[0] = max(_st[0], te)
            _pins[p]._edge(lv, te)
        elif ti is not None and ti <= t:
            _st[0] = max(_st[0], ti)
            if MODEL["irq"] == "soft":
                due, p = _soft.pop(0)
            else:
                p = _hard.pop(k)
                due = p._edge_t
            late = _st[0] - due
            stats["late_max"] = max(stats["late_max"], late)
            p._call()
            _st[0] += C["irq_run"]  # the handler's own run: the next one waits for it
        else:
            break
    _st[0] = max(_st[0], t)


def work(us, blocks=False):
    """The firmware spends us of CPU time; blocks=True: in one C call, so no scheduled handler runs."""
    if _st[2]:
        return  # inside a handler: its time is in the latency figures
    gc = MODEL["gc"]
    if gc and not _st[6] and _st[0] >= _st[5]:
        collect()
    if us <= 0:
        return
    end = _st[0] + us
    if blocks and end > _st[4]:
        _st[4] = end
    run_until(end)


gc_windows = []  # (from, to) of every collection, so tests can tell what a pause hid


def collect():
    """A garbage collection: the VM stops for the model's pause (hard IRQs on rp2 still run)."""
    gc = MODEL["gc"]
    if not gc:
        return
    stats["gc"] += 1
    gc_windows.append((_st[0], _st[0] + gc[1]))
    _st[5] = _st[0] + gc[1] + gc[0]
    work(gc[1], True)


def gc_manual():
    """gc.disable() on the board: the port no longer collects by itself (only collect() pauses)."""
    _st[6] = not MODEL.get("auto")


def mask(us):
    """Interrupts off for us (machine.bitstream): hard IRQs wait, and so does the CPU."""
    if us <= 0:
        return
    stats["masked_us"] += us
    end = _st[0] + us
    if MODEL["irq"] == "hard":
        _st[3] = max(_st[3], end)
    work(us, True)


def sim_ticks_us():
    """The firmware's clock (hal.ticks_us): virtual, it moves with the work done."""
    if _st[2]:
        return _st[0]  # inside a handler: the instant it runs
    if not _costed[0]:
        _costed[0] = True
        _cost_encoding()
    _real()
    work(C["ticks"])
    return _st[0]


def sim_ticks_ms():
    return _st[0] // 1000


def schedule(timeline):
    """Edges [(t_us, pin, level)] in time order, at absolute virtual instants."""
    for t, p, lv in timeline:
        pin(p)
        _edges.append((t, p, lv))


def _at(t, p, lv):
    """One edge at t, kept in time order among those waiting."""
    pin(p)
    i = len(_edges)
    while i > _ei[0] and _edges[i - 1][0] > t:
        i -= 1
    _edges.insert(i, (t, p, lv))


def next_due():
    """When the next edge or garbage collection is due (None: nothing scheduled)."""
    t = _edges[_ei[0]][0] if _ei[0] < len(_edges) else None
    if MODEL["gc"] and not _st[6] and (t is None or _st[5] < t):
        t = _st[5]
    if _unasked and (t is None or _unasked[0][0] < t):
        t = _unasked[0][0]
    return t


def quiet():
    """No edge and no handler call is waiting."""
    return not _hard and not _soft


def advance(us):
    run_until(_st[0] + us)


class Pin(PinBase):
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4  # as on rp2 (GPIO_IRQ_EDGE_FALL)
    IRQ_RISING = 8

    def __init__(self, id, mode=-1, pull=None, value=None):
        old = _pins.get(id)
        self.id = id
        self.mode = mode
        self.pull = pull
        self._v = old._v if old is not None else (1 if pull == Pin.PULL_UP else 0)
        if value is not None:
            self._v = 1 if value else 0
        self._handler = None
        self._trigger = 0
        self._flags = 0
        self._due = 0
        self._edge_t = 0
        self.hard = False
        _pins[id] = self

    def init(self, mode=-1, pull=None, value=None):
        self.mode = mode
        if value is not None:
            self._v = 1 if value else 0

    def _level(self):
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

    def value(self, v=None):
        if v is None:
            work(C["pin_r"])
            return self._level()
        work(C["pin_w"])
        self._v = 1 if v else 0
        return None

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def __call__(self, v=None):
        return self.value(v)

    def irq(self, handler=None, trigger=None, hard=None):
        if handler is None and trigger is None and hard is None:
            return self  # pin.irq(): the irq object, for flags(); nothing changes
        if trigger is None:
            trigger = Pin.IRQ_FALLING | Pin.IRQ_RISING
        if hard is not None and MODEL["irq"] == "soft":
            # ports/esp32 machine_pin.c takes handler, trigger, wake: hard= is an unknown keyword.
            raise TypeError("unexpected keyword argument 'hard'")
        self._handler = handler
        self._trigger = trigger
        self.hard = bool(hard)
        return self

    def flags(self):
        """Edges latched since the handler was last called (Pin.irq().flags() on rp2)."""
        return self._flags

    def _edge(self, level, t):
        level = 1 if level else 0
        if level == self._v:
            return
        self._v = level
        stats["edges"] += 1
        h = self._handler
        bit = Pin.IRQ_RISING if level else Pin.IRQ_FALLING
        if h is None or not self._trigger & bit:
            return
        kind = MODEL["irq"]
        if kind == "soft":
            _schedule(self, t)
            return
        if self in _hard:
            self._flags |= bit  # the pin's IRQ is still pending: one call for both edges
            stats["coalesced"] += 1
            return
        self._flags = bit
        self._edge_t = t
        self._due = t + _lat()
        _hard.append(self)

    def _call(self):
        h = self._handler
        if h is None:
            return
        stats["irqs"] += 1
        _st[2] = True
        try:
            if self.hard or MODEL["irq"] == "ideal":
                micropython.heap_lock()
                try:
                    h(self)
                finally:
                    micropython.heap_unlock()
            else:
                h(self)
        finally:
            _st[2] = False
            self._flags = 0

    def drive(self, level):
        """An edge now, its IRQ delivered as the model says (immediately in the ideal model)."""
        _at(_st[0], self.id, level)
        run_until(_st[0])


def _schedule(obj, t):
    """mp_sched_schedule() from an ISR at t: obj._call() runs when the scheduler gets to it (8 slots)."""
    if len(_soft) >= SCHED_DEPTH:
        stats["sched_lost"] += 1  # it refuses: the edge (or alarm) is never reported
        return
    _soft.append([t + _lat(), obj])


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


def bitstream(p, encoding, timing, buf):
    """machine.bitstream: on rp2 it sends with interrupts off (mp_hal_quiet_timing_enter)."""
    us = C["px_setup"] + C["px"] * len(buf) // 3
    if sim_port == "rp2":
        mask(us)
    else:
        work(us, True)  # ports/esp32: RMT sends, the VM waits in rmt_tx_wait_all_done()


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self.fed = time.ticks_ms()

    def feed(self):
        t = time.ticks_ms()
        late = time.ticks_diff(t, self.fed)
        if MODEL.get("wdt") and late > self.timeout:
            # The board would have reset at the timeout (a new boot, its outbox gone): this one stops, in words.
            print("watchdog: not fed for %d ms (timeout %d ms): the board resets" % (late, self.timeout), file=sys.stderr)
            sys.exit(3)
        self.fed = t
        poll()
        if MODEL["irq"] == "soft":
            _real()  # the cycle's own time was its work
            _idle[0] = _st[0] + SLEEP_US  # then the sensing loop sleeps 1 ms


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


if MODEL.get("console"):
    import builtins

    _open = builtins.open

    def _console_open(path, mode="r", *args):
        f = _open(path, mode, *args)
        return Console(f) if mode == "r+b" else f  # the serial link's port (links.py)

    builtins.open = _console_open


_timers = []  # [alarm at, Timer] armed hardware timers, in time order


class Timer:
    """A hardware timer as ports/esp32/machine_timer.c has it: its alarm's ISR schedules the callback
    (no hard=), which runs like a pin handler (latency, the scheduler's 8 slots, held by a pause).
    Other models keep a timer that never fires (the firmware uses none there)."""

    ONE_SHOT = 0
    PERIODIC = 1

    def __init__(self, id=-1, **kw):
        self.id = id
        self.cb = None
        self.us = 0
        self.repeat = False
        if kw:
            self.init(**kw)

    def init(self, mode=1, callback=None, period=-1, tick_hz=1000, freq=None, hard=False):
        if hard and MODEL["irq"] == "soft":
            raise ValueError("hard Timers are not implemented")
        self.deinit()
        self.cb = callback
        self.repeat = mode == Timer.PERIODIC
        self.us = max(1, int(1000000 / freq) if freq else period * 1000000 // tick_hz)
        work(C["timer"])  # setting the alarm is a C call (inside a handler: part of its run)
        if MODEL["irq"] == "soft" and callback is not None:
            self._arm(_st[0] + self.us)

    def _arm(self, at):
        i = len(_timers)
        while i > 0 and _timers[i - 1][0] > at:
            i -= 1
        _timers.insert(i, [at, self])

    def deinit(self):
        for i in range(len(_timers) - 1, -1, -1):
            if _timers[i][1] is self:
                _timers.pop(i)

    def _alarm(self, t):
        """The alarm's ISR at t."""
        if self.repeat:
            self._arm(t + self.us)
        _schedule(self, t)

    def _call(self):
        if self.cb is None:
            return
        stats["ticks"] += 1
        _st[2] = True
        try:
            self.cb(self)
        finally:
            _st[2] = False


def unique_id():
    return b"\xba\x77\x1e\x00\x00\x01"


def freq(*a):
    return 125000000 if sim_port == "rp2" else 240000000


def reset():
    print("machine.reset()", file=sys.stderr)
    sys.exit(3)


def soft_reset():
    sys.exit(3)


def reset_cause():
    return 1


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


def _cost_encoding():
    """Encoding a frame is Python work too: wire.encode costs the port's figure."""
    try:
        import wire
    except ImportError:
        return
    enc = wire.encode
    if getattr(enc, "_costed", False):
        return

    def encode(typ, fields):
        work(C["encode"])
        return enc(typ, fields)

    wire.encode = encode


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
    data = (line if isinstance(line, (bytes, bytearray)) else line.encode()) + b"\n"
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
        _st[1] = None
    elif op == "sync":
        report("sync " + a[1])
    elif op == "stats":
        report("stats " + json.dumps(stats))
    elif op == "exit":
        sys.exit(0)


def poll():
    """Apply whatever the controller sent; called from WDT.feed(), i.e. every sensing cycle."""
    s = _sim[0]
    if s is None:
        return
    _real()
    if not _run_queued():
        return
    for _ in range(16):  # up to 2 KB a cycle, in small pieces
        if not _sim[2].poll(0):
            return
        try:
            data = s.read(128)  # small reads: the heap-limit tests measure the firmware, not the fake
        except OSError:
            return
        if not data:
            sys.exit(0)  # controller went away: end the simulated board
        buf = _sim[1] + data if _sim[1] else data
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            _queued.extend(buf[:nl].decode().split(";"))
            buf = buf[nl + 1 :]
        _sim[1] = buf
        if not _run_queued():
            return


_queued = []  # control commands not applied yet
_cursor = [0]  # models with scheduled handlers: the instant the world has reached with the commands so far


def _run_queued():
    """Apply queued commands in order. On a board with scheduled handlers the world runs apart from the
    board: `set` is an edge at the instant the `adv`s before it reached (the firmware meets it wherever its
    work has the clock then, as a board does), and the clock runs on only with the firmware's work and its
    loop's sleeps, so no host stall becomes a pause on the board. Other commands wait until the clock has
    reached them. False while one waits."""
    while _queued:
        a = _queued[0].split()
        if MODEL["irq"] != "soft" or not a:
            _apply(_queued.pop(0))
            continue
        at = max(_cursor[0], _st[0])
        if a[0] == "adv":
            _cursor[0] = at + int(a[1])
        elif a[0] == "set":
            _at(at, int(a[1]), int(a[2]))
            run_until(_st[0])
        elif _st[0] < at:
            return False
        else:
            _apply(_queued[0])
        _queued.pop(0)
    return True


_connect()
