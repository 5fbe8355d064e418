"""Simulated `esp32`: the RMT peripheral as ports/esp32/esp32_rmt.c drives it.

write_pulses() converts the durations to RMT symbols in C (the VM waits for that, about
0.1 us a pulse) and returns while the peripheral sends; it waits only if the previous
sequence is still going out. The frame is decoded from the pulses (WS2812: a long high
is a 1) and reported.
"""

import machine
import neopixel


class RMT:
    def __init__(self, channel=0, *, pin=None, resolution_hz=10000000, clock_div=8, idle_level=False, **kw):
        self.pin = pin
        self.res = resolution_hz if resolution_hz else 80000000 // clock_div
        self.busy_until = 0

    @staticmethod
    def bitstream_rmt(value=None):
        return True

    def wait_done(self, *, timeout=0):
        left = self.busy_until - machine.now()
        if left > 0 and timeout:
            machine.work(left, True)
            left = 0
        return left <= 0

    def loop(self, enable):
        pass

    def loop_count(self, n):
        pass

    def deinit(self):
        pass

    def write_pulses(self, duration, data=True):
        left = self.busy_until - machine.now()
        if left > 0:
            machine.work(left, True)  # rmt_tx_wait_all_done() on the previous sequence
        n = len(duration)
        machine.work(n // 10 + 5, True)
        total = 0
        for d in duration:
            total += d
        self.busy_until = machine.now() + total * 1000000 // self.res
        # Decode: pulses go high, low, high, low...; a high longer than its low is a 1 bit.
        neopixel.show(n // 48, lambda p: self._word(duration, p))

    @staticmethod
    def _word(d, p):
        v = 0
        o = p * 48
        for k in range(24):
            v = (v << 1) | (1 if d[o + 2 * k] > d[o + 2 * k + 1] else 0)
        return v
