"""A burst of LED commands for overlapping targets reaches the board in the order they were made.

The event pump keeps only the last command per (table, board, target) of a burst. A whole-strip
target ("all") and one of its pixels overlap on the board (firmware/leds.py), so the order of the
survivors decides what the strip shows: a pixel lit after the strip was set must stay lit. Here
the real firmware under MicroPython on a pty shows what it was told.
"""

import asyncio
import pathlib

from battlement.bridge import Bridge
from battlement.link.messages import Event, Led
from battlement.sim.firmware import FirmwareProcess
from battlement.table.maps import for_game
from support.aio import running, until
from support.procs import PtyPair

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOARD = "plingpong-1"  # 14 pixels: 0 the status pixel, "all" = 1-13
RED, GREEN, BLUE = (0xFF, 0, 0), (0, 0xFF, 0), (0, 0, 0xFF)


def _on_a_board(tmp_path, bursts, check):
    """A plingpong bridge and its board's real firmware: each ball into cup-black sends the next of bursts
    (a list of (target, rgb)) while the pump holds that batch's commands; check(fw) is awaited meanwhile."""
    pair = PtyPair(tmp_path / "pty").start()
    fw = FirmwareProcess(BOARD, pinmap=str(ROOT / "hardware" / "boards" / (BOARD + ".json")), port=pair.b)
    todo = list(bursts)

    async def go():
        async with running(Bridge([for_game("plingpong")], str(tmp_path / "j.sqlite"), serial=[pair.a])) as b:
            fw.start()
            await until(lambda: (None, BOARD) in b.transports[0].boards, timeout=30, what="the board's hello")
            table = b.sessions["plingpong"].table
            handle = b.handle

            def burst(msg):
                handle(msg)
                if isinstance(msg, Event) and msg.sensor == "cup-black" and todo:
                    send = b._sender()
                    for target, rgb in todo.pop(0):
                        send(Led(BOARD, target, "solid", rgb, 0, table))

            b.handle = burst
            await check(fw)

    try:
        asyncio.run(go())
    finally:
        fw.stop()


async def _shows(fw, want):
    try:
        await asyncio.get_running_loop().run_in_executor(None, fw.wait_pixels, lambda px: px[1:14] == want, 30)
    except TimeoutError:
        raise AssertionError("the strip shows %s, not %s" % (fw.pixels()[1:14], want)) from None


def test_a_pixel_lit_after_the_whole_strip_in_one_burst_stays_lit(tmp_path):
    # In one burst: pixel 5 green, then the whole strip red, then pixel 5 blue (e.g. a flash of the strip,
    # then the cup it was about).
    async def check(fw):
        fw.drop_ball("cup-black", width_ms=10)
        await _shows(fw, [RED] * 4 + [BLUE] + [RED] * 8)

    _on_a_board(tmp_path, [[("5", 0x00FF00), ("all", 0xFF0000), ("5", 0x0000FF)]], check)


def test_a_light_sent_before_is_sent_again_once_an_overlapping_target_covered_it(tmp_path):
    # Defect: the bridge skips a command whose LED already shows it, and remembered that per target alone. A pixel
    # lit blue, then the whole strip red, then the pixel blue again: the last command was skipped ("5" still said
    # blue), and the pixel stayed red. The same the other way round: the strip red, a pixel blue, the strip red
    # again was skipped, and the pixel stayed blue.
    async def check(fw):
        fw.drop_ball("cup-black", width_ms=10)
        await until(lambda: fw.pixels()[5:6] == [BLUE], timeout=30, what="pixel 5 blue")
        for want in ([RED] * 4 + [BLUE] + [RED] * 8, [RED] * 13):
            fw.drop_ball("cup-black", width_ms=10)
            await _shows(fw, want)

    _on_a_board(tmp_path, [[("5", 0x0000FF)], [("all", 0xFF0000), ("5", 0x0000FF)], [("all", 0xFF0000)]], check)
