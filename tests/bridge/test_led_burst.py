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


def test_a_pixel_lit_after_the_whole_strip_in_one_burst_stays_lit(tmp_path):
    pair = PtyPair(tmp_path / "pty").start()
    fw = FirmwareProcess(BOARD, pinmap=str(ROOT / "hardware" / "boards" / (BOARD + ".json")), port=pair.b)

    async def go():
        async with running(Bridge([for_game("plingpong")], str(tmp_path / "j.sqlite"), serial=[pair.a])) as b:
            fw.start()
            await until(lambda: (None, BOARD) in b.transports[0].boards, timeout=30, what="the board's hello")
            table = b.sessions["plingpong"].table
            handle = b.handle

            def burst(msg):
                # While the pump holds this batch's commands: pixel 5 green, then the whole strip red,
                # then pixel 5 blue (e.g. a flash of the strip, then the cup it was about).
                handle(msg)
                if isinstance(msg, Event) and msg.sensor == "cup-black":
                    send = b._sender()
                    send(Led(BOARD, "5", "solid", 0x00FF00, 0, table))
                    send(Led(BOARD, "all", "solid", 0xFF0000, 0, table))
                    send(Led(BOARD, "5", "solid", 0x0000FF, 0, table))

            b.handle = burst
            fw.drop_ball("cup-black", width_ms=10)
            want = [RED] * 4 + [BLUE] + [RED] * 8

            def shown(px):
                return px[1:14] == want

            try:
                await asyncio.get_running_loop().run_in_executor(None, fw.wait_pixels, shown, 30)
            except TimeoutError:
                raise AssertionError("the strip shows %s, not red with pixel 5 blue" % fw.pixels()[1:14]) from None

    try:
        asyncio.run(go())
    finally:
        fw.stop()
        pair.close()


def test_a_light_sent_before_is_sent_again_once_an_overlapping_target_covered_it(tmp_path):
    # Defect: the bridge skips a command whose LED already shows it, and remembered that per target alone. A pixel
    # lit blue, then the whole strip red, then the pixel blue again: the last command was skipped ("5" still said
    # blue), and the pixel stayed red. The same the other way round: the strip red, a pixel blue, the strip red
    # again was skipped, and the pixel stayed blue.
    pair = PtyPair(tmp_path / "pty").start()
    fw = FirmwareProcess(BOARD, pinmap=str(ROOT / "hardware" / "boards" / (BOARD + ".json")), port=pair.b)
    steps = [
        [("5", 0x0000FF)],
        [("all", 0xFF0000), ("5", 0x0000FF)],
        [("all", 0xFF0000)],
    ]
    wants = [None, [RED] * 4 + [BLUE] + [RED] * 8, [RED] * 13]

    async def go():
        async with running(Bridge([for_game("plingpong")], str(tmp_path / "j.sqlite"), serial=[pair.a])) as b:
            fw.start()
            await until(lambda: (None, BOARD) in b.transports[0].boards, timeout=30, what="the board's hello")
            table = b.sessions["plingpong"].table
            handle = b.handle
            todo = list(steps)

            def burst(msg):
                handle(msg)
                if isinstance(msg, Event) and msg.sensor == "cup-black" and todo:
                    send = b._sender()
                    for target, rgb in todo.pop(0):
                        send(Led(BOARD, target, "solid", rgb, 0, table))

            b.handle = burst
            for want in wants:
                fw.drop_ball("cup-black", width_ms=10)
                if want is None:
                    await until(lambda: fw.pixels()[5:6] == [BLUE], timeout=30, what="pixel 5 blue")
                    continue
                try:
                    await asyncio.get_running_loop().run_in_executor(
                        None, fw.wait_pixels, lambda px, w=want: px[1:14] == w, 30)
                except TimeoutError:
                    raise AssertionError("the strip shows %s, not %s" % (fw.pixels()[1:14], want)) from None

    try:
        asyncio.run(go())
    finally:
        fw.stop()
