"""Hardware seam: the only place the firmware reaches for the clock and the chip.

Tests and the simulator replace `machine` (and `neopixel`) through MICROPYPATH;
nothing else differs between a board and the unix port. A simulated `machine`
may supply `sim_ticks_us` (a virtual clock that can jump ahead), so simulated
pulse widths are exact however busy the test machine is.
"""

import gc
import sys
import time

import machine
from micropython import const

PERIOD = const(0x40000000)
MASK = const(0x3FFFFFFF)
HALF = const(0x20000000)

_clock = getattr(machine, "sim_ticks_us", None)
_collected = getattr(machine, "collect", None)
_manual = getattr(machine, "gc_manual", None)
# "rp2", "esp32", or the unix port's "linux"; a simulated board says which port it stands for.
PORT = getattr(machine, "sim_port", None) or sys.platform


def ticks_us():
    """Microseconds, wrapping every 2**30 so the value fits an array('i') and a small int everywhere."""
    if _clock is not None:
        return _clock() & MASK
    return time.ticks_us() & MASK  # type: ignore[operator]  # the stubs make ticks an opaque type


def collect():
    """gc.collect() now (a simulated board also charges the pause on its clock)."""
    gc.collect()
    if _collected is not None:
        _collected()


def gc_manual():
    """Only collect()s from here on: the port never collects by itself, inside a ball.

    With automatic collection off, a failed allocation on esp32 adds a heap area instead
    (py/gc.c gc_alloc(), MICROPY_GC_SPLIT_HEAP_AUTO in ports/esp32/mpconfigport.h).
    A simulated board is told instead: the unix port's own collections are not the board's.
    """
    if _manual is not None:
        _manual()
    else:
        gc.disable()


def mem_free():
    return gc.mem_free()


def diff(a, b):
    """a - b in microseconds for two ticks_us() readings less than ~9 minutes apart."""
    d = (a - b) & MASK
    if d >= HALF:
        d -= PERIOD
    return d


def add(a, us):
    return (a + us) & MASK

