# Run the real firmware's sensing loop on the virtual-time board over a timeline of edges.
# Usage: micropython board.py SCENARIO.json -- prints one JSON line per event, then a stats line.
# Scenario: {"config", "timeline": [[t_us, pin, level], ...], "until": t_us, "lines": [host frames],
#            "deaf": [[from_us, to_us], ...] (the host does not read its USB serial then)}
import json
import sys

import app
import hal
import machine
import wire

with open(sys.argv[1]) as f:
    scen = json.load(f)
machine._apply("freeze")  # only the firmware's work and the timeline move the clock: runs repeat exactly
a = app.App(scen["config"])
usb = machine.Cdc(scen.get("deaf") or ())
for line in scen.get("lines") or ():
    a.on_line(line.encode() + b"\n")
log = [] if scen.get("log_edges") else None


def _logged(det):
    edge = det.edge

    def logged(level, t):
        log.append((t, level))
        edge(level, t)

    det.edge = logged


if log is not None:
    for det in a.channels:
        _logged(det)
machine.schedule(scen["timeline"])
machine.pauses(scen.get("pauses") or ())
# [(t, us)]: a pause the firmware did not ask for that begins the moment a drain of its ring ends, at the first
# drain from t on (between the drain and anything it does next).
holds = sorted(tuple(h) for h in scen.get("holds") or ())
if holds:
    _drain = a.ring.drain

    def drain(*args):
        n = _drain(*args)
        if holds and holds[0][0] <= machine.now():
            machine.pauses(list(machine._unasked) + [(machine.now(), holds.pop(0)[1])])
        return n

    a.ring.drain = drain
# [(t, us)]: such a pause that begins inside the first LED frame the firmware sends from t on.
frame_holds = sorted(tuple(h) for h in scen.get("frame_holds") or ())
if frame_holds:
    _render = a.strip.render

    def render(*args):
        if frame_holds and frame_holds[0][0] <= machine.now():
            machine.pauses(list(machine._unasked) + [(machine.now(), frame_holds.pop(0)[1])])
        return _render(*args)

    a.strip.render = render
scen = None
end = 0
for t, p, lv in machine._edges:
    end = max(end, t)
end += 100000


def emit():
    for frame, is_event in a.take():
        usb.write(frame)  # the link writes frames as they come; USB-CDC may block
        if is_event:
            _, f = wire.decode(frame)
            print('{"ev":[%s,%d,%d,%d,%s]}' % (json.dumps(f[3]), f[2], f[6], f[7], json.dumps(f[4])))
    if a.seq > a.acked:
        a.on_line(wire.encode("evack", (a.board, a.boot, a.seq)))


def idle():
    """Nothing in flight: no open ball, no edge waiting, no repair pending."""
    if a.ring.pending() or not machine.quiet():
        return False
    for b in a.channels:
        if b.busy() if hasattr(b, "busy") else (
                getattr(b, "start", -1) >= 0 or getattr(b, "broken", False) or getattr(b, "odd", -1) >= 0):
            return False
    return True


def cycle(now_ms):
    if hasattr(a, "cycle"):
        a.cycle(now_ms)
        return
    # Firmware from before App.cycle (for before/after figures): its loop body.
    a.sense(hal.ticks_us())
    if now_ms - a.led_at >= 40:
        a.led_at = now_ms
        a.strip.render(now_ms)
    a.housekeeping(now_ms)


# The loop's ms clock is the board's virtual one here (the firmware's own timers started on the real one).
a.led_at = a.beat_at = a.gc_at = a.free_at = machine.now() // 1000


while machine.now() < end:
    cycle(machine.now() // 1000)
    emit()
    machine.advance(1000)  # asyncio.sleep_ms(1): the CPU idles, IRQs come on time
    # Skip the loop's passes that cannot see anything: up to 3 ms before the next edge, GC or LED frame.
    nxt = machine.next_due()
    if nxt is not None and idle():
        until = nxt - 3000
        if a.strip.moving or a.strip.dirty:
            until = min(until, (a.led_at + 40) * 1000)
        if until > machine.now() + 1000:
            machine.advance(until - machine.now())
emit()
st = dict(machine.stats)
st["ring_dropped"] = a.ring.ctl[2]
st["usb_blocked_us"] = usb.blocked_us
st["usb_dropped"] = usb.dropped
for s in a.sensors:
    if s.kind == "beam":
        st[s.id] = {"balls": s.balls, "glitches": s.beam.count("glitches"), "locked": s.beam.count("locked")}
        st[s.id]["repaired"] = s.beam.count("repaired")
        st[s.id]["blind"] = s.beam.count("blind")
        st[s.id]["blocks"] = s.beam.count("blocks")
st["gc_windows"] = machine.gc_windows
if log is not None:
    st["edges_seen"] = log
print(json.dumps({"stats": st}))
