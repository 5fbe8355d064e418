"""A board's hello must fit one frame with its MAC: the pin-map check counts the signature (an outer
wall's hello was 505 of 512 bytes signed, 487 unsigned), so a map whose signed hello would not fit is
refused before it is flashed, not refused by the bridge as `length` at every boot."""

import copy
import pathlib

from battlement.boards import hardware
from battlement.link import wire
from battlement.link.messages import Hello, up_frame

BOARDS = sorted((pathlib.Path(__file__).resolve().parents[2] / "hardware" / "boards").glob("*.json"))


def _widest_signed_hello(m):
    sensors = {s["id"]: s["kind"] for s in m["sensors"]}
    frame = up_frame(Hello(None, m["board"], 0xFFFFFFFF, hardware.FIRMWARE_VERSION, wire.VERSION,
                           m.get("role") or m.get("profile"), sensors, acked=wire.U32, msgid=wire.MSGID))
    # raises WireError (length) past MAX_FRAME; the table and board ids are in the MAC, not the frame
    return wire.sign(frame, bytes(16), "t" * wire.ID_MAX, m["board"], 0xFFFFFFFF)


def test_every_boards_hello_fits_one_frame_signed_and_the_check_is_never_short():
    largest = None
    for path in BOARDS:
        m = hardware.load_map(path)
        signed = _widest_signed_hello(m)
        listing = ",".join("%s:%s" % (s["id"], s["kind"]) for s in m["sensors"])
        counted = hardware.hello_bytes(m["board"], str(m.get("role") or m.get("profile")), listing)
        assert len(signed) <= counted <= wire.MAX_FRAME, path.name
        assert wire.verify(signed, bytes(16), "t" * wire.ID_MAX, m["board"], 0xFFFFFFFF)
        largest = max(largest or (0, ""), (len(signed), path.name))
    assert largest[1] == "outer-wall.json"  # the one this is about: 28 sensors on a wall


def test_a_map_whose_hello_fits_only_unsigned_is_refused_in_words():
    m = copy.deepcopy(hardware.load_map(next(p for p in BOARDS if p.name == "outer-wall.json")))
    # one more presence sensor: 487 + 12 bytes unsigned still fits, signed (+18) it does not
    m["sensors"].append(dict(m["sensors"][-1], id="s-28", channel=m["sensors"][-1]["channel"] + 1))
    unsigned = up_frame(Hello(None, m["board"], 0xFFFFFFFF, hardware.FIRMWARE_VERSION, wire.VERSION, m["role"],
                              {s["id"]: s["kind"] for s in m["sensors"]}, acked=wire.U32, msgid=wire.MSGID))
    assert len(unsigned) <= wire.MAX_FRAME < len(unsigned) + 18
    problems = hardware.check(m, "outer-wall.json")
    assert [p for p in problems if "hello" in p] == [
        "outer-wall.json: 29 sensors make the board's hello %d bytes signed, over the 512-byte frame limit: "
        "shorten the sensor ids or split the sensors across two boards" % (len(unsigned) + 18)], problems
