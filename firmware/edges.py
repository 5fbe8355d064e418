"""Edge capture: pin IRQs write a timestamp, a level and a channel number into a preallocated ring.

No allocation in a handler: on rp2 they run as hard IRQs. Timing figures behind the margins:
docs/hardware.md, "Timing". The sensing task drains the ring into the detectors (beam.py,
sensors.py). On esp32 (scheduled handlers) a Watch times the first 2 ms after each edge, so a
pause too short for the sensing loop to notice (it sleeps 1 ms a pass) is still seen.
"""

from array import array

import hal
import machine
from micropython import const

# An edge reaches the ring this long after it happens at most (rp2 hard IRQ 10-20 us; esp32's
# scheduler runs a handler within ~150 us once the VM is free): decisions that need "no edge
# since" wait at least this long, so one still on its way cannot be missed.
SAFE_US = 500
# esp32: a scheduled handler runs within this of its ISR once the VM is free (30-150 us).
LATENCY_US = 150
# A pin that disagrees with its detector this long, with no edge on the way, lost an edge.
REPAIR_US = 3000


class Ring:
    """Fixed-size edge log filled by IRQs (producer) and drained by the sensing task (consumer)."""

    def __init__(self, size=256):
        n = 1
        while n < size:
            n <<= 1
        self.mask = n - 1
        self.ts = array("i", bytes(4 * n))
        self.ch = bytearray(n)
        self.lv = bytearray(n)
        self.ctl = array("i", (0, 0, 0))  # head (IRQ writes), tail (task writes), dropped edges
        self.watch = None  # esp32: the Watch its pins arm (EdgePin)

    def pending(self):
        c = self.ctl
        return (c[0] - c[1]) & self.mask

    def ran_within(self, a, b):
        """Some edge waiting here was stamped well inside a to b (its handler ran then)."""
        c = self.ctl
        i = c[1]
        while i != c[0]:
            if hal.diff(self.ts[i], a) > SAFE_US and hal.diff(b, self.ts[i]) > SAFE_US:
                return True
            i = (i + 1) & self.mask
        return False

    def drain(self, channels, before=None):
        """Hand every captured edge to channels[ch].edge(level, t); returns how many.

        A pause the Watch saw is told to the detectors first. before(t), if given, runs ahead of
        each edge (to judge what was over by then, in time order).
        """
        if self.watch is not None:
            self.watch.tell(channels)
        c = self.ctl
        t = c[1]
        h = c[0]
        n = 0
        while t != h:
            if before is not None:
                before(self.ts[t])
            channels[self.ch[t]].edge(self.lv[t], self.ts[t])
            t = (t + 1) & self.mask
            n += 1
        c[1] = t
        return n


# esp32: the Watch ticks this often (us) for WATCH_FOR_US after each edge, and a tick later than
# WATCH_US + LATE_US after the one before (beyond the firmware's own LED frame: app.py tells it, Watch.own)
# found the VM held. A hold it cannot see is shorter than that (about 0.35 ms): a break under 0.5 ms stays
# under min_pulse_us (1 ms) even when its clear waited one out. LATE_US is over the scheduler's
# latency (LATENCY_US) and a tick's own run.
WATCH_US = 150
LATE_US = 200
WATCH_FOR_US = 2000  # the longest min_pulse_us (1.8 ms) and a latency: past that a break is a ball anyway
# The Watch's state, one array("i"): it is written from its callback and the pins' handlers.
_UNTIL = const(0)  # watch until
_TICK = const(1)  # the last tick (the VM ran then)
_H0 = const(2)  # the hold not told yet: from
_H1 = const(3)  # ... to
_NOTED = const(4)  # holds noted (by the ticks)
_TOLD = const(5)  # ... and told (by the drains)
_OWN0 = const(6)  # the firmware's own last hold (an LED frame: its length is known, it hides nothing): from
_OWN1 = const(7)  # ... to


class Watch:
    """esp32: a timer that proves the VM ran, every WATCH_US for the first WATCH_FOR_US after each edge.

    The sensing loop sleeps 1 ms a pass, so a pause (a flash write) that begins and ends inside its
    sleep leaves no trace on its clock, and a clear whose handler waited one out makes a 0.4 ms
    flicker look like a ball. The pins' handlers arm this (scheduled, like them: a one-shot re-armed
    from its own callback holds at most one of the scheduler's slots). A tick that runs late saw the
    VM held from the tick before it; the next drain tells the beams, whose edges stamped there are
    untimed (Beam.paused). Only after edges: a lit board costs nothing.
    """

    def __init__(self, timer):
        self.timer = timer
        self.st = array("i", bytes(4 * 8))
        self.on = False
        self.cb = self._tick  # made once: a bound method per re-arm would be garbage
        self.held = 0  # holds seen

    def arm(self, t):
        """From an edge's handler stamped t: watch until WATCH_FOR_US after it."""
        st = self.st
        st[_UNTIL] = hal.add(t, WATCH_FOR_US)
        if not self.on:
            self.on = True
            st[_TICK] = t
            self.timer.init(mode=machine.Timer.ONE_SHOT, freq=1000000 // WATCH_US, callback=self.cb)

    def own(self, t0, t1):
        """The firmware held the VM itself from t0 to t1 (an LED frame): no pause it missed. Told after the
        frame, when the tick it held back has run: tell() takes it off that tick's lateness."""
        self.st[_OWN0] = t0
        self.st[_OWN1] = t1

    def _tick(self, _timer):
        t = hal.ticks_us()
        st = self.st
        if hal.diff(t, st[_TICK]) > WATCH_US + LATE_US:
            if st[_NOTED] == st[_TOLD]:
                st[_H0] = st[_TICK]  # a new hold (else it joins the one not told yet)
            st[_H1] = t
            st[_NOTED] += 1
            self.held += 1
        st[_TICK] = t
        if hal.diff(st[_UNTIL], t) > 0:
            self.timer.init(mode=machine.Timer.ONE_SHOT, freq=1000000 // WATCH_US, callback=self.cb)
        else:
            self.on = False

    def tell(self, channels):
        """Hand the hold seen since the last drain to every detector that times its edges by pauses."""
        st = self.st
        n = st[_NOTED]
        if n == st[_TOLD]:
            return
        p0 = st[_H0]
        p1 = st[_H1]
        st[_TOLD] = n
        if hal.diff(st[_OWN0], p0) >= 0 and hal.diff(p1, st[_OWN0]) >= 0 and \
                hal.diff(p1, p0) - hal.diff(st[_OWN1], st[_OWN0]) <= WATCH_US + LATE_US:
            return  # late only by the firmware's own frame, which began in the stretch (and held its tick)
        for det in channels:
            if hasattr(det, "paused"):
                det.paused(p0, p1, LATENCY_US)  # the VM ran the tick at p0: an edge after it came after its alarm


_BOTH = machine.Pin.IRQ_RISING | machine.Pin.IRQ_FALLING


class EdgePin:
    """A GPIO whose every edge lands in the ring with a timestamp.

    rp2 takes hard IRQs: the handler runs 10-20 us after the edge and reads the level then;
    when interrupts were masked both edges may be latched in one call (irq().flags()), and
    both are logged. esp32 has no hard pin IRQs: the handler is scheduled and may run
    milliseconds late, when the level has long changed again, so it does not read the pin;
    the ISR queues one call per edge, and edges alternate, so the level is the opposite of
    the last one logged. There each edge also arms the ring's Watch.
    """

    def __init__(self, ring, ch, pin_no, pull):
        self.ring = ring
        self.ch = ch
        self.pin = machine.Pin(pin_no, machine.Pin.IN, pull)
        self.lv = self.pin.value()  # the level the last logged edge left
        self.hard = True
        try:
            self.pin.irq(handler=self._irq, trigger=_BOTH, hard=True)
        except (TypeError, ValueError):  # esp32: no hard= (ports/esp32/machine_pin.c)
            self.hard = False
            if ring.watch is None:
                ring.watch = Watch(machine.Timer(0))
            self.watch = ring.watch
            self.pin.irq(handler=self._soft, trigger=_BOTH)

    def _irq(self, pin):
        # Hard IRQ: no allocation, no exceptions, just record.
        t = hal.ticks_us()
        lv = pin.value()
        if pin.irq().flags() == _BOTH:
            self._put(1 - lv, t)  # two edges latched while masked: the other level came first
        self._put(lv, t)

    def _soft(self, pin):
        t = hal.ticks_us()
        self._put(1 - self.lv, t)
        self.watch.arm(t)

    def _put(self, lv, t):
        self.lv = lv
        r = self.ring
        c = r.ctl
        h = c[0]
        nxt = (h + 1) & r.mask
        if nxt == c[1]:
            c[2] += 1  # full: count it, never block or allocate
            return
        r.ts[h] = t
        r.lv[h] = lv
        r.ch[h] = self.ch
        c[0] = nxt

    def resync(self, lv):
        self.lv = lv

    def value(self):
        return self.pin.value()
