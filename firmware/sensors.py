"""Sensors: edge capture in IRQs, decisions in the main loop.

IRQ handlers only write a timestamp, a level and a channel number into a
preallocated ring (no allocation: they may run as hard IRQs on rp2). Timing
figures behind the thresholds: docs/hardware.md, "Timing". The
sensing task drains the ring and feeds each channel's detector:

- Beam: a ball is a dark spell of at least min_pulse_us (shorter ones are
  glitches); a break that starts within lockout_us of the beam clearing is the
  same ball (its rim flickering), so balls a few ms apart still count one by one.
  A spell that a garbage collection hid in part (esp32: its edges waited out the
  pause) and that looks too short is "blind": reported apart, never as a ball.
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

        before(t), if given, runs ahead of each edge (to judge what was over by then, in time order).
        """
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


# An edge reaches the ring this long after it happens at most (rp2 hard IRQ 10-20 us; esp32's
# scheduler runs a handler within ~150 us once the VM is free): decisions that need "no edge
# since" wait at least this long, so one still on its way cannot be missed.
SAFE_US = 500
# A pin that disagrees with its detector this long, with no edge on the way, lost an edge.
REPAIR_US = 3000


class EdgePin:
    """A GPIO whose every edge lands in the ring with a timestamp.

    rp2 takes hard IRQs: the handler runs 10-20 us after the edge and reads the level then;
    when interrupts were masked both edges may be latched in one call (irq().flags()), and
    both are logged. esp32 has no hard pin IRQs: the handler is scheduled and may run
    milliseconds late, when the level has long changed again, so it does not read the pin;
    the ISR queues one call per edge, and edges alternate, so the level is the opposite of
    the last one logged.
    """

    def __init__(self, ring, ch, pin_no, pull):
        self.ring = ring
        self.ch = ch
        self.pin = machine.Pin(pin_no, machine.Pin.IN, pull)
        self.lv = self.pin.value()  # the level the last logged edge left
        self.both = machine.Pin.IRQ_RISING | machine.Pin.IRQ_FALLING
        self.hard = True
        try:
            self.pin.irq(handler=self._irq, trigger=self.both, hard=True)
        except (TypeError, ValueError):  # esp32: no hard= (ports/esp32/machine_pin.c)
            self.hard = False
            self.pin.irq(handler=self._soft, trigger=self.both)

    def _irq(self, pin):
        # Hard IRQ: no allocation, no exceptions, just record.
        t = hal.ticks_us()
        lv = pin.value()
        if pin.irq().flags() == self.both:
            self._put(1 - lv, t)  # two edges latched while masked: the other level came first
        self._put(lv, t)

    def _soft(self, pin):
        self._put(1 - self.lv, hal.ticks_us())

    def _put(self, lv, t):
        self.lv = lv
        r = self.ring
        c = r.ctl
        h = c[0]
        nxt = (h + 1) & r.mask
        if nxt == c[1]:
            c[2] += 1
            return
        r.ts[h] = t
        r.lv[h] = lv
        r.ch[h] = self.ch
        c[0] = nxt

    def resync(self, lv):
        self.lv = lv

    def value(self):
        return self.pin.value()


class Beam:
    """Pulse detector for one IR break-beam: its edges, judged spell by spell.

    A spell is a dark spell: breaks whose gaps of light are all shorter than lockout_us (a rim
    flicker, a seam) belong to one. Once the light has held for lockout_us it is judged, once:
    - a ball (on_ball(start_t, width_us)): dark for min_pulse_us or more in all;
    - noise (counted in glitches): dark for less;
    - blocked (on_blocked(t, width_us, on)): open longer than block_us (a hand, a cup), reported
      when it passes that and again when the light has held; never a ball;
    - unknown (on_blind(t, span_us, pause_us), once per break that may have been a ball, never
      beside a ball): a pause (esp32: scheduled handlers wait it out, so edges reach the ring
      late and timeless) or a lost edge left its dark time between bounds on either side of
      min_pulse_us, or left room for more than one ball.
    An edge stamped from p0 - SAFE_US to p1 + SAFE_US may have happened any time from p0 - SAFE_US
    (or the edge before it) to its stamp; light a pause hid never joins a timed break after it.
    """

    def __init__(self, active, min_pulse_us, lockout_us, on_ball, block_us=500000):
        self.src = None  # the EdgePin, to recover from a lost edge
        self.ring = None
        self.active = active
        self.min_pulse_us = min_pulse_us
        self.lockout_us = lockout_us
        self.block_us = block_us
        self.on_ball = on_ball
        self.on_blind = None  # on_blind(t, span_us, pause_us)
        self.on_blocked = None  # on_blocked(t, width_us, on)
        self.start = -1  # first break of the open spell, -1 when none is open
        self.first = 0  # ... the earliest it may have begun
        self.broken = False  # the beam is dark now (as the edges tell)
        self.piece = 0  # when the current break began (its stamp)
        self.early = 0  # ... the earliest it may have begun
        self.last = 0  # the earliest the last edge may have happened (edges of a pin come in order)
        self.clear = 0  # when the beam last cleared
        self.seen = 0  # when the pin was last seen to agree with the edges
        self.lo = 0  # dark time of the open spell: at least
        self.hi = 0  # ... and at most
        self.hid = 0  # edges of the open spell a pause or a lost edge left untimed
        self.splits = 0  # breaks after untimed light: each may have been a ball of its own
        self.dim = False  # the last clear was untimed: a timed break never joins it
        self.blocked = False
        self.odd = -1  # since when the pin disagrees with the edges, -1 when it agrees
        self.glitches = 0
        self.locked = 0  # flickers bridged inside a ball
        self.repaired = 0
        self.blind = 0
        self.blocks = 0
        self.last = hal.ticks_us()
        # The last pause the VM took (esp32: a collection, or one the firmware noticed afterwards).
        self.p0 = 0
        self.p1 = 0
        self.paused_ever = False

    def paused(self, p0, p1):
        """The VM was held from p0 to p1: scheduled handlers waited it out."""
        self.p0 = p0
        self.p1 = p1
        self.paused_ever = True

    def _early(self, t):
        """The earliest t's edge may have happened (t itself when it was timed)."""
        if not self.paused_ever:
            return t
        if hal.diff(t, self.p1) > SAFE_US:
            self.paused_ever = False  # edges come in time order: past the pause for good (and the clock may wrap)
            return t
        e = hal.add(self.p0, -SAFE_US)
        if hal.diff(t, e) < 0:
            return t
        return self.last if hal.diff(self.last, e) > 0 else e

    def lost(self):
        """Edges may have been lost (a full scheduler queue or ring): one more break may hide here."""
        if self.blocked:
            return
        if self.start >= 0:
            self.hid += 1
            self.splits += 1
        else:
            self._blind(1, hal.add(self.p0, -SAFE_US), self.p1)

    def edge(self, level, t, early=-1):
        """An edge stamped t; early: the earliest it may have happened (-1: as the pause says)."""
        self.odd = -1
        if early < 0:
            early = self._early(t)
        hidden = early != t
        if level == self.active:
            if self.broken:
                return
            self.last = early
            if self.start >= 0:
                if hal.diff(t, self.clear) >= self.lockout_us or (self.dim and not hidden and not self.blocked):
                    self.judge()  # light held, or light a pause hid: the next break is a spell of its own
                else:
                    self.locked += 1
                    if hidden:
                        self.splits += 1  # the light before it is untimed: it may be a ball of its own
            self.broken = True
            self.piece = t
            self.early = early
            if self.start < 0:
                self.start = t
                self.first = early
                self.lo = self.hi = 0
                self.hid = self.splits = 0
            if hidden:
                self.hid += 1
            return
        if not self.broken:
            return  # a clear edge without a break (missed edge): nothing to measure
        self.last = early
        self.broken = False
        self.lo += max(0, hal.diff(early, self.piece))
        self.hi += max(0, hal.diff(t, self.early))
        self.dim = hidden
        if hidden:
            self.hid += 1
        self.clear = t

    def due(self, t):
        """The open spell's light has held long enough by t: judging it is the next thing to do."""
        return self.start >= 0 and not self.broken and hal.diff(t, self.clear) >= self.lockout_us

    def quiet(self):
        """Nothing open and the beam lit (or blocked and still dark): a pause now cannot hide a ball."""
        if self.blocked and self.broken:
            return self.src is None or self.src.value() == self.active
        if self.start >= 0 or self.broken:
            return False
        return self.src is None or self.src.value() != self.active

    def judge(self):
        s = self.start
        self.start = -1
        width = hal.diff(self.clear, s)
        if self.blocked:
            self.blocked = False
            self._blocked(s, width, 0)  # clear again: not a ball
            if self.splits:
                self._blind(self.splits, s, self.clear)  # a ball may have passed while a pause hid the light
            return
        if width >= self.block_us:
            self._blocked(s, width, 1)  # longer than any ball, and over before it was seen open
            self._blocked(s, width, 0)
        elif self.lo >= self.min_pulse_us and not self.splits:
            self.on_ball(s, width)
        elif self.hi < self.min_pulse_us:
            self.glitches += 1  # noise, however the untimed part went
        elif self.hid:
            self._blind(self.splits + 1, self.first, self.clear)  # untimed: a person says whether it was a ball
        else:
            self.glitches += 1

    def _blind(self, n, t, end):
        """n questions about the spell from t to end (one per break that may have been a ball)."""
        if self.on_blind is None:
            self.glitches += 1
            return
        span = max(0, hal.diff(end, t))
        pause = max(0, hal.diff(self.p1, self.p0))
        for _ in range(n):
            self.blind += 1
            self.on_blind(t, span, pause)

    def _blocked(self, t, width, on):
        self.blocks += on
        if self.on_blocked is not None:
            self.on_blocked(t, width, on)

    def expire(self, now):
        """Judge a spell whose light has held long enough; report a beam dark past block_us; line the
        state up with a pin that lost an edge.

        now is read after the ring was drained; nothing is done while edges wait in the ring.
        """
        if self.ring is not None and self.ring.pending():
            return
        if self.start >= 0 and not self.broken and hal.diff(now, self.clear) >= self.lockout_us + SAFE_US:
            self.judge()
        if self.start >= 0 and not self.blocked and hal.diff(now, self.start) >= self.block_us:
            self.blocked = True  # no ball is this wide: a hand, a cup, a fallen piece
            if self.splits:
                self._blind(self.splits, self.first, now)
            self.hid = self.splits = 0
            self._blocked(self.start, hal.diff(now, self.start), 1)
        src = self.src
        if src is None:
            return
        lv = src.value()
        if (lv == self.active) == self.broken:
            self.odd = -1
            self.seen = now
            return
        if self.odd < 0:
            self.odd = now
        elif hal.diff(now, self.odd) >= REPAIR_US:
            # An edge was lost (full ring or scheduler queue): take the pin's word, untimed (it happened
            # after the pin was last seen to agree and before it was first seen not to).
            self.repaired += 1
            a = self.piece if self.broken else self.clear
            self.edge(lv, self.odd, self.seen if hal.diff(self.seen, a) > 0 else a)
            src.resync(lv)


class Sensor:
    """Base: an id, a kind, and the board's emit(sensor, value, t, width)."""

    def __init__(self, sid, kind, emit):
        self.id = sid
        self.kind = kind
        self.emit = emit

    def poll(self, now):
        pass


class BeamSensor(Sensor):
    def __init__(self, sid, emit, active, min_pulse_us, lockout_us, block_us=500000):
        Sensor.__init__(self, sid, "beam", emit)
        self.beam = Beam(active, min_pulse_us, lockout_us, self._ball, block_us)
        self.beam.on_blind = self._blind
        self.beam.on_blocked = self._blocked
        self.balls = 0

    def channels(self):
        return (self.beam,)

    def poll(self, now):
        for b in self.channels():
            b.expire(now)

    def _ball(self, t, w):
        self.balls += 1
        self.emit(self, 1, t, w)

    def _blind(self, t, span, pause):
        # value: the pause in ms (1-65535); t: the earliest the untimed spell may have begun; width: to its last clear.
        self.emit(self, min(65535, max(1, (pause + 999) // 1000)), t, span, "blind")

    def _blocked(self, t, width, on):
        # value: 1 blocked (dark past block_ms), 0 clear again; t: when the dark began; width: how long so far.
        self.emit(self, on, t, min(width, 0x3FFFFFFF), "blocked")

    def set(self, key, value):
        for b in self.channels():
            if key == "min_us":
                b.min_pulse_us = value
            elif key == "lockout_ms":
                b.lockout_us = value * 1000
            elif key == "block_ms":
                b.block_us = value * 1000
            else:
                return False
        return True


class TwoBeamSensor(BeamSensor):
    """Mouth beam + lower beam: "in" only when the ball crosses the lower beam."""

    def __init__(self, sid, emit, active, min_pulse_us, lockout_us, block_us=500000):
        BeamSensor.__init__(self, sid, emit, active, min_pulse_us, lockout_us, block_us)
        self.mouth = Beam(active, min_pulse_us, lockout_us, self._mouth, block_us)
        self.mouth.on_blind = self._mouth_blind
        self.mouth.on_blocked = self._blocked
        self.waiting = False  # a ball passed the mouth and has not reached the lower beam yet
        self.bounced = 0  # mouth balls that never reached the lower beam

    def channels(self):
        return (self.mouth, self.beam)

    def _mouth(self, t, w):
        if self.waiting:
            self.bounced += 1  # the previous mouth ball never arrived below
        self.waiting = True

    def _mouth_blind(self, t, span, pause):
        # Only the lower beam says "in": a mouth the pause hid may have let a ball through.
        self.waiting = True

    def _ball(self, t, w):
        self.waiting = False
        BeamSensor._ball(self, t, w)


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
        self.src = None  # its EdgePin
        self.ring = None
        self.odd = -1  # since when the pin disagrees with the edges
        self.chatter = 0

    def channels(self):
        return (self,)

    def edge(self, level, t):
        self.odd = -1
        if level != self.level:
            self.level = level
            self.changed = t
            self.chatter += 1

    def poll(self, now):
        if self.read is not None and self.src is None:
            lv = self.read()  # polled (esp32): its handlers would take the scheduler's slots from the beams
            if lv != self.level:
                self.edge(lv, now)
        elif self.read is not None and not (self.ring is not None and self.ring.pending()):
            # A pin that disagrees for REPAIR_US with no edge on the way lost one (a scheduled
            # handler may still be coming in the meantime).
            lv = self.read()
            if lv == self.level:
                self.odd = -1
            elif self.odd < 0:
                self.odd = now
            elif hal.diff(now, self.odd) >= REPAIR_US:
                self.edge(lv, self.odd)
                if self.src is not None:
                    self.src.resync(lv)
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

    def scan(self):
        sel = self.select
        for ch, cell in self.cells:
            for i in range(len(sel)):
                sel[i].value((ch >> i) & 1)
            cell.edge(self.sig.value(), hal.ticks_us())  # a scan takes ms: each cell read when it is
