"""A virtual-time board for running the real firmware under the MicroPython unix port.

Only the port's modules are substituted (through MICROPYPATH): this one (the
machine API: Pin, Timer, WDT, bitstream), neopixel.py, rp2.py, esp32.py, socket.py
and os.py; the firmware itself is unchanged. Behind them: vboard.py (the clock,
the event engine, pins), vcontrol.py (the control channel below) and vserial.py
(the serial ports, loaded only where one is used). The board keeps a virtual
clock in microseconds that moves with the work the firmware does: every pin
read or write, mux select, clock read, LED frame and frame encoding costs the
time the chosen port takes for it (vboard.COSTS, sources in docs/hardware.md
"Timing"). Edges are scheduled at absolute instants and delivered whenever the
clock passes them, also in the middle of App.sense(), through the port's IRQ
model:

    ideal     the old kind fake: no work costs time, a handler runs at its edge's instant
    rp2       hard IRQs 10-20 us after the edge, masked while machine.bitstream (the stock
              neopixel) sends a frame; edges of one pin that wait coalesce into one call
    esp32     no hard IRQs: the C ISR queues the handler on the scheduler (8 slots, full
              -> lost), it runs 30-150 us later, or after the call that blocks the VM
              (GC, an LED frame the RMT driver waits for); pin.value() is read then
    esp32-gc  esp32 with 30 ms garbage collections: the port's own every 2 s (when the heap
              fills, wherever the firmware is) until the firmware turns them off
              (hal.gc_manual -> gc_manual()), and every collect() the firmware asks for
    esp32-usb, esp32-jtag  esp32 whose serial link is the port's console (vserial.Console): a
              write into a full port waits, the VM held; on native USB the handlers run
              meanwhile, on USB-Serial/JTAG they wait too (and the 9th is dropped)

A Timer's alarm schedules its callback the way a pin's ISR does (esp32: soft timers only).

BATTLEMENT_BOARD picks the model (default ideal), BATTLEMENT_SEED the random
stream of latencies (deterministic by seed).

Pins are driven from outside the process over a control socket
(host/battlement/sim/firmware.py speaks it), or by test drivers through schedule(),
run_until() and drive(). Control lines (';' separates commands applied in order):
    set <pin> <level>                      an edge on an input pin now
    adv <us>                               let the clock run on while the firmware idles (scheduled
                                           handlers: the commands after it happen that much later,
                                           while the clock moves with the firmware's work and sleeps)
    freeze                                 stop real time from moving the clock (only adv does)
    mux <sig> <s0,s1,..> <channel> <level> level a multiplexer channel reads
    sync <n>                               answered with "sync <n>" once all before it is applied
    stats                                  answered with "stats <json>": the board's counters (edges the
                                           scheduler dropped, pauses, console holds)
The neopixel fake reports each strip write as "px <rrggbb>,<rrggbb>,...".

Hard IRQ handlers run with the heap locked, so a handler that allocates fails loudly.
"""

import sys
import time

import umachine
import vboard
from vboard import (  # noqa: F401
    MODEL,
    SLEEP_US,
    C,
    Pin,
    _idle,
    _real,
    _st,
    mask,
    now,
    sim_port,
    stats,
    work,
)
from vcontrol import _apply, _connect, poll, report, report_piece  # noqa: F401


def __getattr__(name):
    """The rest of the virtual board (vboard.py), then the port's own machine: looked up, not copied in
    (a copy of every name would be a table in the heap the tests measure as the firmware's). A lookup here
    allocates: what the drivers read with the heap locked is imported above. Timer (vtimer.py) is loaded
    where the firmware asks for one (esp32), and is a name here from then on."""
    if name == "Timer":
        import vtimer

        globals()["Timer"] = vtimer.Timer
        return vtimer.Timer
    try:
        return getattr(vboard, name)
    except AttributeError:
        return getattr(umachine, name)


def bitstream(p, encoding, timing, buf):
    """machine.bitstream: on rp2 it sends with interrupts off (mp_hal_quiet_timing_enter)."""
    us = C["px_setup"] + C["px"] * len(buf) // 3
    if sim_port == "rp2":
        mask(us)
    else:
        work(us, True)  # ports/esp32: RMT sends, the VM waits in rmt_tx_wait_all_done()


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self.fed = time.ticks_ms()

    def feed(self):
        t = time.ticks_ms()
        late = time.ticks_diff(t, self.fed)
        if MODEL.get("wdt") and late > self.timeout:
            # The board would have reset at the timeout (a new boot, its outbox gone): this one stops, in words.
            print("watchdog: not fed for %d ms (timeout %d ms): the board resets" % (late, self.timeout), file=sys.stderr)
            sys.exit(3)
        self.fed = t
        poll()
        if MODEL["irq"] == "soft":
            _real()  # the cycle's own time was its work
            _idle[0] = _st[0] + SLEEP_US  # then the sensing loop sleeps 1 ms


def unique_id():
    return b"\xba\x77\x1e\x00\x00\x01"


def freq(*a):
    return 125000000 if sim_port == "rp2" else 240000000


def reset():
    print("machine.reset()", file=sys.stderr)
    sys.exit(3)


def soft_reset():
    sys.exit(3)


def reset_cause():
    return 1


def Cdc(deaf=()):
    """USB-CDC (vserial.Cdc), loaded when a driver asks for it."""
    import vserial

    return vserial.Cdc(deaf)


if MODEL.get("console"):
    import vserial

    vserial.install()

_connect()
