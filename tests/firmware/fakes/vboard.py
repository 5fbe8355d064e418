"""The virtual-time board's clock and event engine (machine.py is the module the firmware imports).

The clock in microseconds moves with the work the firmware does (COSTS), edges and timer alarms happen
at absolute instants, and handlers run through the chosen port's IRQ model (MODELS): see machine.py.
"""

import os
import time

import micropython
from umachine import PinBase

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
    # esp32 whose serial link is the port's console (vserial.Console): on native USB, and on USB-Serial/JTAG
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
del MODELS, COSTS  # the other models' tables: not in the heap the firmware is measured in
sim_port = MODEL["port"]

_pins = {}  # number -> Pin
# Each pin's state, by its number (GPIO 0-48 on an ESP32-S3, 0-29 on an RP2040): a board's Pin objects
# are in ROM, and attributes here would take the heap the tests measure as the firmware's.
NPINS = 64
_lv = bytearray(NPINS)  # level
_hnd = [None] * NPINS  # IRQ handler
_trig = bytearray(NPINS)  # IRQ trigger bits
_flg = bytearray(NPINS)  # edges latched since the handler last ran (rp2)
_hardf = bytearray(NPINS)  # 1: a hard IRQ
_due = [0] * NPINS  # rp2: when its waiting handler runs (lists: an array("q") item is read as a long int)
_edge_t = [0] * NPINS  # ... and when the edge it reports happened
_mux = {}  # sig pin -> (select pins, {channel: level})
# Clock state: [virtual now, last real ticks_us or None when frozen, inside a handler, masked until,
#               VM blocked until, next automatic GC, automatic GC off]
_st = [0, time.ticks_us(), False, 0, 0, 0, False]
_edges = []  # [t, pin, level] waiting to happen, in time order
_ei = [0]
_costed = [False]
_hard = []  # rp2: pins whose handler waits to run (one call per pin however many edges)
_soft = []  # esp32: [due, pin] scheduled handler calls, oldest first
# Spent [due, pin] and [at, Timer] pairs, used again: what the board model allocates while the firmware senses
# shares the firmware's heap, and the tests measure that the firmware allocates nothing then.
_spare = []
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
# -1: the port waits for the host (vserial.Console), as long as the host takes.
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


_nk = [-1]  # _next_irq()'s index (kept here: a tuple returned each time would be garbage in the firmware's heap)


def _next_irq():
    """When the next handler call is due (None: none waits); its index in _hard goes to _nk[0]."""
    if MODEL["irq"] == "soft":
        _nk[0] = 0
        return max(_soft[0][0], _st[4]) if _soft else None
    best = None
    k = -1
    for i in range(len(_hard)):
        d = _due[_hard[i].id]
        if best is None or d < best:
            best = d
            k = i
    if best is not None and best < _st[3]:
        best = _st[3] + _lat()  # masked: runs once interrupts come back on
        _due[_hard[k].id] = best
    _nk[0] = k
    return best


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
            ti = _next_irq()
            if (te is None or at <= te) and (ti is None or at <= ti):
                _unasked.pop(0)
                _st[0] = max(_st[0], at)
                stats["unasked"] += 1
                gc_windows.append((_st[0], _st[0] + us))
                _st[4] = max(_st[4], _st[0] + us)
                t = max(t, _st[0] + us)  # the firmware itself waits it out too
                continue
        te = _next_world()
        ti = _next_irq()
        k = _nk[0]
        if te is not None and (ti is None or te <= ti) and te <= t and _timers and _timers[0][0] == te:
            _st[0] = max(_st[0], te)
            e = _timers.pop(0)
            tm = e[1]
            e[1] = None
            _spare.append(e)
            tm._alarm(te)
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
                e = _soft.pop(0)
                due, p = e[0], e[1]
                e[1] = None
                _spare.append(e)
            else:
                p = _hard.pop(k)
                due = _edge_t[p.id]
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
        if not 0 <= id < NPINS:
            raise ValueError("invalid pin")
        self.id = id
        if id not in _pins:
            _lv[id] = 1 if pull == Pin.PULL_UP else 0  # the same pin again keeps its level
        _hnd[id] = None
        _trig[id] = _flg[id] = _hardf[id] = 0
        if value is not None:
            _lv[id] = 1 if value else 0
        _pins[id] = self

    def init(self, mode=-1, pull=None, value=None):
        if value is not None:
            _lv[self.id] = 1 if value else 0

    def _level(self):
        m = _mux.get(self.id)
        if m is not None:
            ch = 0
            sel = m[0]
            for i in range(len(sel)):
                p = _pins.get(sel[i])
                if p is not None and _lv[p.id]:
                    ch |= 1 << i
            return m[1].get(ch, _lv[self.id])
        return _lv[self.id]

    def value(self, v=None):
        if v is None:
            work(C["pin_r"])
            return self._level()
        work(C["pin_w"])
        _lv[self.id] = 1 if v else 0
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
        k = self.id
        _hnd[k] = handler
        _trig[k] = trigger
        _hardf[k] = 1 if hard else 0
        return self

    def flags(self):
        """Edges latched since the handler was last called (Pin.irq().flags() on rp2)."""
        return _flg[self.id]

    def _edge(self, level, t):
        level = 1 if level else 0
        k = self.id
        if level == _lv[k]:
            return
        _lv[k] = level
        stats["edges"] += 1
        bit = Pin.IRQ_RISING if level else Pin.IRQ_FALLING
        if _hnd[k] is None or not _trig[k] & bit:
            return
        kind = MODEL["irq"]
        if kind == "soft":
            _schedule(self, t)
            return
        if self in _hard:
            _flg[k] |= bit  # the pin's IRQ is still pending: one call for both edges
            stats["coalesced"] += 1
            return
        _flg[k] = bit
        _edge_t[k] = t
        _due[k] = t + _lat()
        _hard.append(self)

    def _call(self):
        k = self.id
        h = _hnd[k]
        if h is None:
            return
        stats["irqs"] += 1
        _st[2] = True
        try:
            if _hardf[k] or MODEL["irq"] == "ideal":
                micropython.heap_lock()
                try:
                    h(self)
                finally:
                    micropython.heap_unlock()
            else:
                h(self)
        finally:
            _st[2] = False
            _flg[k] = 0

    def drive(self, level):
        """An edge now, its IRQ delivered as the model says (immediately in the ideal model)."""
        _at(_st[0], self.id, level)
        run_until(_st[0])


def _schedule(obj, t):
    """mp_sched_schedule() from an ISR at t: obj._call() runs when the scheduler gets to it (8 slots)."""
    if len(_soft) >= SCHED_DEPTH:
        stats["sched_lost"] += 1  # it refuses: the edge (or alarm) is never reported
        return
    e = _spare.pop() if _spare else [0, None]
    e[0] = t + _lat()
    e[1] = obj
    _soft.append(e)


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


_timers = []  # [alarm at, Timer] armed hardware timers, in time order


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
