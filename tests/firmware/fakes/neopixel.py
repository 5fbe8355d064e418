"""Simulated NeoPixel strip: keeps the written colours and reports each write to the controller."""

import machine


class NeoPixel:
    ORDER = (1, 0, 2, 3)

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = [(0, 0, 0)] * n
        self.shown = [(0, 0, 0)] * n
        self.writes = 0

    def __len__(self):
        return self.n

    def __setitem__(self, i, rgb):
        self.buf[i] = tuple(rgb)

    def __getitem__(self, i):
        return self.buf[i]

    def fill(self, rgb):
        for i in range(self.n):
            self.buf[i] = tuple(rgb)

    def write(self):
        self.shown = list(self.buf)
        self.writes += 1
        machine.report("px " + ",".join("%02x%02x%02x" % c for c in self.shown))
        global last
        last = self


last = None
