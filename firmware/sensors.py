"""Sensors: edge capture in IRQs, decisions in the main loop.

IRQ handlers only write a timestamp, a level and a channel number into a
preallocated ring (no allocation: they may run as hard IRQs on rp2). The
sensing task drains the ring and feeds each channel's detector:

- Beam: a ball is a break of at least min_pulse_us (shorter breaks are
  glitches); after a counted ball the sensor ignores breaks that start within
  lockout_us of the beam clearing (the ball's rim flickering), so balls a few
  ms apart still count one by one.
- TwoBeam: mouth + lower beam; only a ball crossing the lower beam is "in", a
  mouth break with no lower break is a bounce-out and is only counted.
- Settled (tilt, presence): the reading must hold for settle_us before it is
  reported, so chatter from a wobbling tower or a hand passing is ignored.
"""

from array import array

import hal
import machine

ACTIVE_LOW = 0


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

    def put(self, ch, level, t):
        c = self.ctl
        h = c[0]
        nxt = (h + 1) & self.mask
        if nxt == c[1]:
            c[2] += 1  # full: count it, never block or allocate
            return
        self.ts[h] = t
        self.lv[h] = level
        self.ch[h] = ch
        c[0] = nxt

    def pending(self):
        c = self.ctl
        return (c[0] - c[1]) & self.mask

    def drain(self, channels):
        """Hand every captured edge to channels[ch].edge(level, t); returns how many."""
        c = self.ctl
        t = c[1]
        h = c[0]
        n = 0
        while t != h:
            channels[self.ch[t]].edge(self.lv[t], self.ts[t])
            t = (t + 1) & self.mask
            n += 1
        c[1] = t
        return n


class EdgePin:
    """A GPIO whose every edge lands in the ring with a timestamp."""

    def __init__(self, ring, ch, pin_no, pull):
        self.ring = ring
        self.ch = ch
        self.pin = machine.Pin(pin_no, machine.Pin.IN, pull)
        trig = machine.Pin.IRQ_RISING | machine.Pin.IRQ_FALLING
        try:
            self.pin.irq(handler=self._irq, trigger=trig, hard=True)
        except (TypeError, ValueError):  # ports without hard IRQs
            self.pin.irq(handler=self._irq, trigger=trig)

    def _irq(self, pin):
        # Runs in interrupt context: no allocation, no exceptions, just record.
        r = self.ring
        c = r.ctl
        h = c[0]
        nxt = (h + 1) & r.mask
        if nxt == c[1]:
            c[2] += 1
            return
        r.ts[h] = hal.ticks_us()
        r.lv[h] = pin.value()
        r.ch[h] = self.ch
        c[0] = nxt

    def value(self):
        return self.pin.value()


class Beam:
    """Pulse detector for one IR break-beam; on_ball(start_t, width_us) for each counted ball."""

    def __init__(self, active, min_pulse_us, lockout_us, on_ball):
        self.read = None  # the pin's current level, to recover from a lost edge
        self.active = active
        self.min_pulse_us = min_pulse_us
        self.lockout_us = lockout_us
        self.on_ball = on_ball
        self.start = -1  # t of the break edge while the beam is broken
        self.until = -1  # end of the lockout after the last ball
        self.glitches = 0
        self.locked = 0

    def edge(self, level, t):
        if level == self.active:
            if self.start < 0:
                self.start = t
                if self.until >= 0 and hal.diff(t, self.until) >= 0:
                    self.until = -1
            return
        s = self.start
        if s < 0:
            return  # a clear edge without a break (missed edge): nothing to measure
        self.start = -1
        w = hal.diff(t, s)
        if w < self.min_pulse_us:
            self.glitches += 1
            return
        if self.until >= 0 and hal.diff(s, self.until) < 0:
            self.locked += 1
            return
        self.until = hal.add(t, self.lockout_us)
        self.on_ball(s, w)

    def expire(self, now):
        # Forget an old lockout before the 2**30 us clock wraps around onto it.
        if self.until >= 0 and hal.diff(now, self.until) >= 0:
            self.until = -1
        # An edge lost (full ring, late soft IRQ) would leave the beam "broken" for good, or
        # miss a break in progress: line the state up with the pin again.
        if self.read is not None:
            lv = self.read()
            if (lv == self.active) != (self.start >= 0):
                self.edge(lv, now)


class Sensor:
    """Base: an id, a kind, and the board's emit(sensor, value, t, width)."""

    def __init__(self, sid, kind, emit):
        self.id = sid
        self.kind = kind
        self.emit = emit

    def poll(self, now):
        pass


class BeamSensor(Sensor):
    def __init__(self, sid, emit, active, min_pulse_us, lockout_us):
        Sensor.__init__(self, sid, "beam", emit)
        self.beam = Beam(active, min_pulse_us, lockout_us, self._ball)
        self.balls = 0

    def channels(self):
        return (self.beam,)

    def poll(self, now):
        for b in self.channels():
            b.expire(now)

    def _ball(self, t, w):
        self.balls += 1
        self.emit(self, 1, t, w)

    def set(self, key, value):
        if key == "min_us":
            self.beam.min_pulse_us = value
        elif key == "lockout_ms":
            self.beam.lockout_us = value * 1000
        else:
            return False
        return True


class TwoBeamSensor(BeamSensor):
    """Mouth beam + lower beam: "in" only when the ball crosses the lower beam."""

    def __init__(self, sid, emit, active, min_pulse_us, lockout_us):
        BeamSensor.__init__(self, sid, emit, active, min_pulse_us, lockout_us)
        self.mouth = Beam(active, min_pulse_us, lockout_us, self._mouth)
        self.waiting = False  # a ball passed the mouth and has not reached the lower beam yet
        self.bounced = 0  # mouth balls that never reached the lower beam

    def channels(self):
        return (self.mouth, self.beam)

    def _mouth(self, t, w):
        if self.waiting:
            self.bounced += 1  # the previous mouth ball never arrived below
        self.waiting = True

    def _ball(self, t, w):
        self.waiting = False
        BeamSensor._ball(self, t, w)

    def set(self, key, value):
        ok = BeamSensor.set(self, key, value)
        self.mouth.min_pulse_us = self.beam.min_pulse_us
        self.mouth.lockout_us = self.beam.lockout_us
        return ok


class Settled(Sensor):
    """Tilt or presence: report 1/0 once the reading has held still for settle_us.

    Starts as 0 (upright / vacant), so a tower already lying down at boot is
    reported as fallen once it has settled.
    """

    def __init__(self, sid, kind, emit, active, settle_us, level, now, read=None):
        Sensor.__init__(self, sid, kind, emit)
        self.active = active
        self.settle_us = settle_us
        self.level = level
        self.changed = now
        self.reported = 0
        self.read = read  # current level of a direct pin, to recover from a lost edge
        self.chatter = 0

    def channels(self):
        return (self,)

    def edge(self, level, t):
        if level != self.level:
            self.level = level
            self.changed = t
            self.chatter += 1

    def poll(self, now):
        if self.read is not None:
            lv = self.read()
            if lv != self.level:
                self.edge(lv, now)
        state = 1 if self.level == self.active else 0
        if state != self.reported and hal.diff(now, self.changed) >= self.settle_us:
            self.reported = state
            self.emit(self, state, self.changed, 0)

    def set(self, key, value):
        if key == "stable_ms":
            self.settle_us = value * 1000
            return True
        return False


class Mux:
    """A CD74HC4067-style analog multiplexer: select lines pick which channel the sig pin reads.

    Scanned from the sensing task (no IRQ): Ringo's 41 cells fit three 16-channel muxes.
    """

    def __init__(self, sig, select, pull):
        self.sig = machine.Pin(sig, machine.Pin.IN, pull)
        self.select = [machine.Pin(p, machine.Pin.OUT, value=0) for p in select]
        self.cells = []  # (channel, Settled)

    def scan(self, now):
        sel = self.select
        for ch, cell in self.cells:
            for i in range(len(sel)):
                sel[i].value((ch >> i) & 1)
            cell.edge(self.sig.value(), now)
