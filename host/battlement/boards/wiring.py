"""`battlement hardware draw BOARD.json`: a wiring diagram of a board, drawn from its pin map.

The board is a chip with its GPIOs and its 3.3 V and GND pins: every sensor on the left (a beam's lower
beam beside it), each multiplexer and the LED strip on the right, their pins level with the board's so
every wire runs straight across. Each sensor is labelled with its id, its kind and the game objects the
table maps give it ("tower-a1 beam: red.A1"), so a builder reads the diagram as the table map names
things. Under it, how each kind of sensor, a mux and the strip are wired (wiring_details.py). Laid out
on a Sheet (schematic.py) that knows how much room every label takes: no label covers another or falls
off the drawing. Drawn with schemdraw (SVG backend, no matplotlib).
"""

from __future__ import annotations

import os
import pathlib
import tomllib

from battlement.boards.hardware import check_file, load_profile
from battlement.boards.schematic import SELECT, SIG, Sheet, text_width
from battlement.boards.wiring_details import details

TABLES = pathlib.Path(__file__).resolve().parents[3] / "hardware" / "tables"
P = 0.6  # one row: a pin, a sensor, a line of text
STUB = 1.6  # a sensor's lead, from its open circle to the board
CHANNEL = 4.0  # between the board and a mux or the strip: the strip's resistor, capacitor and supply
POWER = {"pico-w": ("3V3(OUT)", "GND"), "esp32-s3-devkitc-1": ("3V3", "GND")}  # the pins that feed the sensors


def objects_of(board: str, tables_dir: pathlib.Path = TABLES) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(sensor id -> objects, LED group -> objects) that the table maps give this board."""
    sensors: dict[str, list[str]] = {}
    leds: dict[str, list[str]] = {}
    for path in sorted(tables_dir.glob("*.toml")) if tables_dir.is_dir() else []:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue  # `hardware check` and `run` say what is wrong with a map; a drawing just leaves it out
        for name, obj in (data.get("objects") or {}).items():
            if not isinstance(obj, dict):
                continue
            for key, out in (("sensor", sensors), ("led", leds)):
                where = obj.get(key)
                if isinstance(where, str) and where.split("/", 1)[0] == board and "/" in where:
                    names = out.setdefault(where.split("/", 1)[1], [])
                    if name not in names:
                        names.append(name)
    return sensors, leds


def _named(ids: list[str], limit: int = 3) -> str:
    return ", ".join(ids[:limit]) + (" +%d" % (len(ids) - limit) if len(ids) > limit else "")


def _first(pixels) -> int:
    """The first pixel of a group: a list of pixels, or a range written "1-6"."""
    if isinstance(pixels, str):
        head = pixels.split("-", 1)[0].strip()
        return int(head) if head.isdigit() else 0
    return pixels[0] if pixels and isinstance(pixels[0], int) else 0


def _label(s: dict, objs: dict[str, list[str]]) -> str:
    """"tower-a1 beam: red.A1": the sensor as the pin map and the table maps name it."""
    label = "%s %s" % (s["id"], s["kind"])
    return label + (": " + _named(objs[s["id"]]) if objs.get(s["id"]) else "")


def _pixel_lines(leds: dict, led_objs: dict[str, list[str]]) -> list[str]:
    lines = ["pixel %d: board status" % leds["status"]] if "status" in leds else []
    for g, px in sorted((leds.get("groups") or {}).items(), key=lambda kv: _first(kv[1])):
        if isinstance(px, str):  # a range, "1-6"
            line = "%s: pixels %s" % (g, px)
        else:
            line = "%s: %s %s" % (g, "pixel" if len(px) == 1 else "pixels",
                                  ", ".join(str(p) for p in px[:4]) + (" ..." if len(px) > 4 else ""))
        lines.append(line + (" (%s)" % _named(led_objs[g], 2) if led_objs.get(g) else ""))
    return lines


def draw(map_path: str, tables_dir: pathlib.Path = TABLES) -> str:
    """The SVG text of the board's wiring diagram."""
    import schemdraw

    schemdraw.use("svg")
    m = check_file(map_path)
    prof = load_profile(m["profile"])
    objs, led_objs = objects_of(m["board"], tables_dir)
    sheet = Sheet(schemdraw.Drawing(show=False))
    sheet.text(0, 0.3, "%s: %s" % (m["board"], prof["title"].split(" (")[0]), size=14)
    grounds = "the board's, the sensors'" + (", the muxes'" if m.get("muxes") else "")
    grounds += " and the 5 V supply's." if m.get("leds") else "."
    notes = ["Pin map %s. Each open circle is a sensor's signal lead: wire its 3.3 V and GND leads as the"
             % os.path.basename(map_path),
             "detail below shows. Every ground symbol is the same GND: join %s" % grounds]
    for i, line in enumerate(notes):
        sheet.text(0, 0.95 + 0.45 * i, line, size=9)
    _board(sheet, m, prof, objs, led_objs, top=3.2)
    details(sheet, m, top=sheet.bottom() + 1.0, width=max(sheet.width(), 30.0))
    return sheet.finish()


def _board(sh: Sheet, m: dict, prof: dict, objs: dict, led_objs: dict, top: float) -> None:
    """The board as a chip: sensors on the left, each mux and the strip on the right, wired straight across."""
    left: list[tuple[int, str]] = []  # (gpio, what is on it)
    for s in m["sensors"]:
        if "mux" not in s:
            left.append((s["pin"], _label(s, objs)))
            if "lower" in s:
                left.append((s["lower"], "%s lower beam" % s["id"]))
    v33, gnd = POWER.get(prof["name"], ("3V3", "GND"))
    xdot = max((text_width(lab) for _p, lab in left), default=0.0) + 0.3
    xc0 = max(xdot + STUB, 2.0)
    muxes = m.get("muxes") or {}
    right_names = ["GP%d" % p for mux in muxes.values() for p in [mux["sig"], *mux.get("select", [])]]
    right_names += ["GP%d" % m["leds"]["pin"]] if m.get("leds") else []
    name = prof["title"].split(" (")[0]
    wide = max((text_width(n) for n in ["GP%d" % p for p, _ in left] + [v33, gnd]), default=0.0)
    wide += max((text_width(n) for n in right_names), default=0.0)
    xc1 = xc0 + max(text_width(name, 11) + 0.6, wide + 1.0)
    y33 = top + 1.1
    row0 = y33 + 2 * P
    # the right-hand blocks first: the chip's right pins sit level with the pins they are wired to
    pins: list[tuple[float, str]] = []
    y, xb = row0, xc1 + CHANNEL
    for mname, mux in muxes.items():
        chans = sorted((s for s in m["sensors"] if s.get("mux") == mname), key=lambda s: s["channel"])
        y = _mux(sh, xc1, xb, y, mname, mux, [(s["channel"], _label(s, objs)) for s in chans], pins)
    if m.get("leds"):
        _strip(sh, xc1, xb, y, m["leds"], _pixel_lines(m["leds"], led_objs), pins)
    ygnd = max(row0 + (len(left) + 1) * P, max((py for py, _n in pins), default=row0) + P)
    sh.rect(xc0, top, xc1, ygnd + P)
    sh.text((xc0 + xc1) / 2, top + 0.45, name, size=11, anchor="middle")
    for i, (pin, label) in enumerate(left):
        yy = row0 + i * P
        sh.line((xdot, yy), (xc0, yy))
        sh.dot(xdot, yy, hollow=True)
        sh.text(xdot - 0.15, yy, label, anchor="end")
        sh.text(xc0 + 0.15, yy, "GP%d" % pin)
    for yy, pin_name in pins:
        sh.text(xc1 - 0.15, yy, pin_name, anchor="end")
    sh.line((xc0 - 1.0, y33), (xc0, y33))
    sh.supply(xc0 - 1.0, y33, "3.3 V")
    sh.text(xc0 + 0.15, y33, v33)
    sh.line((xc0 - 1.0, ygnd), (xc0, ygnd))
    sh.ground(xc0 - 1.0, ygnd)
    sh.text(xc0 + 0.15, ygnd, gnd)


def _mux(sh: Sheet, xc1: float, x: float, y: float, name: str, mux: dict, chans: list[tuple[int, str]],
         pins: list[tuple[float, str]]) -> float:
    """A CD74HC4067 whose SIG and select pins are level with the board's; returns the next block's first row."""
    lefts = [("SIG", mux["sig"], SIG)] + [("S%d" % i, p, SELECT) for i, p in enumerate(mux.get("select", []))]
    yv = y + (len(lefts) + 1) * P  # the supply flag needs the room of a row above it
    yg, ye = yv + P, yv + 2 * P
    last = max(ye, y + (len(chans) - 1) * P)
    bw = max(text_width(n) for n, _p, _c in lefts + [("VCC", 0, "")]) + text_width("C15") + 0.8
    sh.text(x, y - 0.8 * P - 0.35, "mux %s: CD74HC4067, %d channels" % (name, 2 ** (len(lefts) - 1)), size=11)
    sh.rect(x, y - 0.8 * P, x + bw, last + 0.8 * P)
    for k, (pname, gpio, colour) in enumerate(lefts):
        sh.line((xc1, y + k * P), (x, y + k * P), color=colour)
        sh.text(x + 0.15, y + k * P, pname)
        pins.append((y + k * P, "GP%d" % gpio))
    sh.line((x - 0.9, yv), (x, yv))
    sh.supply(x - 0.9, yv, "3.3 V")
    sh.line((x, yg), (x - 0.9, yg), (x - 0.9, ye), (x, ye))
    sh.ground(x - 0.9, ye)
    for k, pname in enumerate(("VCC", "GND", "EN")):
        sh.text(x + 0.15, yv + k * P, pname)
    for k, (ch, label) in enumerate(chans):
        yy = y + k * P
        sh.line((x + bw, yy), (x + bw + 1.0, yy))
        sh.dot(x + bw + 1.0, yy, hollow=True)
        sh.text(x + bw + 1.15, yy, label)
        sh.text(x + bw - 0.15, yy, "C%d" % ch, anchor="end")
    return max(last + 0.8 * P, ye + 0.7) + 2.0


def _strip(sh: Sheet, xc1: float, x: float, y: float, leds: dict, lines: list[str],
           pins: list[tuple[float, str]]) -> None:
    """The strip: data through its series resistor, 5 V and GND from the supply, the capacitor across them."""
    y5 = y + 3 * P
    yg = y5 + 3 * P
    bw = text_width("DIN") + 0.6
    amps = leds["count"] * 0.06
    sh.text(x, y - 0.8 * P - 0.35, "LED strip: %d WS2812B pixels; 5 V supply of %.1f A or more (60 mA a pixel)"
            % (leds["count"], amps), size=11)
    sh.rect(x, y - 0.8 * P, x + bw, yg + 0.8 * P)
    sh.part("resistor", (xc1, y), (x, y))
    sh.text((xc1 + x) / 2, y - 0.5, "330 Ω", anchor="middle")
    pins.append((y, "GP%d" % leds["pin"]))
    sh.line((x - 3.0, y5), (x, y5))
    sh.supply(x - 3.0, y5, "5 V")
    sh.line((x - 3.0, yg), (x, yg))
    sh.ground(x - 3.0, yg)
    sh.part("capacitor", (x - 1.2, y5), (x - 1.2, yg))
    sh.dot(x - 1.2, y5)
    sh.dot(x - 1.2, yg)
    sh.text(x - 1.6, (y5 + yg) / 2, "1000 µF", anchor="end")
    for yy, pname in ((y, "DIN"), (y5, "5V"), (yg, "GND")):
        sh.text(x + 0.15, yy, pname)
    # which pixels light what, in columns beside the strip
    per = max(7, -(-len(lines) // 3))
    cx = x + bw + 0.8
    for c in range(0, len(lines), per):
        col = lines[c:c + per]
        for k, line in enumerate(col):
            sh.text(cx, y - 0.4 * P + k * P, line, size=9)
        cx += max(text_width(line, 9) for line in col) + 0.6
