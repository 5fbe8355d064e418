# Replay a scenario through the real firmware App under MicroPython (no link, no asyncio loop).
# Usage: micropython drive.py SCENARIO.json  -- prints one JSON line per output (see tests/firmware/fwtest.py).
import json
import sys
import time

import app
import hal
import machine
import neopixel
import wire

with open(sys.argv[1]) as f:
    scen = json.load(f)
a = app.App(scen["config"])
out = []
_starved = [0]  # frames still to find no heap ("noheap N")
_signed = a._signed


def _starve(frame):
    if _starved[0] > 0:
        _starved[0] -= 1
        raise MemoryError("memory allocation failed")  # as the VM raises it: no heap for the frame's bytes
    return _signed(frame)


a._signed = _starve


def take():
    for frame, _ in a.take():
        print(json.dumps({"frame": frame.decode().strip()}))


for op in scen["ops"]:
    word, _, rest = op.partition(" ")
    if word == "sense":
        a.sense(hal.ticks_us())
    elif word == "line":
        a.on_line(rest.encode() + b"\n")
    elif word == "take":
        take()
    elif word == "flush":  # sense, send, and have the host acknowledge everything
        a.sense(hal.ticks_us())
        take()
        a.on_line(wire.encode("evack", (a.board, a.boot, a.seq)))
    elif word == "house":  # run housekeeping as if rest ms had passed
        a.housekeeping(time.ticks_add(time.ticks_ms(), int(rest)))
    elif word == "render":  # draw the LEDs as at rest ms after the command
        a.strip.render(time.ticks_add(time.ticks_ms(), int(rest)))
        print(json.dumps({"pixels": neopixel.last.shown if neopixel.last else []}))
    elif word == "noheap":  # the next N frames the firmware builds find the heap full
        _starved[0] = int(rest)
    elif word == "beat":
        a.beat()
    elif word == "adv" and machine.MODEL["irq"] == "soft":
        # The sensing loop drains the ring every ms, as on the board: on esp32 a longer stretch between
        # drains is a pause the firmware did not ask for (its edges untimed).
        end = machine.now() + int(rest)
        while machine.now() < end:
            machine.advance(min(1000, end - machine.now()))
            a.sense(hal.ticks_us())
    elif word == "idle":  # the sensing task held up (it drains nothing meanwhile)
        machine.advance(int(rest))
    else:
        machine._apply(op)
    if a.ring.pending() > 200:
        a.sense(hal.ticks_us())
a.sense(hal.ticks_us())
take()
stats = {"ring_dropped": a.ring.ctl[2], "outbox": len(a.outbox), "rejected": a.rejected}
for s in a.sensors:
    st = {"kind": s.kind}
    if s.kind == "beam":
        st["balls"] = s.balls
        st["glitches"] = s.beam.count("glitches")
        st["locked"] = s.beam.count("locked")
        st["bounced"] = getattr(s, "bounced", 0)
        st["blind"] = s.beam.count("blind") + (s.mouth.count("blind") if hasattr(s, "mouth") else 0)
        st["blocks"] = s.beam.count("blocks")
    else:
        st["chatter"] = s.chatter
    stats[s.id] = st
print(json.dumps({"stats": stats}))
