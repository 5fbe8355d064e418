"""Sensors: edge capture in IRQs (edges.py), decisions in the main loop.

The sensing task drains the ring (edges.py) into each sensor's detectors:

- BeamSensor: one beam (beam.py: balls, noise, blocked, blind).
- TwoBeamSensor: mouth + lower beam; only a ball crossing the lower beam is "in", a
  mouth break with no lower break is a bounce-out and is only counted.
- Settled (tilt, presence): the reading must hold for settle_us before it is
  reported, so chatter from a wobbling tower or a hand passing is ignored.
- Mux: multiplexed cells, scanned from the sensing task.
"""

from array import array

import hal
import machine
from beam import Beam
from edges import REPAIR_US, SAFE_US, EdgePin, Ring  # noqa: F401 - app.py takes the sensing parts from here
from micropython import const


class Sensor:
    """Base: an id, a kind, and the board's emit(sensor, value, t, width)."""

    def __init__(self, sid, kind, emit):
        self.id = sid
        self.kind = kind
        self.emit = emit

    def poll(self, now):
        pass


class BeamSensor(Sensor):
    """One beam; its Beam tells it (beam.py: ball, blind, blocked) and it emits the events."""

    def __init__(self, sid, emit, active, min_pulse_us, lockout_us, block_us=500000):
        Sensor.__init__(self, sid, "beam", emit)
        self.beam = Beam(active, min_pulse_us, lockout_us, self, block_us)
        self.balls = 0

    def channels(self):
        return (self.beam,)

    def poll(self, now):
        self.beam.expire(now)  # every cycle: no tuple of channels made (nothing allocated while sensing)

    def ball(self, beam, t, w):
        self.balls += 1
        self.emit(self, 1, t, w)

    def blind(self, beam, t, span, pause):
        # value: the pause in ms (1-65535); t: the earliest the untimed spell may have begun; width: to its last clear.
        self.emit(self, max(1, (pause + 999) // 1000), t, span, "blind")  # emit() keeps it within the wire's

    def blocked(self, beam, t, width, on):
        # value: 1 blocked (dark past block_ms), 0 clear again; t: when the dark began; width: how long so far.
        self.emit(self, on, t, width, "blocked")

    def set(self, key, value):
        for b in self.channels():
            if not b.set(key, value):
                return False
        return True


class TwoBeamSensor(BeamSensor):
    """Mouth beam + lower beam: "in" only when the ball crosses the lower beam."""

    def __init__(self, sid, emit, active, min_pulse_us, lockout_us, block_us=500000):
        BeamSensor.__init__(self, sid, emit, active, min_pulse_us, lockout_us, block_us)
        self.mouth = Beam(active, min_pulse_us, lockout_us, self, block_us)
        self.waiting = False  # a ball passed the mouth and has not reached the lower beam yet
        self.bounced = 0  # mouth balls that never reached the lower beam

    def channels(self):
        return (self.mouth, self.beam)

    def poll(self, now):
        self.mouth.expire(now)
        self.beam.expire(now)

    def ball(self, beam, t, w):
        if beam is self.mouth:
            if self.waiting:
                self.bounced += 1  # the previous mouth ball never arrived below
            self.waiting = True
            return
        self.waiting = False
        BeamSensor.ball(self, beam, t, w)

    def blind(self, beam, t, span, pause):
        if beam is self.mouth:
            self.waiting = True  # only the lower beam says "in": a mouth the pause hid may have let a ball through
            return
        BeamSensor.blind(self, beam, t, span, pause)


# A tilt's or presence cell's state, one array("i") (up to 41 cells on a board): see Beam's.
_ACTIVE = const(0)  # the level that means fallen / occupied
_SETTLE = const(1)  # settle_us
_LEVEL = const(2)  # the level its edges (or reads) last said
_CHANGED = const(3)  # ... since when
_REPORTED = const(4)  # the state last reported (1 fallen / occupied)
_ODD = const(5)  # since when the pin disagrees with the edges, -1 when it agrees


class Settled(Sensor):
    """Tilt or presence: report 1/0 once the reading has held still for settle_us.

    Starts as 0 (upright / vacant), so a tower already lying down at boot is
    reported as fallen once it has settled.
    """

    def __init__(self, sid, kind, emit, active, settle_us, level, now, read=None):
        Sensor.__init__(self, sid, kind, emit)
        self.s = array("i", (active, settle_us, level, now, 0, -1))
        self.read = read  # current level of a direct pin, to recover from a lost edge
        self.src = None  # its EdgePin
        self.ring = None
        self.chatter = 0

    def channels(self):
        return (self,)

    def busy(self):
        """A lost edge is being repaired."""
        return self.s[_ODD] >= 0

    def edge(self, level, t):
        s = self.s
        s[_ODD] = -1
        if level != s[_LEVEL]:
            s[_LEVEL] = level
            s[_CHANGED] = t
            self.chatter += 1

    def poll(self, now):
        s = self.s
        if self.read is not None and self.src is None:
            lv = self.read()  # polled (esp32): its handlers would take the scheduler's slots from the beams
            if lv != s[_LEVEL]:
                self.edge(lv, now)
        elif self.read is not None and not (self.ring is not None and self.ring.pending()):
            # A pin that disagrees for REPAIR_US with no edge on the way lost one (a scheduled
            # handler may still be coming in the meantime).
            lv = self.read()
            if lv == s[_LEVEL]:
                s[_ODD] = -1
            elif s[_ODD] < 0:
                s[_ODD] = now
            elif hal.diff(now, s[_ODD]) >= REPAIR_US:
                self.edge(lv, s[_ODD])
                if self.src is not None:
                    self.src.resync(lv)
        state = 1 if s[_LEVEL] == s[_ACTIVE] else 0
        if state != s[_REPORTED] and hal.diff(now, s[_CHANGED]) >= s[_SETTLE]:
            s[_REPORTED] = state
            self.emit(self, state, s[_CHANGED], 0)

    def set(self, key, value):
        if key == "stable_ms":
            self.s[_SETTLE] = value * 1000
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
