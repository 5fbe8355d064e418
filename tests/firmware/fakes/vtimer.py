"""machine.Timer of the virtual-time board (machine.py loads it where the firmware asks for a Timer)."""

from vboard import MODEL, C, _schedule, _spare, _st, _timers, stats, work


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
        self.us = max(1, 1000000 // int(freq) if freq else period * 1000000 // tick_hz)  # whole us: no float made
        work(C["timer"])  # setting the alarm is a C call (inside a handler: part of its run)
        if MODEL["irq"] == "soft" and callback is not None:
            self._arm(_st[0] + self.us)

    def _arm(self, at):
        i = len(_timers)
        while i > 0 and _timers[i - 1][0] > at:
            i -= 1
        e = _spare.pop() if _spare else [0, None]
        e[0] = at
        e[1] = self
        _timers.insert(i, e)

    def deinit(self):
        for i in range(len(_timers) - 1, -1, -1):
            if _timers[i][1] is self:
                e = _timers.pop(i)
                e[1] = None
                _spare.append(e)

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
