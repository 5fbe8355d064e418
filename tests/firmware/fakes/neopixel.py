"""The stock `neopixel` module as the ports ship it: write() goes through machine.bitstream.

That masks interrupts for the whole frame on rp2 (about 30 us a pixel) and blocks the VM on
esp32 while the RMT driver sends; the virtual board charges exactly that. Each frame shown,
whoever drove it (this module, the PIO or the RMT fake), is reported to the controller.
"""

import machine


class NeoPixel:
    ORDER = (1, 0, 2, 3)

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)
        self.writes = 0

    def __len__(self):
        return self.n

    def __setitem__(self, i, rgb):
        o = i * self.bpp
        for k in range(self.bpp):
            self.buf[o + self.ORDER[k]] = rgb[k]

    def __getitem__(self, i):
        o = i * self.bpp
        return tuple(self.buf[o + self.ORDER[k]] for k in range(self.bpp))

    def fill(self, rgb):
        for i in range(self.n):
            self[i] = rgb

    def write(self):
        machine.bitstream(self.pin, 0, (400, 850, 800, 450), self.buf)
        self.writes += 1
        show(self.n, self._grb)

    def _grb(self, i):
        b = self.buf
        return (b[3 * i] << 16) | (b[3 * i + 1] << 8) | b[3 * i + 2]


_HEX = b"0123456789abcdef"
_line = [bytearray(0)]


class Shown:
    """The last frame: .shown is [(r, g, b)] (made only when a test asks)."""

    def __init__(self):
        self.n = 0

    @property
    def shown(self):
        out = []
        b = _line[0]
        for i in range(self.n):
            o = 3 + 7 * i
            out.append(tuple(int(bytes(b[o + 2 * k : o + 2 * k + 2]), 16) for k in range(3)))
        return out


last = None


def show(n, grb):
    """Report a frame of n pixels, grb(i) -> 0xGGRRBB, as "px rrggbb,..." without piling up garbage."""
    global last
    machine.stats["frames"] = machine.stats.get("frames", 0) + 1
    line = _line[0]
    if len(line) != 4 + 7 * n - (1 if n else 0):
        line = bytearray(b"px " + b"000000," * n + (b"" if n else b"\n"))
        line[len(line) - 1] = 10  # the line's end (a frame of 0 pixels: "px \n")
        _line[0] = line
    for i in range(n):
        w = grb(i)
        o = 3 + 7 * i
        for k, sh in ((0, 8), (2, 16), (4, 0)):  # r, g, b
            v = (w >> sh) & 255
            line[o + k] = _HEX[v >> 4]
            line[o + k + 1] = _HEX[v & 15]
    if last is None:
        last = Shown()
    last.n = n
    machine.report(line)  # the line as it is: a frame is no copy (the firmware's heap is measured with this one)
