"""NeoPixel drivers that keep the beam IRQs on while a frame goes out.

The stock `neopixel` sends through machine.bitstream, which on rp2 turns
interrupts off for the whole frame (30 us a pixel: 2.2 ms for 73 pixels) and on
esp32 keeps the VM waiting for the RMT driver, so scheduled beam IRQs wait too.
- rp2: the standard ws2812 PIO program (micropython examples/rp2/pio_ws2812.py);
  the state machine shifts the bits out, the CPU only fills its FIFO.
- esp32: esp32.RMT.write_pulses() with a pulse list made once and edited in
  place; it returns while the RMT peripheral sends.
- elsewhere (unix port without the simulated board): `neopixel` if it exists.
Each driver takes strip[i] = (r, g, b) and write().
"""

from array import array

import hal
import machine

# WS2812B bit times in 50 ns RMT ticks (datasheet: T0H 0.4 us, T0L 0.85 us, T1H 0.8 us, T1L 0.45 us).
_RMT_HZ = 20000000
_BIT0 = (8, 17)
_BIT1 = (16, 9)


class PioStrip:
    def __init__(self, pin, n):
        import rp2  # type: ignore[import-not-found]  # rp2 only

        self.sm = rp2.StateMachine(0, _ws2812(rp2), freq=8000000, sideset_base=machine.Pin(pin))
        self.sm.active(1)
        self.buf = array("I", bytes(4 * n))

    def __setitem__(self, i, rgb):
        self.buf[i] = (rgb[1] << 16) | (rgb[0] << 8) | rgb[2]  # GRB, shifted out MSB first

    def write(self):
        self.sm.put(self.buf, 8)


def _ws2812(rp2):
    # The standard program: 10 PIO cycles a bit at 8 MHz = 800 kHz.
    @rp2.asm_pio(
        sideset_init=rp2.PIO.OUT_LOW, out_shiftdir=rp2.PIO.SHIFT_LEFT, autopull=True, pull_thresh=24
    )
    def ws2812():
        # fmt: off
        wrap_target()  # type: ignore[name-defined]  # noqa: F821 - names come from @asm_pio
        label("bitloop")  # type: ignore[name-defined]  # noqa: F821
        out(x, 1).side(0)[2]  # type: ignore[name-defined]  # noqa: F821
        jmp(not_x, "do_zero").side(1)[1]  # type: ignore[name-defined]  # noqa: F821
        jmp("bitloop").side(1)[4]  # type: ignore[name-defined]  # noqa: F821
        label("do_zero")  # type: ignore[name-defined]  # noqa: F821
        nop().side(0)[4]  # type: ignore[name-defined]  # noqa: F821
        wrap()  # type: ignore[name-defined]  # noqa: F821
        # fmt: on

    return ws2812


class RmtStrip:
    def __init__(self, pin, n):
        import esp32  # type: ignore[import-not-found]  # esp32 only

        self.rmt = esp32.RMT(0, pin=machine.Pin(pin), resolution_hz=_RMT_HZ)
        self.pulses = list(_BIT0) * (24 * n)  # high, low per bit; allocated once

    def __setitem__(self, i, rgb):
        v = (rgb[1] << 16) | (rgb[0] << 8) | rgb[2]
        p = self.pulses
        o = i * 48
        for k in range(23, -1, -1):
            b = _BIT1 if (v >> k) & 1 else _BIT0
            p[o] = b[0]
            p[o + 1] = b[1]
            o += 2

    def write(self):
        self.rmt.write_pulses(self.pulses, True)


def strip(pin, n):
    """The driver for this port, or None when the board has no way to drive pixels."""
    if not n:
        return None
    if hal.PORT == "rp2":
        return PioStrip(pin, n)
    if hal.PORT == "esp32":
        return RmtStrip(pin, n)
    try:
        import neopixel
    except ImportError:
        return None
    return neopixel.NeoPixel(machine.Pin(pin, machine.Pin.OUT), n)
