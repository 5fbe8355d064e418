"""Boot only: the pin map's sensors built into the App (its channels, beams, muxes). App.__init__ imports
it and lets it go once the sensors are built, so its code takes no heap for the board's life."""

import gc

import machine
from sensors import BeamSensor, EdgePin, Mux, Settled, TwoBeamSensor


def sensors(app, cfg, now):
    """Build cfg's "sensors" into app, taking them out of cfg as it goes."""
    emit = app.emit  # one bound method for every sensor, not one each
    # Each spec let go once its sensor is built, and collected now and then, so the sensors' objects take
    # the room their specs leave instead of the heap keeping holes between them for the board's life.
    specs = cfg.pop("sensors", None) or []
    specs.reverse()
    while specs:
        _add(app, specs.pop(), now, emit)
        if len(specs) % 4 == 0:
            gc.collect()


def _pull(spec):
    p = spec.get("pull", "up")
    if p == "up":
        return machine.Pin.PULL_UP
    if p == "down":
        return machine.Pin.PULL_DOWN
    return None


def _add(app, spec, now, emit):
    sid = spec["id"]
    kind = spec["kind"]
    active = spec.get("active", 0)
    pull = _pull(spec)
    if kind == "beam":
        mp = spec.get("min_pulse_us", app.opt["min_pulse_us"])
        lock = spec.get("lockout_ms", app.opt["lockout_ms"]) * 1000
        block = spec.get("block_ms", app.opt["block_ms"]) * 1000
        two = "lower" in spec
        beam = (TwoBeamSensor if two else BeamSensor)(sid, emit, active, mp, lock, block)
        pins = [spec["pin"], spec["lower"]] if two else [spec["pin"]]
        for det, pin in zip(beam.channels(), pins):
            app.channels.append(det)  # registered before its IRQ can fire
            det.ring = app.ring
            app.beams.append(det)
            det.src = EdgePin(app.ring, len(app.channels) - 1, pin, pull)
            app.soft = app.soft or not det.src.hard
        app.sensors.append(beam)
        app.by_id[sid] = beam
        return
    settle = spec.get("settle_ms", app.opt[kind + "_settle_ms"]) * 1000
    if "mux" in spec:
        m = app.muxes.get(spec["mux"])
        if m is None:
            mc = app.cfg["muxes"][spec["mux"]]
            m = Mux(mc["sig"], mc["select"], pull)
            app.muxes[spec["mux"]] = m
        s = Settled(sid, kind, emit, active, settle, 1 - active, now)
        m.cells.append((spec["channel"], s))
    else:
        s = Settled(sid, kind, emit, active, settle, 1 - active, now)
        if app.soft:
            s.read = machine.Pin(spec["pin"], machine.Pin.IN, pull).value  # polled: no scheduler slot
        else:
            app.channels.append(s)
            ep = EdgePin(app.ring, len(app.channels) - 1, spec["pin"], pull)
            s.read = ep.value
            s.src = ep
            s.ring = app.ring
    app.sensors.append(s)
    app.by_id[sid] = s
