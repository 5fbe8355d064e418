"""The wiring details under a board's diagram: how one sensor of each kind, a mux and the strip are wired.

One panel per kind of sensor on the board (per pull, if sensors of a kind differ), one for the muxes and
one for the strip. The pull resistor is drawn as the firmware sets the pin: `"pull"` ("up" by default) and
`"active"` (0 by default) of the sensor, or, on a mux, of the first sensor on it (firmware/app.py sets the
SIG pin once, from that sensor). The parts' values are docs/hardware.md's.
"""

from __future__ import annotations

import functools

from battlement.boards.schematic import DATA, SELECT, SIG, Sheet, text_width

TITLE, NOTE, LEAD = 11, 9, 8  # font sizes: a panel's title, its notes, a wire's colour beside it


def pull_of(m: dict, s: dict) -> tuple[str, int]:
    """(pull, active) of the pin that reads sensor s, as the firmware configures it."""
    if "mux" in s:
        first = next(t for t in m["sensors"] if t.get("mux") == s["mux"])
        return first.get("pull", "up"), s.get("active", 0)
    return s.get("pull", "up"), s.get("active", 0)


def details(sh: Sheet, m: dict, top: float, width: float) -> None:
    """The panels, in rows as wide as the diagram above them."""
    kinds = {"beam": functools.partial(_beam, lower=any("lower" in s for s in m["sensors"])),
             "tilt": functools.partial(_tilt, mux=any(s.get("mux") and s["kind"] == "tilt" for s in m["sensors"])),
             "presence": functools.partial(_presence, mux=any(s.get("mux") and s["kind"] == "presence"
                                                             for s in m["sensors"]))}
    panels: dict[tuple, list[str]] = {}  # (panel, pull, active) -> the sensors wired so
    for s in m["sensors"]:
        panels.setdefault((kinds[s["kind"]], *pull_of(m, s)), []).append(s["id"])
    if m.get("muxes"):
        panels[(_mux, pull_of(m, next(s for s in m["sensors"] if "mux" in s))[0], 0)] = []
    if m.get("leds"):
        panels[(_strip, "", 0)] = []
    sh.text(0, top + 0.3, "Wiring details", size=14)
    x, y, row_h = 0.0, top + 1.2, 0.0
    for (fn, pull, active), ids in panels.items():
        # a kind wired two ways (a pin map's "pull" or "active" on some sensors): say which sensors are which
        who = "for " + ", ".join(ids[:4]) + (" and %d more" % (len(ids) - 4) if len(ids) > 4 else "") \
            if sum(k == fn for k, _p, _a in panels) > 1 else ""
        probe = Sheet()
        fn(probe, pull, active)
        x0, y0, x1, y1 = probe.ext
        if who:
            x1 = max(x1, x0 + text_width(who, NOTE))
            y1 += 0.6
        if x > 0 and x + x1 - x0 > width:
            x, y, row_h = 0.0, y + row_h + 1.0, 0.0
        with sh.origin(x - x0, y - y0):
            fn(sh, pull, active)
            if who:
                sh.text(x0, y1 - 0.25, who, size=NOTE)
        x += x1 - x0 + 1.4
        row_h = max(row_h, y1 - y0)


def _pin(sh: Sheet, x: float, y: float, pull: str, active: int, what: str = "GPIO input") -> None:
    """The board's end of a signal lead arriving at (x, y) from the left: the pin and its pull resistor."""
    up = pull == "up" or (pull == "none" and active == 0)
    if pull == "none":  # the firmware leaves the pin floating: the builder fits the resistor, outside the board
        label = "10 kΩ pull-%s, fitted" % ("up" if up else "down")
        xr = x + text_width(label) + 0.8
        x0, lx, anchor = xr + 0.6, xr - 0.4, "end"
    else:
        label = "internal pull-%s" % pull
        xr = x + 0.9
        x0, lx, anchor = x + 0.2, xr + 0.4, "start"
    yr = y - 1.3 if up else y + 1.3
    sh.line((x, y), (xr + 0.9, y))
    sh.dot(xr, y)
    sh.part("resistor", (xr, y), (xr, yr))
    if up:
        sh.supply(xr, yr, "3.3 V")
    else:
        sh.ground(xr, yr)
    wl = sh.text(lx, (y + yr) / 2, label, anchor=anchor)
    x1 = max(lx + wl if anchor == "start" else x0, xr + 1.05 + sh.text(xr + 1.05, y, what)) + 0.2
    yb0, yb1 = (yr - 0.9, y + 0.7) if up else (y - 0.7, yr + 0.9)
    sh.rect(x0, yb0, x1, yb1, dashed=True)
    sh.text(x1 - 0.12, yb1 - 0.3 if up else yb0 + 0.3, "board", size=LEAD, anchor="end")


def _head(sh: Sheet, title: str, note: str) -> None:
    sh.text(0, 0, title, size=TITLE)
    sh.text(0, 0.5, note, size=NOTE)


def _to_active(sh: Sheet, x: float, y: float, active: int) -> None:
    """Where a sensor pulls its pin when it triggers: GND when active low, 3.3 V when active high."""
    if active:
        sh.supply(x, y, "3.3 V")
    else:
        sh.ground(x, y)


def _beam(sh: Sheet, pull: str, active: int, lower: bool = False) -> None:
    _head(sh, "IR break-beam (Adafruit 2167): each beam" + (" and lower beam" if lower else ""),
          "beam broken: the receiver pulls the pin to %s, it reads %d" % ("3.3 V" if active else "GND", active))
    ex = 0.6
    sh.supply(ex, 1.9, "3.3 V")
    sh.part("resistor", (ex, 1.9), (ex, 3.1))
    sh.text(ex + 0.4, 2.5, "150 Ω *")
    sh.part("led", (ex, 3.1), (ex, 4.3))
    sh.ground(ex, 4.3)
    sh.text(ex, 5.3, "emitter", anchor="middle")
    sh.text(ex, 5.7, "red / black", size=LEAD, anchor="middle")
    rx0, rx1 = 2.8, 4.6
    sh.rect(rx0, 2.5, rx1, 3.9)
    sh.text((rx0 + rx1) / 2, 3.0, "IR", anchor="middle")
    sh.text((rx0 + rx1) / 2, 3.4, "receiver", anchor="middle")
    xm = (rx0 + rx1) / 2
    sh.line((xm, 2.5), (xm, 1.9))
    sh.supply(xm, 1.9, "3.3 V")
    sh.text(xm + 0.15, 2.2, "red", size=LEAD)
    sh.line((xm, 3.9), (xm, 4.3))
    sh.ground(xm, 4.3)
    sh.text(xm + 0.35, 4.2, "black", size=LEAD)
    sh.line((rx1, 3.2), (5.8, 3.2))
    sh.text(rx1 + 0.15, 2.95, "white", size=LEAD)
    _pin(sh, 5.8, 3.2, pull, active)
    sh.text(0, 6.3, "* only for a bare IR LED: the 2167's emitter runs straight from 3.3 V", size=NOTE)


def _tilt(sh: Sheet, pull: str, active: int, mux: bool = False) -> None:
    _head(sh, "tilt switch (SW-520D), or a microswitch", "closed: the pin reads %d" % active)
    sx, y = 0.8, 3.2
    far = y + 1.2 if not active else y - 1.2
    sh.part("switch", (sx, y), (sx, far))
    _to_active(sh, sx, far, active)
    sh.text(sx + 0.6, (y + far) / 2, "SW-520D")
    sh.line((sx, y), (3.4, y))
    _pin(sh, 3.4, y, pull, active, "GPIO input or mux channel" if mux else "GPIO input")
    if not mux:
        return
    sh.text(0, 6.0, "On a mux: the switch goes between a channel (C0-C15) and %s;"
            % ("3.3 V" if active else "GND"), size=NOTE)
    sh.text(0, 6.4, "the pull of the mux's SIG pin reaches the channel being read.", size=NOTE)


def _presence(sh: Sheet, pull: str, active: int, mux: bool = False) -> None:
    _head(sh, "presence: TCRT5000 module (LM393, D0 out)",
          "a piece 2-5 mm above: D0 pulls the pin to %d" % active)
    bx0, bx1 = 0.2, 2.4
    xm = (bx0 + bx1) / 2
    sh.rect(bx0, 2.5, bx1, 3.9)
    sh.text(xm, 3.0, "TCRT5000", anchor="middle")
    sh.text(xm, 3.4, "module", anchor="middle")
    sh.line((xm, 2.5), (xm, 1.9))
    sh.supply(xm, 1.9, "3.3 V")
    sh.text(xm + 0.15, 2.2, "VCC", size=LEAD)
    sh.line((xm, 3.9), (xm, 4.3))
    sh.ground(xm, 4.3)
    sh.text(xm + 0.35, 4.2, "GND", size=LEAD)
    sh.line((bx1, 3.2), (3.8, 3.2))
    sh.text(bx1 + 0.15, 2.95, "D0", size=LEAD)
    _pin(sh, 3.8, 3.2, pull, active, "GPIO input or mux channel" if mux else "GPIO input")
    sh.text(0, 5.6, "Set the module's potentiometer so a piece reads occupied and an empty cell does not.",
            size=NOTE)


def _mux(sh: Sheet, pull: str, _active: int) -> None:
    _head(sh, "CD74HC4067 multiplexer (each mux above)",
          "channel n is read while S3 S2 S1 S0 hold n in binary")
    bx0, bx1, top = 3.6, 5.8, 1.9
    rows = [2.6 + 0.6 * k for k in range(6)]  # S0-S3, SIG, EN
    sh.rect(bx0, top, bx1, rows[-1] + 0.6)
    xm = (bx0 + bx1) / 2
    sh.line((xm, top), (xm, top - 0.5))
    sh.supply(xm, top - 0.5, "3.3 V")
    sh.text(xm, top + 0.25, "VCC", anchor="middle")
    bottom = rows[-1] + 0.6
    sh.line((xm, bottom), (xm, bottom + 0.4))
    sh.ground(xm, bottom + 0.4)
    sh.text(xm, bottom - 0.25, "GND", anchor="middle")
    for k, name in enumerate(("S0", "S1", "S2", "S3", "SIG", "EN")):
        sh.text(bx0 + 0.15, rows[k], name)
        end = bx0 - (0.6 if name == "EN" else 0.9)
        sh.line((end, rows[k]), (bx0, rows[k]), color=SELECT if k < 4 else SIG if k == 4 else "black")
        if name != "EN":
            sh.dot(end, rows[k], hollow=True)
    sh.ground(bx0 - 0.6, rows[5])
    sh.text(bx0 - 1.2, (rows[1] + rows[2]) / 2, "select: 4 GPIO outputs", anchor="end")
    sh.text(bx0 - 1.2, rows[4], "GPIO input, pull-%s" % pull if pull != "none" else "GPIO input, 10 kΩ pull",
            anchor="end")
    for k, name in enumerate(("C0", "C1", "C2")):
        sh.text(bx1 - 0.15, rows[k], name, anchor="end")
        sh.line((bx1, rows[k]), (bx1 + 0.9, rows[k]))
        sh.dot(bx1 + 0.9, rows[k], hollow=True)
    sh.text(bx1 - 0.15, rows[4], "C15", anchor="end")
    sh.line((bx1, rows[4]), (bx1 + 0.9, rows[4]))
    sh.dot(bx1 + 0.9, rows[4], hollow=True)
    sh.text(bx1 + 0.45, rows[3], "...", anchor="middle")
    sh.text(bx1 + 1.05, rows[0], "a sensor's signal lead")
    sh.text(bx1 + 1.05, rows[4], "up to 16 sensors")


def _strip(sh: Sheet, _pull: str, _active: int) -> None:
    _head(sh, "NeoPixel strip (WS2812B) and its 5 V supply",
          "the board runs from its USB cable; the supply feeds the strip only, its − joined to GND")
    y = 3.55
    sh.text(0, y, "GPIO")
    sh.line((0.8, y), (1.9, y), color=DATA)
    lx0, lx1, ltop, lbot = 1.9, 4.1, 2.9, 4.3
    sh.rect(1.6, 1.3, 4.4, 6.6, dashed=True)
    sh.rect(lx0, ltop, lx1, lbot)
    xm = (lx0 + lx1) / 2
    sh.line((xm, ltop), (xm, ltop - 0.5))
    sh.supply(xm, ltop - 0.5, "5 V")
    sh.text(xm, ltop + 0.22, "VCC", size=LEAD, anchor="middle")
    sh.text(lx0 + 0.15, y, "1A", size=LEAD)
    sh.text(lx1 - 0.15, y, "1Y", size=LEAD, anchor="end")
    for gx, name in ((lx0 + 0.5, "1OE"), (lx1 - 0.5, "GND")):
        sh.text(gx, lbot - 0.22, name, size=LEAD, anchor="middle")
        sh.line((gx, lbot), (gx, lbot + 0.3))
        sh.ground(gx, lbot + 0.3)
    sh.text(xm, 5.55, "74AHCT125", anchor="middle")
    sh.text(xm, 5.95, "only if the first", size=LEAD, anchor="middle")
    sh.text(xm, 6.3, "pixel flickers", size=LEAD, anchor="middle")
    sh.part("resistor", (lx1, y), (6.2, y))
    sh.text(5.15, y - 0.5, "330 Ω", anchor="middle")
    sx0, sx1 = 6.2, 8.4
    sh.rect(sx0, 2.9, sx1, 5.5)
    sh.text(sx0 + 0.15, y, "DIN")
    y5, yg = y, y + 1.0
    sh.text(sx1 - 0.15, y5, "5V", anchor="end")
    sh.text(sx1 - 0.15, yg, "GND", anchor="end")
    sh.text((sx0 + sx1) / 2, 5.15, "WS2812B", anchor="middle")
    sh.line((sx1, y5), (10.0, y5), (10.0, y5 - 0.7))
    sh.supply(10.0, y5 - 0.7, "5 V supply")
    sh.line((sx1, yg), (10.0, yg))
    sh.ground(10.0, yg)
    sh.part("capacitor", (9.2, y5), (9.2, yg))
    sh.dot(9.2, y5)
    sh.dot(9.2, yg)
    sh.text(9.2, yg + 0.9, "1000 µF", anchor="middle")
    sh.text(0, 7.1, "Without the 74AHCT125 the GPIO goes straight to the 330 Ω resistor;", size=NOTE)
    sh.text(0, 7.5, "with it, its unused inputs 2A-4A go to GND.", size=NOTE)

