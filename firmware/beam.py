"""One IR break-beam's edges, judged spell by spell: a ball, noise, blocked, or unknown (blind).

A ball is a dark spell of at least min_pulse_us (shorter ones are glitches); a break that starts
within lockout_us of the beam clearing is the same ball (its rim flickering), so balls a few ms
apart still count one by one. A spell that a pause hid in part (esp32: its edges waited the pause
out) and that may or may not have been a ball is "blind": reported apart, never as a ball.
docs/hardware.md, "One honest account of each beam", says why each bound is what it is.
"""

import hal
from edges import REPAIR_US, SAFE_US


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
    An edge stamped from p0 - lead to p1 + SAFE_US may have happened any time from p0 - lead (or the
    edge before it) to its stamp (lead: SAFE_US, or less when the VM is known to have run at p0);
    light a pause hid that may have held for the lockout never joins a timed break after it.
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
        self.last = hal.ticks_us()  # the earliest the last edge may have happened (a pin's edges come in order)
        self.clear = 0  # when the beam last cleared
        self.seen = 0  # when the pin was last seen to agree with the edges
        self.lo = 0  # dark time of the open spell: at least
        self.hi = 0  # ... and at most
        self.hid = 0  # edges of the open spell a pause or a lost edge left untimed
        self.splits = 0  # breaks after untimed light: each may have been a ball of its own
        self.split_at = 0  # ... the earliest the first of them may have begun
        self.dim = False  # the last clear was untimed: a timed break never joins it
        self.blocked = False
        self.odd = -1  # since when the pin disagrees with the edges, -1 when it agrees
        self.glitches = 0
        self.locked = 0  # flickers bridged inside a ball
        self.repaired = 0
        self.blind = 0
        self.blocks = 0
        # The last pause the VM took (esp32: a collection, or one the firmware noticed afterwards), and
        # the earliest an edge stamped in it may have happened.
        self.p0 = 0
        self.p1 = 0
        self.e0 = 0
        self.paused_ever = False

    def paused(self, p0, p1, lead=SAFE_US):
        """The VM was held from p0 to p1: scheduled handlers waited it out; an edge stamped after p0 may have
        happened from p0 - lead on. One the edges have not passed yet is widened to take this one in (a
        pause the loop saw and one the Watch saw in it)."""
        e0 = hal.add(p0, -lead)
        if self.paused_ever:
            if hal.diff(self.p0, p0) < 0:
                p0 = self.p0
            if hal.diff(self.e0, e0) < 0:
                e0 = self.e0
            if hal.diff(self.p1, p1) > 0:
                p1 = self.p1
        self.p0 = p0
        self.p1 = p1
        self.e0 = e0
        self.paused_ever = True

    def _early(self, t):
        """The earliest t's edge may have happened (t itself when it was timed)."""
        if not self.paused_ever:
            return t
        if hal.diff(t, self.p1) > SAFE_US:
            self.paused_ever = False  # edges come in time order: past the pause for good (and the clock may wrap)
            return t
        e = self.e0
        if hal.diff(t, e) < 0:
            return t
        return self.last if hal.diff(self.last, e) > 0 else e

    def _split(self, t):
        """One more break that may have been a ball of its own, beginning at t at the earliest."""
        if not self.splits:
            self.split_at = t
        self.splits += 1

    def lost(self):
        """Edges may have been lost (a full scheduler queue or ring): one more break may hide here."""
        if self.blocked:
            return
        if self.start >= 0:
            self.hid += 1
            self._split(self.e0)
        else:
            self._blind(1, self.e0, self.p1)

    def edge(self, level, t, early=-1):
        """An edge stamped t; early: the earliest it may have happened (-1: as the pause says)."""
        self.odd = -1
        if early < 0:
            early = self._early(t)
        hidden = early != t
        if level == self.active:
            if self.broken:
                return
            if self.start >= 0:
                # self.last: the earliest the beam may have cleared. Light that held for the lockout ends the
                # spell; so does light a pause hid that may have held for it before a timed break (the break
                # is a spell of its own, and a blocked beam's is no part of the hand).
                held = hal.diff(t, self.last) >= self.lockout_us
                if hal.diff(t, self.clear) >= self.lockout_us or (self.dim and held and not hidden):
                    self.judge()
                else:
                    self.locked += 1
                    if hidden and held:
                        self._split(early)  # the light before it may have held: it may be a ball of its own
            self.last = early
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
                self._blind(self.splits, self.split_at, self.clear)  # a ball may have passed while a pause hid the light
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
        if self.paused_ever and hal.diff(now, self.p1) > SAFE_US:
            self.paused_ever = False  # every edge the pause held is in: it times nothing more (nor widens the next)
        if self.start >= 0 and not self.broken and hal.diff(now, self.clear) >= self.lockout_us + SAFE_US:
            self.judge()
        if self.start >= 0 and not self.blocked and hal.diff(now, self.start) >= self.block_us:
            self.blocked = True  # no ball is this wide: a hand, a cup, a fallen piece
            if self.splits:
                self._blind(self.splits, self.split_at, now)
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
