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
# The line goes out in pieces of up to 16 pixels: no block of the firmware's heap as long as a frame's line
# (511 bytes for 73 pixels), which a fragmented heap may not have where a board's driver needs none.
_piece = bytearray(3 + 7 * 16)


class Shown:
    """The last frame: .shown is [(r, g, b)] (made only when a test asks, from what was shown)."""

    def __init__(self):
        self.n = 0
        self.grb = None

    @property
    def shown(self):
        out = []
        for i in range(self.n):
            w = self.grb(i)
            out.append(((w >> 8) & 255, (w >> 16) & 255, w & 255))
        return out


last = None


def show(n, grb):
    """Report a frame of n pixels, grb(i) -> 0xGGRRBB, as "px rrggbb,..." without piling up garbage."""
    global last
    machine.stats["frames"] = machine.stats.get("frames", 0) + 1
    p = _piece
    p[0] = 112  # "px "
    p[1] = 120
    p[2] = 32
    k = 3
    for i in range(n):
        if k + 7 > len(p):
            machine.report_piece(p, k)
            k = 0
        w = grb(i)
        for j, sh in ((0, 8), (2, 16), (4, 0)):  # r, g, b
            v = (w >> sh) & 255
            p[k + j] = _HEX[v >> 4]
            p[k + j + 1] = _HEX[v & 15]
        p[k + 6] = 44  # ","
        k += 7
    if n:
        p[k - 1] = 10  # the line's end in place of the last ","
    else:
        p[k] = 10
        k += 1
    machine.report_piece(p, k)
    if last is None:
        last = Shown()
    last.n = n
    last.grb = grb
