"""Wiring diagrams drawn from the pin maps: every pin of every board's map is in its drawing, each sensor
is labelled with its id and the game objects the table maps give it, and docs/ holds them all."""

import json
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest
from battlement.boards import wiring
from battlement.boards.hardware import load_map
from support.cli import battlement

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOARDS = sorted((ROOT / "hardware" / "boards").glob("*.json"))
DOCS = ROOT / "docs" / "wiring"


def texts(svg):
    """Every piece of text in the drawing."""
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")]


def pins_of(m):
    pins = set()
    for s in m["sensors"]:
        pins |= {s[k] for k in ("pin", "lower") if k in s}
    for mux in (m.get("muxes") or {}).values():
        pins |= {mux["sig"], *mux.get("select", [])}
    if m.get("leds"):
        pins.add(m["leds"]["pin"])
    return pins


def check(svg, m):
    words = texts(svg)
    shown = {int(x) for w in words for x in re.findall(r"^GP(\d+)$", w.strip())}
    assert shown == pins_of(m), "pins drawn %s, pins in the map %s" % (sorted(shown), sorted(pins_of(m)))
    joined = "\n".join(words)
    for s in m["sensors"]:
        assert re.search(r"(^|\n)%s %s" % (re.escape(s["id"]), s["kind"]), joined), s["id"]
        if "mux" in s:
            assert "C%d" % s["channel"] in words


@pytest.mark.parametrize("path", BOARDS, ids=[p.stem for p in BOARDS])
def test_every_pin_of_the_map_is_in_its_drawing(path):
    check(wiring.draw(str(path)), load_map(path))


def test_sensors_are_labelled_as_the_table_map_names_them():
    words = "\n".join(texts(wiring.draw(str(ROOT / "hardware" / "boards" / "red-kingdom.json"))))
    assert "tower-a1 beam: red.A1" in words and "tilt-a1 tilt: red.A1.tilt" in words
    assert "tower-a1 lower beam" in words and "mux tilts" in words


@pytest.mark.parametrize("path", BOARDS, ids=[p.stem for p in BOARDS])
def test_docs_show_each_boards_drawing(path):
    committed = DOCS / (path.stem + ".svg")
    assert committed.is_file(), "docs/wiring/%s.svg is missing: battlement hardware draw %s --out docs/wiring/" % (
        path.stem, path.relative_to(ROOT))
    check(committed.read_text(), load_map(path))
    assert ("wiring/%s.svg" % path.stem) in (ROOT / "docs" / "hardware.md").read_text()


def test_the_command_writes_svgs(tmp_path):
    code, _out, err = battlement("hardware", "draw", str(BOARDS[0]), str(BOARDS[1]), "--out", str(tmp_path))
    assert code == 0, err
    assert (tmp_path / (BOARDS[0].stem + ".svg")).is_file() and (tmp_path / (BOARDS[1].stem + ".svg")).is_file()


KIND_DETAIL = {"beam": "IR break-beam", "tilt": "tilt switch", "presence": "presence: TCRT5000"}


@pytest.mark.parametrize("path", BOARDS, ids=[p.stem for p in BOARDS])
def test_power_and_one_wiring_detail_per_sensor_kind(path):
    """3.3 V and GND for the board, 5 V for a strip, and how each kind of sensor, the muxes and the strip
    are wired, with the parts' values that docs/hardware.md gives."""
    m = load_map(path)
    words = texts(wiring.draw(str(path)))
    joined = "\n".join(words)
    assert "3.3 V" in words and "GND" in words
    for kind in {s["kind"] for s in m["sensors"]}:
        assert KIND_DETAIL[kind] in joined, kind
        assert "internal pull-up" in words, "the firmware's default: the pin's own pull-up"
    if m.get("muxes"):
        assert "CD74HC4067" in joined and "EN" in words and "SIG" in words
    if m.get("leds"):
        assert "5 V" in words and "330 Ω" in words and "1000 µF" in words and "74AHCT125" in words
    doc = (ROOT / "docs" / "hardware.md").read_text()
    for value in set(re.findall(r"\d+ (?:k?Ω|µF)", joined)):
        assert value in doc, "%s is drawn but docs/hardware.md does not say it" % value


def test_the_drawing_shows_the_pull_the_pin_map_sets(tmp_path):
    """A tilt switch on a pulled-down pin closes to 3.3 V; a mux whose first sensor says "pull": "none"
    needs a resistor fitted by the builder: the drawing shows what the firmware will expect."""
    orcs = json.loads((ROOT / "hardware" / "boards" / "orcs.json").read_text())
    for s in orcs["sensors"]:
        s.update(pull="down", active=1)
    path = tmp_path / "orcs.json"
    path.write_text(json.dumps(orcs))
    words = texts(wiring.draw(str(path)))
    assert "internal pull-down" in words and "internal pull-up" not in words
    assert "closed: the pin reads 1" in "\n".join(words)

    ringo = json.loads((ROOT / "hardware" / "boards" / "ringo-a.json").read_text())
    next(s for s in ringo["sensors"] if s.get("mux") == "m0")["pull"] = "none"
    path = tmp_path / "ringo-a.json"
    path.write_text(json.dumps(ringo))
    joined = "\n".join(texts(wiring.draw(str(path))))
    assert "10 kΩ pull-up, fitted" in joined and "internal pull-up" in joined  # mux m1 keeps the default
