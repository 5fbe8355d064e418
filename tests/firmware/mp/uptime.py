# Runs under MicroPython: the board's beat uptime over weeks of a wrapping ticks_ms clock.
# The board's ticks_ms wraps at 2**30 ms (12.4 days), and a ticks_diff across more than half of
# that (6.2 days) turns negative. A stand-in clock steps the App through 14 days, minute by minute.
# Prints the uptime_ms of a beat each simulated day as JSON.
import json
import time

import app
import wire

PERIOD = 1 << 30


class BoardClock:
    def __init__(self, start):
        self.now = start

    def ticks_ms(self):
        return self.now

    def ticks_add(self, t, d):
        return (t + d) % PERIOD

    def ticks_diff(self, a, b):
        return ((a - b + PERIOD // 2) % PERIOD) - PERIOD // 2

    def ticks_us(self):
        return time.ticks_us()

    def sleep_ms(self, ms):
        pass


clock = BoardClock(PERIOD - 3600_000)  # an hour before the first wrap
app.time = clock
a = app.App({"board": "b1", "sensors": [], "wdt_ms": 0})
ups = []
for minute in range(14 * 24 * 60 + 1):
    a.housekeeping(clock.now)
    if minute % (24 * 60) == 0:
        a.beat()
        for frame, _ in a.take():
            typ, f = wire.decode(frame)
            if typ == "beat":
                ups.append(f[2])
    clock.now = clock.ticks_add(clock.now, 60_000)
print(json.dumps(ups))
