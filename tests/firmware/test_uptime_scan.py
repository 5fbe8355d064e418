"""Two settings the docs promise, under the real MicroPython: beat's uptime over weeks, and scan_ms."""

import itertools
import json

from fwtest import HERE, run_mp, run_scenario

DAY_MS = 24 * 3600 * 1000


def test_beat_uptime_keeps_counting_across_the_board_clock_wrap(fw_code):
    # ticks_ms wraps at 2**30 ms; a ticks_diff from boot turned negative after 6.2 days and wrapped at 12.4.
    p = run_mp(fw_code, HERE / "mp" / "uptime.py", timeout=60)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    ups = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(ups) == 15
    assert [b - a for a, b in itertools.pairwise(ups)] == [DAY_MS] * 14
    assert ups[-1] == 14 * DAY_MS


MUX_CFG = {
    "board": "ringo-x",
    "muxes": {"m0": {"sig": 6, "select": [2, 3, 4, 5]}},
    "sensors": [
        {"id": "cell-1", "kind": "presence", "mux": "m0", "channel": 0},
        {"id": "cup-1", "kind": "beam", "pin": 9},
    ],
}


def seen_after(fw_code, scan_ms):
    """A piece lands on cell-1 as a ball breaks cup-1; how long after the ball does the board see the piece?"""
    ops = ["freeze", "adv 50000", "sense"]  # a scan at T0
    ops += ["set 9 0", "mux 6 2,3,4,5 0 0", "adv 2000", "set 9 1", "sense"]  # T0+2 ms
    ops += ["adv 3000", "sense", "adv 20000", "sense", "adv 300000", "sense"]  # T0+5, T0+25, settled
    r = run_scenario(fw_code, dict(MUX_CFG, scan_ms=scan_ms), ops)
    (ball,) = r.events("cup-1")
    (piece,) = r.events("cell-1")
    return (piece[6] - ball[6]) & 0x3FFFFFFF


def test_multiplexers_are_scanned_every_scan_ms(fw_code):
    assert seen_after(fw_code, 1) == 2000  # every sensing cycle
    assert seen_after(fw_code, 5) == 5000
    assert seen_after(fw_code, 20) == 25000  # not before 20 ms have passed since the last scan
