"""Simulated `rp2`: PIO state machines that send WS2812 frames while interrupts stay on.

A program made with @asm_pio is not interpreted; a state machine started with one
decodes what the CPU puts into its TX FIFO as GRB pixel words (the standard ws2812
program, examples/rp2/pio_ws2812.py) and reports the frame once the bits are out.
put() costs the CPU a few us a word; once the 8-word FIFO (joined) is full it waits
for the state machine, 30 us a pixel at 800 kHz, with IRQs on.
"""

import machine
import neopixel


class PIO:
    OUT_LOW = 0
    OUT_HIGH = 1
    IN_LOW = 0
    IN_HIGH = 1
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1
    JOIN_NONE = 0
    JOIN_TX = 1
    JOIN_RX = 2


def asm_pio(**kw):
    def wrap(fn):
        return ("pio-program", fn.__name__, kw)

    return wrap


class StateMachine:
    FIFO = 8

    def __init__(self, id, prog=None, freq=-1, **kw):
        self.id = id
        self.prog = prog
        self.freq = freq
        self.kw = kw
        self.on = False
        self.busy_until = 0
        self.words = []

    def active(self, v=None):
        if v is not None:
            self.on = bool(v)
        return self.on

    def put(self, value, shift=0):
        words = (value,) if isinstance(value, int) else value
        c = machine.C
        px = c["px"]
        for _ in range(len(words)):
            now = machine.now()
            # The FIFO drains one pixel per 30 us while the state machine runs.
            if px and self.busy_until - now > self.FIFO * px:
                machine.work(self.busy_until - self.FIFO * px - now, True)
            machine.work(c["sm_word"])
            self.busy_until = max(self.busy_until, machine.now()) + px
        # put() shifts each word left by shift; the PIO sends its top 24 bits: the word as GRB.
        neopixel.show(len(words), lambda i: words[i] & 0xFFFFFF)

    def tx_fifo(self):
        return max(0, self.busy_until - machine.now()) // max(1, machine.C["px"] or 1)
