"""One IR break-beam's edges, judged spell by spell: a ball, noise, blocked, or unknown (blind).

A ball is a dark spell of at least min_pulse_us (shorter ones are glitches); a break that starts
within lockout_us of the beam clearing is the same ball (its rim flickering), so balls a few ms
apart still count one by one. A spell that a pause hid in part (esp32: its edges waited the pause
out) and that may or may not have been a ball is "blind": reported apart, never as a ball.
docs/hardware.md, "One honest account of each beam", says why each bound is what it is.
"""

from array import array

import hal
from edges import REPAIR_US, SAFE_US
from micropython import const

# A beam's state, one array("i") of these (a Pico W has ~150 KB: an attribute costs a slot in the
# object's table, an int here 4 bytes, and a board has up to 18 beams).
_ACTIVE = const(0)  # the level a break reads
_MIN = const(1)  # min_pulse_us
_LOCK = const(2)  # lockout_us
_BLOCK = const(3)  # block_us
_START = const(4)  # first break of the open spell, -1 when none is open
_FIRST = const(5)  # ... the earliest it may have begun
_BROKEN = const(6)  # 1: the beam is dark now (as the edges tell)
_PIECE = const(7)  # when the current break began (its stamp)
_EARLY = const(8)  # ... the earliest it may have begun
_LAST = const(9)  # the earliest the last edge may have happened (a pin's edges come in order)
_SEEN = const(10)  # when the pin was last seen to agree with the edges
_LO = const(11)  # dark time of the open spell: at least
_HI = const(12)  # ... and at most
_HID = const(13)  # edges of the open spell a pause or a lost edge left untimed
_SPLITS = const(14)  # breaks after untimed light: each may have been a ball of its own
_SPLIT_AT = const(15)  # ... the earliest the first of them may have begun
_DIM = const(16)  # 1: the last clear was untimed
_BLOCKED = const(17)  # 1: dark past block_us
_ODD = const(18)  # since when the pin disagrees with the edges, -1 when it agrees
_P0 = const(19)  # the last pause the VM took (esp32: a collection, or one noticed afterwards): from
_P1 = const(20)  # ... to
_E0 = const(21)  # ... and the earliest an edge stamped in it may have happened
_PAUSED = const(22)  # 1: edges may still come stamped in that pause
# Its counters, for the tests and a curious host (each an attribute would cost a slot in the object's table).
_GLITCHES = const(23)  # spells too short to be a ball
_LOCKED = const(24)  # flickers bridged inside a ball
_REPAIRED = const(25)  # lost edges made good
_BLIND = const(26)  # questions asked (blind events)
_BLOCKS = const(27)  # times it became blocked
_N = const(28)
_COUNTERS = ("glitches", "locked", "repaired", "blind", "blocks")




class Beam:
    """Pulse detector for one IR break-beam: its edges, judged spell by spell.

    A spell is a dark spell: breaks whose gaps of light are all shorter than lockout_us (a rim
    flicker, a seam) belong to one. Once the light has held for lockout_us it is judged, once, and
    told to its owner (the sensor):
    - a ball (owner.ball(beam, start_t, width_us)): dark for min_pulse_us or more in all;
    - noise (counted in glitches): dark for less;
    - blocked (owner.blocked(beam, t, width_us, on)): open longer than block_us (a hand, a cup),
      reported when it passes that and again when the light has held; never a ball;
    - unknown (owner.blind(beam, t, span_us, pause_us), once per break that may have been a ball,
      never beside a ball): a pause (esp32: scheduled handlers wait it out, so edges reach the ring
      late and timeless) or a lost edge left its dark time between bounds on either side of
      min_pulse_us, or left room for more than one ball.
    An edge stamped from p0 - lead to p1 + SAFE_US may have happened any time from p0 - lead (or the
    edge before it) to its stamp (lead: SAFE_US, or less when the VM is known to have run at p0);
    light a pause hid that may have held for the lockout never joins a timed break after it.
    """

    def __init__(self, active, min_pulse_us, lockout_us, owner=None, block_us=500000):
        self.src = None  # the EdgePin, to recover from a lost edge
        self.ring = None
        self.owner = owner
        s = self.s = array("i", bytes(4 * _N))
        s[_ACTIVE] = active
        s[_MIN] = min_pulse_us
        s[_LOCK] = lockout_us
        s[_BLOCK] = block_us
        s[_START] = s[_ODD] = -1
        s[_LAST] = hal.ticks_us()
        self.clear = 0  # when the beam last cleared

    def count(self, what):
        """A counter: "glitches", "locked", "repaired", "blind" or "blocks" (for tests and diagnostics)."""
        return self.s[_COUNTERS.index(what) + _GLITCHES]

    def set(self, key, value):
        """A host `config` setting (min_us, lockout_ms, block_ms); False if it is none of the beam's."""
        i = _MIN if key == "min_us" else _LOCK if key == "lockout_ms" else _BLOCK if key == "block_ms" else -1
        if i < 0:
            return False
        self.s[i] = value if i == _MIN else value * 1000
        return True

    def busy(self):
        """A spell is open, the beam is dark, or a lost edge is being repaired: time matters now."""
        s = self.s
        return s[_START] >= 0 or s[_BROKEN] or s[_ODD] >= 0

    def paused(self, p0, p1, lead=SAFE_US):
        """The VM was held from p0 to p1: scheduled handlers waited it out; an edge stamped after p0 may have
        happened from p0 - lead on. One the edges have not passed yet is widened to take this one in (a
        pause the loop saw and one the Watch saw in it)."""
        s = self.s
        e0 = hal.add(p0, -lead)
        if s[_PAUSED]:
            if hal.diff(s[_P0], p0) < 0:
                p0 = s[_P0]
            if hal.diff(s[_E0], e0) < 0:
                e0 = s[_E0]
            if hal.diff(s[_P1], p1) > 0:
                p1 = s[_P1]
        s[_P0] = p0
        s[_P1] = p1
        s[_E0] = e0
        s[_PAUSED] = 1

    def _early(self, t):
        """The earliest t's edge may have happened (t itself when it was timed)."""
        s = self.s
        if not s[_PAUSED]:
            return t
        if hal.diff(t, s[_P1]) > SAFE_US:
            s[_PAUSED] = 0  # edges come in time order: past the pause for good (and the clock may wrap)
            return t
        e = s[_E0]
        if hal.diff(t, e) < 0:
            return t
        return s[_LAST] if hal.diff(s[_LAST], e) > 0 else e

    def _split(self, t):
        """One more break that may have been a ball of its own, beginning at t at the earliest."""
        s = self.s
        if not s[_SPLITS]:
            s[_SPLIT_AT] = t
        s[_SPLITS] += 1

    def lost(self):
        """Edges may have been lost (a full scheduler queue or ring): one more break may hide here."""
        s = self.s
        if s[_BLOCKED]:
            return
        if s[_START] >= 0:
            s[_HID] += 1
            self._split(s[_E0])
        else:
            self._blind(1, s[_E0], s[_P1])

    def edge(self, level, t, early=-1):
        """An edge stamped t; early: the earliest it may have happened (-1: as the pause says)."""
        s = self.s
        s[_ODD] = -1
        if early < 0:
            early = self._early(t)
        hidden = early != t
        if level == s[_ACTIVE]:
            if s[_BROKEN]:
                return
            if s[_START] >= 0:
                # s[_LAST]: the earliest the beam may have cleared. Light that held for the lockout ends the
                # spell; so does light a pause hid that may have held for it before a timed break (the break
                # is a spell of its own, and a blocked beam's is no part of the hand).
                held = hal.diff(t, s[_LAST]) >= s[_LOCK]
                if hal.diff(t, self.clear) >= s[_LOCK] or (s[_DIM] and held and not hidden):
                    self.judge()
                else:
                    s[_LOCKED] += 1
                    if hidden and held:
                        self._split(early)  # the light before it may have held: it may be a ball of its own
            s[_LAST] = early
            s[_BROKEN] = 1
            s[_PIECE] = t
            s[_EARLY] = early
            if s[_START] < 0:
                s[_START] = t
                s[_FIRST] = early
                s[_LO] = s[_HI] = s[_HID] = s[_SPLITS] = 0
            if hidden:
                s[_HID] += 1
            return
        if not s[_BROKEN]:
            return  # a clear edge without a break (missed edge): nothing to measure
        s[_LAST] = early
        s[_BROKEN] = 0
        s[_LO] += max(0, hal.diff(early, s[_PIECE]))
        s[_HI] += max(0, hal.diff(t, s[_EARLY]))
        s[_DIM] = 1 if hidden else 0
        if hidden:
            s[_HID] += 1
        self.clear = t

    def due(self, t):
        """The open spell's light has held long enough by t: judging it is the next thing to do."""
        s = self.s
        return s[_START] >= 0 and not s[_BROKEN] and hal.diff(t, self.clear) >= s[_LOCK]

    def quiet(self):
        """Nothing open and the beam lit (or blocked and still dark): a pause now cannot hide a ball."""
        s = self.s
        if s[_BLOCKED] and s[_BROKEN]:
            return self.src is None or self.src.value() == s[_ACTIVE]
        if s[_START] >= 0 or s[_BROKEN]:
            return False
        return self.src is None or self.src.value() != s[_ACTIVE]

    def judge(self):
        s = self.s
        start = s[_START]
        s[_START] = -1
        width = hal.diff(self.clear, start)
        if s[_BLOCKED]:
            s[_BLOCKED] = 0
            self._blocked(start, width, 0)  # clear again: not a ball
            if s[_SPLITS]:
                self._blind(s[_SPLITS], s[_SPLIT_AT], self.clear)  # a ball may have passed while a pause hid the light
            return
        if width >= s[_BLOCK]:
            self._blocked(start, width, 1)  # longer than any ball, and over before it was seen open
            self._blocked(start, width, 0)
        elif s[_LO] >= s[_MIN] and not s[_SPLITS]:
            if self.owner is not None:
                self.owner.ball(self, start, width)
        elif s[_HI] < s[_MIN]:
            s[_GLITCHES] += 1  # noise, however the untimed part went
        elif s[_HID]:
            self._blind(s[_SPLITS] + 1, s[_FIRST], self.clear)  # untimed: a person says whether it was a ball
        else:
            s[_GLITCHES] += 1

    def _blind(self, n, t, end):
        """n questions about the spell from t to end (one per break that may have been a ball)."""
        s = self.s
        if self.owner is None:
            s[_GLITCHES] += 1
            return
        span = max(0, hal.diff(end, t))
        pause = max(0, hal.diff(s[_P1], s[_P0]))
        for _ in range(n):
            s[_BLIND] += 1
            self.owner.blind(self, t, span, pause)

    def _blocked(self, t, width, on):
        self.s[_BLOCKS] += on
        if self.owner is not None:
            self.owner.blocked(self, t, width, on)

    def expire(self, now):
        """Judge a spell whose light has held long enough; report a beam dark past block_us; line the
        state up with a pin that lost an edge.

        now is read after the ring was drained; nothing is done while edges wait in the ring.
        """
        if self.ring is not None and self.ring.pending():
            return
        s = self.s
        if s[_PAUSED] and hal.diff(now, s[_P1]) > SAFE_US:
            s[_PAUSED] = 0  # every edge the pause held is in: it times nothing more (nor widens the next)
        if s[_START] >= 0 and not s[_BROKEN] and hal.diff(now, self.clear) >= s[_LOCK] + SAFE_US:
            self.judge()
        if s[_START] >= 0 and not s[_BLOCKED] and hal.diff(now, s[_START]) >= s[_BLOCK]:
            s[_BLOCKED] = 1  # no ball is this wide: a hand, a cup, a fallen piece
            if s[_SPLITS]:
                self._blind(s[_SPLITS], s[_SPLIT_AT], now)
            s[_HID] = s[_SPLITS] = 0
            self._blocked(s[_START], hal.diff(now, s[_START]), 1)
        src = self.src
        if src is None:
            return
        lv = src.value()
        if (lv == s[_ACTIVE]) == bool(s[_BROKEN]):
            s[_ODD] = -1
            s[_SEEN] = now
            return
        if s[_ODD] < 0:
            s[_ODD] = now
        elif hal.diff(now, s[_ODD]) >= REPAIR_US:
            # An edge was lost (full ring or scheduler queue): take the pin's word, untimed (it happened
            # after the pin was last seen to agree and before it was first seen not to).
            s[_REPAIRED] += 1
            a = s[_PIECE] if s[_BROKEN] else self.clear
            self.edge(lv, s[_ODD], s[_SEEN] if hal.diff(s[_SEEN], a) > 0 else a)
            src.resync(lv)
