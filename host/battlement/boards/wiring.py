"""`battlement hardware draw BOARD.json`: a wiring diagram of a board, drawn from its pin map.

The board is a chip with its GPIOs as pins: every sensor on the left (a beam's lower beam beside it),
each multiplexer and the LED strip on the right, wired to their pins. Each sensor is labelled with its
id, its kind and the game objects the table maps give it ("tower-a1 beam: red.A1"), so a builder reads
the diagram as the table map names things. Drawn with schemdraw (SVG backend, no matplotlib).
"""

from __future__ import annotations

import pathlib
import tomllib

from battlement.boards.hardware import check_file, load_profile

TABLES = pathlib.Path(__file__).resolve().parents[3] / "hardware" / "tables"


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


def draw(map_path: str, tables_dir: pathlib.Path = TABLES) -> str:
    """The SVG text of the board's wiring diagram."""
    import schemdraw
    import schemdraw.elements as elm

    schemdraw.use("svg")
    m = check_file(map_path)
    prof = load_profile(m["profile"])
    objs, led_objs = objects_of(m["board"], tables_dir)
    left: list[tuple[int, str]] = []  # (gpio, label of what is on it)
    for s in m["sensors"]:
        if "mux" in s:
            continue
        label = "%s %s" % (s["id"], s["kind"])
        if objs.get(s["id"]):
            label += ": " + _named(objs[s["id"]])
        left.append((s["pin"], label))
        if "lower" in s:
            left.append((s["lower"], "%s lower beam" % s["id"]))
    right: list[tuple[int, str]] = []
    muxes = m.get("muxes") or {}
    for name, mux in muxes.items():
        right.append((mux["sig"], "mux %s SIG" % name))
        right += [(p, "mux %s S%d" % (name, i)) for i, p in enumerate(mux.get("select", []))]
    leds = m.get("leds")
    if leds:
        right.append((leds["pin"], "LED strip DIN"))

    pins = [elm.IcPin(name="GP%d" % p, side="left", anchorname="L%d" % i) for i, (p, _) in enumerate(left)]
    pins += [elm.IcPin(name="GP%d" % p, side="right", anchorname="R%d" % i) for i, (p, _) in enumerate(right)]
    with schemdraw.Drawing(show=False, fontsize=11) as d:
        d.config(unit=2)
        chip = elm.Ic(pins=pins, pinspacing=0.7, edgepadW=1.2, edgepadH=0.6,
                      label="%s\n%s" % (m["board"], prof["title"].split(" (")[0]), lblsize=13)
        d += chip
        for i, (_p, label) in enumerate(left):
            d += elm.Line().at(getattr(chip, "L%d" % i)).left().length(1.2)
            d += elm.Dot(open=True).label(label, loc="left", fontsize=10)
        x_right = chip.get_bbox().xmax + 5 if pins else 5
        y = chip.get_bbox().ymax
        for name, mux in muxes.items():
            chans = sorted((s for s in m["sensors"] if s.get("mux") == name), key=lambda s: s["channel"])
            mpins = [elm.IcPin(name="SIG", side="left", anchorname="SIG")]
            mpins += [elm.IcPin(name="S%d" % i, side="left", anchorname="S%d" % i) for i in range(len(mux.get("select", [])))]
            mpins += [elm.IcPin(name="C%d" % s["channel"], side="right", anchorname="C%d" % s["channel"]) for s in chans]
            box = elm.Ic(pins=mpins, pinspacing=0.6, edgepadW=1.0,
                         label="mux %s\n%d channels" % (name, 2 ** len(mux.get("select", []))), lblsize=11)
            d += box.at((x_right, y)).anchor("SIG")
            for i, (p, label) in enumerate(right):
                if label == "mux %s SIG" % name:
                    d += elm.Wire("-|").at(getattr(chip, "R%d" % i)).to(box.SIG).color("#1f5fa8")
                for k in range(len(mux.get("select", []))):
                    if label == "mux %s S%d" % (name, k):
                        d += elm.Wire("-|").at(getattr(chip, "R%d" % i)).to(getattr(box, "S%d" % k)).color("#777777")
            for s in chans:
                label = "%s %s" % (s["id"], s["kind"])
                if objs.get(s["id"]):
                    label += ": " + _named(objs[s["id"]])
                d += elm.Line().at(getattr(box, "C%d" % s["channel"])).right().length(1.0)
                d += elm.Dot(open=True).label(label, loc="right", fontsize=10)
            y = box.get_bbox().ymin - 1.5
        if leds:
            groups = leds.get("groups") or {}
            lines = ["LED strip: %d pixels" % leds["count"]]
            if "status" in leds:
                lines.append("pixel %d: board status" % leds["status"])
            for g, px in sorted(groups.items(), key=lambda kv: _first(kv[1])):
                if isinstance(px, str):  # a range, "1-6"
                    lines.append("%s pixels: %s" % (g, px))
                else:
                    lines.append("%s %s: %s" % (g, "pixel" if len(px) == 1 else "pixels",
                                                ", ".join(str(p) for p in px[:4]) + (" ..." if len(px) > 4 else "")))
                if led_objs.get(g):
                    lines[-1] += " (%s)" % _named(led_objs[g], 2)
            shown = lines[:14] + (["... %d more groups" % (len(lines) - 14)] if len(lines) > 14 else [])
            strip = elm.Ic(pins=[elm.IcPin(name="DIN", side="left", anchorname="DIN")], size=(6, 0.45 * len(shown) + 0.6),
                           label="\n".join(shown), lblsize=9)
            d += strip.at((x_right, y)).anchor("DIN")
            for i, (_p, label) in enumerate(right):
                if label == "LED strip DIN":
                    d += elm.Wire("-|").at(getattr(chip, "R%d" % i)).to(strip.DIN).color("#b03020")
    data = d.get_imagedata("svg")
    return data.decode() if isinstance(data, bytes) else data
